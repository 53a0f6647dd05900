package runstate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
)

// The validator's citations become sources whose snippet is the span of
// its answer they support, counted in characters; offsets out of range are
// clamped, texts made storable and bounded, and an unreadable response
// gives none.
func TestCitedSources(t *testing.T) {
	text := "Der Turm wurde 1889 eröffnet, sagt AP. Über 300 m hoch."
	res := llm.Response{Output: []llm.OutputItem{
		{Type: llm.ItemReasoning, Summary: []string{"thinking"}},
		{Type: llm.ItemMessage, Content: []llm.ContentPart{{Type: "text", Text: text, Citations: []llm.Citation{
			{URL: "https://apnews.com/a", Title: " AP ", StartIndex: 0, EndIndex: 29},
			{URL: "https://example.org/b\x00", Title: "bad \xff", StartIndex: 39, EndIndex: 500},
			{URL: "https://example.org/c", StartIndex: 30, EndIndex: 10},
			{URL: "https://example.org/d", StartIndex: -5, EndIndex: 3},
		}}}},
	}}
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	require.Equal(t, []events.SourceV1{
		{URL: "https://apnews.com/a", Title: "AP", Snippet: "Der Turm wurde 1889 eröffnet,"},
		{URL: "https://example.org/b", Title: "bad \uFFFD", Snippet: "Über 300 m hoch."},
		{URL: "https://example.org/c", Snippet: ""},
		{URL: "https://example.org/d", Snippet: "Der"},
	}, citedSources(raw))

	require.Equal(t, []events.SourceV1{}, citedSources(json.RawMessage(`{"output":"not a list"}`)))
	require.Equal(t, []events.SourceV1{}, citedSources(nil))

	many := llm.ContentPart{Type: "text", Text: strings.Repeat("x", 10)}
	for range 50 {
		many.Citations = append(many.Citations, llm.Citation{URL: "https://example.org/" + strings.Repeat("p", 5000), StartIndex: 0, EndIndex: 10})
	}
	raw, err = json.Marshal(llm.Response{Output: []llm.OutputItem{{Type: llm.ItemMessage, Content: []llm.ContentPart{many}}}})
	require.NoError(t, err)
	got := citedSources(raw)
	require.Len(t, got, maxCitations)
	require.Len(t, got[0].URL, maxURLBytes)
}

// Only failures of the provider count against an assessment's tries; an
// answer the stance step could not use is its own business.
func TestProviderFailure(t *testing.T) {
	for kind, want := range map[llm.Kind]bool{llm.KindRateLimited: true, llm.KindServer: true, llm.KindUnauthorized: true,
		llm.KindTimeout: true, llm.KindInvalidOutput: false, llm.KindRefusal: false} {
		require.Equal(t, want, providerFailure(string(kind)), kind)
	}
}
