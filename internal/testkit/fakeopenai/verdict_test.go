package fakeopenai_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

const towerText = "Fun fact: the Eiffel Tower was completed in 1925. It is lovely."

func playVerdict(t *testing.T) (*fakeopenai.Server, *fakeopenai.Script, *bytes.Buffer) {
	t.Helper()
	sc, err := fakeopenai.LoadScript(filepath.Join("testdata", "verdict.json"))
	require.NoError(t, err)
	s := fakeopenai.NewForTest(t)
	var log bytes.Buffer
	s.Play(sc, &log)
	return s, sc, &log
}

// ask sends a verdict request the way consumers/analyst does: the text
// fenced under prompts.HeadingText, a strict structured output.
func ask(t *testing.T, s *fakeopenai.Server, p llm.Provider, text string, out *llm.OutputSchema) []byte {
	t.Helper()
	open, closeLine := prompts.Fence(text)
	res, err := p.Create(context.Background(), llm.Credentials{BaseURL: s.URL}, llm.Request{Model: "gpt-5", Instructions: "x",
		OutputSchema: out, Input: []llm.Message{llm.UserText(prompts.Section(prompts.HeadingText, open, closeLine, text) + "\n" +
			prompts.Section(prompts.HeadingClaimVerdicts, open, closeLine, "[]"))}})
	require.NoError(t, err)
	return res.OutputJSON
}

var (
	extraction = &llm.OutputSchema{Name: verdict.ExtractionSchemaName, Schema: verdict.ExtractionOutputSchema()}
	summary    = &llm.OutputSchema{Name: verdict.SummarySchemaName, Schema: verdict.SummaryOutputSchema()}
)

// The script answers the verdict analysis's extraction and summary calls,
// on both endpoints, with answers the real decoders accept: the matched
// rule's claims with their triage, and its summary.
func TestScriptAnswersVerdictCalls(t *testing.T) {
	for _, p := range stanceProviders {
		t.Run(p.Name(), func(t *testing.T) {
			s, _, log := playVerdict(t)
			claims, err := verdict.DecodeExtraction(ask(t, s, p, towerText, extraction), verdict.MaxClaims)
			require.NoError(t, err)
			require.Equal(t, []verdict.Extracted{
				{Text: "The Eiffel Tower was completed in 1925.", Context: "Fun fact: the Eiffel Tower was completed in 1925.",
					Kind: "FACTUAL", Specificity: 0.9, Numeric: true, Reason: "A dated fact."},
				{Text: "It is lovely.", Context: "It is lovely.", Kind: "OPINION", Specificity: 0.1, TimeSensitive: true,
					CurrentEvents: true, Reason: "Taste."},
			}, claims)
			sum, err := verdict.DecodeSummary(ask(t, s, p, towerText, summary))
			require.NoError(t, err)
			require.Equal(t, verdict.Summary{Summary: "The tower was completed in 1889.", Caveats: []string{"Beauty is a matter of taste."},
				Sources: []string{"https://www.loc.gov/item/tower/"}, ModelConfidence: 88, ModelLabel: "False"}, sum)
			entries := logEntries(t, log)
			require.Equal(t, []fakeopenai.ScriptLogEntry{
				{Seq: 1, Kind: "extract", Rule: "tower", Claims: 2},
				{Seq: 2, Kind: "summary", Rule: "tower", Label: "False"},
			}, entries)
		})
	}
}

// A text no rule with a verdict matches gets no claims and an
// Unverifiable summary, still answers the decoders accept.
func TestScriptVerdictOfAnUnknownText(t *testing.T) {
	s, _, _ := playVerdict(t)
	for _, text := range []string{"Nothing the script knows.", "This is a rule without a verdict section."} {
		claims, err := verdict.DecodeExtraction(ask(t, s, llm.OpenAIResponses{}, text, extraction), verdict.MaxClaims)
		require.NoError(t, err)
		require.Equal(t, []verdict.Extracted{}, claims)
		sum, err := verdict.DecodeSummary(ask(t, s, llm.OpenAIResponses{}, text, summary))
		require.NoError(t, err)
		require.Equal(t, "Unverifiable", sum.ModelLabel)
		require.Equal(t, 0, sum.ModelConfidence)
	}
}

// A verdict claim's sources carry the stance the fake answers for them.
func TestScriptStanceOfVerdictClaims(t *testing.T) {
	s, _, _ := playVerdict(t)
	got := judge(t, s, llm.OpenAIResponses{}, 8, "The Eiffel Tower was completed in 1925.",
		"Completed in March 1889. More text.", "Finished in 1889.", "Unrelated.")
	require.Equal(t, result(0.02, 0.95, 0.03), got[0])
	require.Equal(t, result(0, 0, 1), got[1], "a source without a stance is neutral")
	require.Equal(t, result(0, 0, 1), got[2])
}

// The search stand-in answers the real SearXNG client: a query sharing two
// or more words with a scripted verdict claim gets its sources (dated as
// scripted), any other query none; a request without format=json is
// refused like SearXNG refuses it.
func TestScriptSearchHandler(t *testing.T) {
	_, sc, _ := playVerdict(t)
	srv := httptest.NewServer(sc.SearchHandler())
	t.Cleanup(srv.Close)
	client, err := httpsafe.New(httpsafe.AllowLoopbackForTests())
	require.NoError(t, err)
	searcher, err := websearch.NewSearXNG(client, srv.URL)
	require.NoError(t, err)
	got, err := searcher.Search(context.Background(), "Eiffel Tower completed 1925", 5)
	require.NoError(t, err)
	require.Equal(t, []websearch.Result{
		{Title: "Eiffel Tower", URL: "https://www.loc.gov/item/tower/", Snippet: "Completed in March 1889.",
			PublishedAt: time.Date(2021, 5, 1, 0, 0, 0, 0, time.UTC)},
		{Title: "Tower", URL: "https://www.britannica.com/topic/tower", Snippet: "Finished in 1889."},
	}, got)
	got, err = searcher.Search(context.Background(), "tower height", 5)
	require.NoError(t, err)
	require.Equal(t, []websearch.Result{}, got, "one shared word is not enough")

	res, err := http.Get(srv.URL + "/search?q=Eiffel+Tower")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	bad, err := websearch.NewSearXNG(client, srv.URL+"/nowhere")
	require.NoError(t, err)
	_, err = bad.Search(context.Background(), "Eiffel Tower completed", 5)
	require.ErrorContains(t, err, "404")
}

// A playing script serves its search stand-in beside the API (the
// e2e stack's ERRATA_SEARCH_BASE_URL); a fake with no script has none.
func TestPlayServesSearch(t *testing.T) {
	s, _, _ := playVerdict(t)
	client, err := httpsafe.New(httpsafe.AllowLoopbackForTests())
	require.NoError(t, err)
	searcher, err := websearch.NewSearXNG(client, s.SearchURL())
	require.NoError(t, err)
	got, err := searcher.Search(context.Background(), "Eiffel Tower completed 1925", 5)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, "https://www.loc.gov/item/tower/", got[0].URL)

	bare := fakeopenai.NewForTest(t)
	res, err := http.Get(bare.SearchURL() + "/search?q=Eiffel+Tower&format=json")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// A script's verdict section is checked like the rest: unknown fields,
// kinds, labels and numbers out of range, bad URLs and dates are errors.
func TestParseScriptChecksVerdicts(t *testing.T) {
	claim := `{"text":"t","context":"c","kind":"FACTUAL","specificity":0.5,"reason":"r","sources":[{"url":"https://e.org","title":"t","snippet":"s","publishedAt":"2024-01-01T00:00:00Z"}]}`
	rule := func(verdict string) string {
		return `{"rules":[{"name":"r","match":"m","claims":[],"verdict":` + verdict + `}]}`
	}
	good := `{"claims":[` + claim + `],"summary":"s","caveats":[],"sources":["https://e.org"],"confidence":50,"label":"Mixed"}`
	_, err := fakeopenai.ParseScript([]byte(rule(good)))
	require.NoError(t, err)
	for name, tc := range map[string]struct{ script, err string }{
		"unknown field":     {rule(strings.Replace(good, `"label"`, `"lable":"x","label"`, 1)), "unknown field"},
		"unknown claim key": {rule(strings.Replace(good, `"kind"`, `"time_sensitive":true,"kind"`, 1)), "unknown field"},
		"empty summary":     {rule(strings.Replace(good, `"summary":"s"`, `"summary":" "`, 1)), "summary is empty"},
		"bad label":         {rule(strings.Replace(good, `"Mixed"`, `"Mostly true"`, 1)), "label"},
		"confidence":        {rule(strings.Replace(good, `50`, `101`, 1)), "confidence"},
		"bad kind":          {rule(strings.Replace(good, `"FACTUAL"`, `"FACT"`, 1)), "kind"},
		"specificity":       {rule(strings.Replace(good, `0.5`, `1.5`, 1)), "specificity"},
		"empty text":        {rule(strings.Replace(good, `"text":"t"`, `"text":""`, 1)), "text and reason"},
		"claim twice":       {rule(strings.Replace(good, claim, claim+","+claim, 1)), "scripted twice"},
		"cited relative":    {rule(strings.Replace(good, `"sources":["https://e.org"]`, `"sources":["/x"]`, 1)), "absolute http(s)"},
		"source url":        {rule(strings.Replace(good, `"url":"https://e.org"`, `"url":"ftp://e.org"`, 1)), "absolute http(s)"},
		"source date":       {rule(strings.Replace(good, `2024-01-01T00:00:00Z`, `January 2024`, 1)), "publishedAt"},
		"source stance":     {rule(strings.Replace(good, `"snippet":"s"`, `"snippet":"s","stance":{"entail":1,"contradict":1,"neutral":0}`, 1)), "sum"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fakeopenai.ParseScript([]byte(tc.script))
			require.ErrorContains(t, err, tc.err)
		})
	}
}
