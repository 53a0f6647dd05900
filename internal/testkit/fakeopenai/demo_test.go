package fakeopenai_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
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

// The demonstration's flag passes the strict evidence policy: its two
// placeholder sources (a tier-1 and a tier-2 domain) are what the demo's
// own stance step finds refuting the sentence, so `make up` with the demo
// shows a published flag without switching the policy off.
func TestDemoFlagPassesTheStrictPolicy(t *testing.T) {
	s := fakeopenai.NewForTest(t)
	s.Demo()
	post := "Hello there. Fun fact: the Eiffel Tower was completed in 1925 for the World Fair. Bye."
	open, closeLine := prompts.Fence(post)
	req := llm.Request{Model: "gpt-5", Instructions: "x", Tools: []llm.Tool{tools.SubmitCorrection()},
		Input: []llm.Message{llm.UserText(prompts.Section(prompts.HeadingPost, open, closeLine, post))}}
	cred := llm.Credentials{BaseURL: s.URL, APIKey: "sk-x"}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), cred, req)
	require.NoError(t, err)
	calls := res.ToolCalls()
	require.Len(t, calls, 1)
	c, err := tools.DecodeCorrection(calls[0].JSON)
	require.NoError(t, err)

	claim := events.CorrectionV1{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning}
	for _, src := range c.Sources {
		claim.Sources = append(claim.Sources, events.SourceV1{URL: src.URL, Title: src.Title, Snippet: src.Snippet})
	}
	ref := events.AttemptRef{InvestigationID: "7f1c2a56-0a0b-4c1d-8e2f-3a4b5c6d7e8f", Series: 1, Attempt: 1}
	a := investigator.NewAssessor(investigator.AssessorConfig{}, sources.Default(), evidence.DefaultPolicy(),
		stance.New(llm.OpenAIResponses{}, stance.Config{}), nil, nil)
	out, err := a.Assess(context.Background(), investigator.AssessInput{Ref: ref, SubmissionID: events.SubmissionID(ref, 0),
		Claim: claim, Cred: cred})
	require.NoError(t, err)
	ev := out.Event
	require.True(t, ev.Published, "%s %v", ev.Reason, ev.Failed)
	require.Equal(t, evidence.VerdictRefuted, ev.Verdict)
	require.Equal(t, []int{1, 2}, []int{ev.Sources[0].Tier, ev.Sources[1].Tier})
	require.Equal(t, 0.9, ev.Sources[0].Contradict)
}
