package verdict

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/events"
)

// Request is one model call of the analysis, ready for an llm.Request
// (LLM): Instructions as the instructions, Input as the one user message,
// and the structured output SchemaName with Schema.
type Request struct {
	Prompt       prompts.Prompt
	Instructions string
	Input        string
	SchemaName   string
	Schema       *schema.Schema
}

// LLM is the request as a call of model, with the reasoning effort and
// metadata given (each may be empty).
func (r Request) LLM(model, reasoningEffort string, metadata map[string]string) llm.Request {
	return llm.Request{Model: model, Instructions: r.Instructions, Input: []llm.Message{llm.UserText(r.Input)},
		ReasoningEffort: reasoningEffort, OutputSchema: &llm.OutputSchema{Name: r.SchemaName, Schema: r.Schema},
		Metadata: metadata}
}

// Fence draws the pair of fence lines for the untrusted contents of one
// request (prompts.Fence; tests pass a fixed one).
type Fence func(contents ...string) (open, closing string)

// ErrText refuses a text with nothing to analyse, or too much.
var ErrText = fmt.Errorf("verdict: the text must have 1 to %d characters", events.MaxAnalysisTextRunes)

// ExtractionRequest is the extraction call for text (1 to
// events.MaxAnalysisTextRunes characters, not all white space; else
// ErrText) with the verdict-extract prompt of reg (nil: prompts.Default()),
// dated now. fence nil is prompts.Fence.
func ExtractionRequest(reg *prompts.Registry, text string, now time.Time, fence Fence) (Request, error) {
	if strings.TrimSpace(text) == "" || utf8.RuneCountInString(text) > events.MaxAnalysisTextRunes {
		return Request{}, ErrText
	}
	if reg == nil {
		reg = prompts.Default()
	}
	if fence == nil {
		fence = prompts.Fence
	}
	open, closeLine := fence(text)
	p, err := reg.Get(prompts.NameVerdictExtract)
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

// SummaryRequest is the summary call with the verdict-summary prompt of
// reg (nil: prompts.Default()), dated now: the analysed text, the claims'
// verdicts and the search results they were judged on (both JSON), each a
// fenced section of the input. fence nil is prompts.Fence.
func SummaryRequest(reg *prompts.Registry, text, claimVerdicts, searchResults string, now time.Time, fence Fence) (Request, error) {
	if reg == nil {
		reg = prompts.Default()
	}
	if fence == nil {
		fence = prompts.Fence
	}
	open, closeLine := fence(text, claimVerdicts, searchResults)
	p, err := reg.Get(prompts.NameVerdictSummary)
	if err != nil {
		return Request{}, fmt.Errorf("verdict: %w", err)
	}
	instructions, err := p.Render(prompts.StandardVars(open, closeLine, now))
	if err != nil {
		return Request{}, fmt.Errorf("verdict: %w", err)
	}
	input := prompts.Section(prompts.HeadingText, open, closeLine, text) + "\n" +
		prompts.Section(prompts.HeadingClaimVerdicts, open, closeLine, claimVerdicts) + "\n" +
		prompts.Section(prompts.HeadingSearchResults, open, closeLine, searchResults)
	return Request{Prompt: p, Instructions: instructions, Input: input, SchemaName: SummarySchemaName,
		Schema: SummaryOutputSchema()}, nil
}
