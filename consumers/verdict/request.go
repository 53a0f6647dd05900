package verdict

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/events"
)

// Request is one model call of the analysis, ready for an llm.Request:
// Instructions as the instructions, Input as the one user message, and
// the structured output SchemaName with Schema.
type Request struct {
	Prompt       prompts.Prompt
	Instructions string
	Input        string
	SchemaName   string
	Schema       *schema.Schema
}

// Fence draws the pair of fence lines for the untrusted contents of one
// request (prompts.Fence; tests pass a fixed one).
type Fence func(contents ...string) (open, close string)

// ExtractionRequest is the extraction call for text (at most
// events.MaxAnalysisTextRunes characters) with the current verdict-extract
// prompt, dated now. fence nil is prompts.Fence.
func ExtractionRequest(text string, now time.Time, fence Fence) (Request, error) {
	if strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > events.MaxAnalysisTextRunes {
		return Request{}, fmt.Errorf("verdict: the text must have 1 to %d characters", events.MaxAnalysisTextRunes)
	}
	if fence == nil {
		fence = prompts.Fence
	}
	open, closeLine := fence(text)
	p, err := prompts.Default().Get(prompts.NameVerdictExtract)
	if err != nil {
		return Request{}, fmt.Errorf("verdict: %w", err)
	}
	instructions, err := p.Render(prompts.StandardVars(open, closeLine, now))
	if err != nil {
		return Request{}, fmt.Errorf("verdict: %w", err)
	}
	return Request{Prompt: p, Instructions: instructions, Input: prompts.Section(prompts.HeadingText, open, closeLine, text),
		SchemaName: ExtractionSchemaName, Schema: ExtractionOutputSchema()}, nil
}
