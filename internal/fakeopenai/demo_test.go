package fakeopenai_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/fakeopenai"
)

// The demonstration fake submits the first sentence with a year, as the
// worker sends posts (fenced under the post heading).
func TestDemoSubmitsTheFirstSentenceWithAYear(t *testing.T) {
	s := fakeopenai.NewForTest(t)
	s.Demo()
	post := "Hello there. Fun fact: the Eiffel Tower was completed in 1925 for the World Fair. Bye."
	open, closeLine := prompts.Fence(post)
	req := llm.Request{Model: "gpt-5", Instructions: "x", ReasoningSummary: "auto", WebSearch: &llm.WebSearch{},
		Tools: []llm.Tool{tools.SubmitCorrection()},
		Input: []llm.Message{llm.UserText(prompts.Section(prompts.HeadingPost, open, closeLine, post))}}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), llm.Credentials{BaseURL: s.URL, APIKey: "sk-x"}, req)
	require.NoError(t, err)
	calls := res.ToolCalls()
	require.Len(t, calls, 1, "%s", res.RawResponse)
	require.Contains(t, calls[0].Arguments, "the Eiffel Tower was completed in 1925 for the World Fair")
}
