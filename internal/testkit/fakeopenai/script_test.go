package fakeopenai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

const scriptKey = "sk-script-test-key-0123456789abcdef"

func playScript(t *testing.T) (*fakeopenai.Server, *bytes.Buffer) {
	t.Helper()
	sc, err := fakeopenai.LoadScript(filepath.Join("testdata", "script.json"))
	require.NoError(t, err)
	s := fakeopenai.NewForTest(t)
	var log bytes.Buffer
	s.Play(sc, &log)
	return s, &log
}

// stageOne sends the first stage-1 turn the way the investigator does: the
// post fenced under its heading, the claim tools, web search.
func stageOne(t *testing.T, s *fakeopenai.Server, post string) (*llm.Response, llm.Request) {
	t.Helper()
	open, closeLine := prompts.Fence(post)
	req := llm.Request{Model: "gpt-5", Instructions: "x", ReasoningSummary: "auto", WebSearch: &llm.WebSearch{},
		Tools: []llm.Tool{tools.SubmitCorrection(), tools.RetainCorrection()},
		Input: []llm.Message{llm.UserText(prompts.Section(prompts.HeadingPost, open, closeLine, post))}}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), llm.Credentials{BaseURL: s.URL, APIKey: scriptKey}, req)
	require.NoError(t, err)
	return res, req
}

// validate sends a stage-2 request the way the validator does: the post and
// the candidate claim (the correction as indented JSON) in one fence pair.
func validate(t *testing.T, s *fakeopenai.Server, post, claimText string) tools.VerdictAnswer {
	t.Helper()
	candidate, err := json.MarshalIndent(map[string]any{"text": claimText, "context": claimText, "summary": "s", "reasoning": "r",
		"sources": []map[string]string{{"url": "https://example.org", "title": "t", "snippet": "s"}}}, "", "  ")
	require.NoError(t, err)
	open, closeLine := prompts.Fence(post, string(candidate))
	msg := prompts.Section(prompts.HeadingPost, open, closeLine, post) + "\n" +
		prompts.Section(prompts.HeadingCandidate, open, closeLine, string(candidate))
	req := llm.Request{Model: "gpt-5", Instructions: "x", WebSearch: &llm.WebSearch{},
		OutputSchema: &llm.OutputSchema{Name: prompts.VerdictSchemaName, Schema: tools.VerdictSchema()},
		Input:        []llm.Message{llm.UserText(msg)}}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), llm.Credentials{BaseURL: s.URL, APIKey: scriptKey}, req)
	require.NoError(t, err)
	v, err := tools.DecodeVerdict([]byte(res.Text()))
	require.NoError(t, err, res.Text())
	return v
}

func logEntries(t *testing.T, log *bytes.Buffer) []fakeopenai.ScriptLogEntry {
	t.Helper()
	var out []fakeopenai.ScriptLogEntry
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var e fakeopenai.ScriptLogEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		out = append(out, e)
	}
	return out
}

func TestScriptSubmitsTheMatchedRulesClaimsThenFinishes(t *testing.T) {
	s, log := playScript(t)
	post := "Hello there. Fun fact: the Eiffel Tower was completed in 1925 for the \"World Fair\". Bye."
	res, req := stageOne(t, s, post)

	calls := res.ToolCalls()
	require.Len(t, calls, 2, "%s", res.RawResponse)
	outputs := make([]llm.ToolOutput, len(calls))
	for i, call := range calls {
		require.Equal(t, tools.SubmitCorrectionName, call.Name)
		c, err := tools.DecodeCorrection(call.JSON)
		require.NoError(t, err, "the arguments pass the tool's schema")
		if i == 0 {
			require.Equal(t, "the Eiffel Tower was completed in 1925", c.Text)
			require.Equal(t, "Fun fact: the Eiffel Tower was completed in 1925 for the World Fair.", c.Context)
			require.Equal(t, "It was completed in 1889.", c.Summary)
			require.Equal(t, "Scripted reasoning.", c.Reasoning)
			require.Len(t, c.Sources, 1)
			require.Equal(t, "https://example.org/tower", c.Sources[0].URL)
		}
		outputs[i] = llm.ToolOutput{CallID: call.CallID, Output: `{"status":"accepted"}`}
	}

	// The next turn (tool outputs, previous_response_id) ends the attempt.
	next, err := llm.OpenAIResponses{}.Continue(context.Background(), llm.Credentials{BaseURL: s.URL, APIKey: scriptKey}, req, res, outputs)
	require.NoError(t, err)
	require.Empty(t, next.ToolCalls())
	require.NotEmpty(t, next.Text())

	// Verdicts per claim; the worker sends the normalized quote (straight quotes).
	v := validate(t, s, post, "the Eiffel Tower was completed in 1925")
	require.True(t, v.Approved)
	require.Equal(t, "Scripted approval.", v.Reason)
	v = validate(t, s, post, content.Normalize("for the “World Fair”"))
	require.False(t, v.Approved)
	require.NotEmpty(t, v.Reason)
	v = validate(t, s, post, "Hello there.")
	require.False(t, v.Approved, "a claim the script does not know is rejected")

	entries := logEntries(t, log)
	require.Len(t, entries, 5)
	require.Equal(t, "investigate", entries[0].Kind)
	require.Equal(t, "tower", entries[0].Rule)
	require.Equal(t, 2, entries[0].Claims)
	require.Equal(t, "continue", entries[1].Kind)
	require.Equal(t, "validate", entries[2].Kind)
	require.True(t, *entries[2].Approved)
	require.Equal(t, "the Eiffel Tower was completed in 1925", entries[2].Text)
	require.False(t, *entries[3].Approved)
}

func TestScriptUnmatchedAndEmptyRulesEndWithoutClaims(t *testing.T) {
	s, log := playScript(t)
	for _, post := range []string{"A post about something else entirely, from 1999.", "Intro. A post the script knows but does not flag."} {
		res, _ := stageOne(t, s, post)
		require.Empty(t, res.ToolCalls(), "%s", res.RawResponse)
		require.NotEmpty(t, res.Text())
	}
	entries := logEntries(t, log)
	require.Len(t, entries, 2)
	require.Equal(t, fakeopenai.ScriptLogEntry{Seq: entries[0].Seq, Kind: "investigate"}, entries[0])
	require.Equal(t, "nothing-to-flag", entries[1].Rule)
	require.Zero(t, entries[1].Claims)
}

// The API's key check (GET {OPENAI_BASE_URL}/models) passes with the
// script's key only.
func TestScriptAcceptsOnlyItsKey(t *testing.T) {
	s, _ := playScript(t)
	status := func(key string) int {
		req, err := http.NewRequest(http.MethodGet, s.URL+"/models", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, status(scriptKey))
	require.Equal(t, http.StatusUnauthorized, status("sk-some-other-key-0123456789abcdef"))
}

func TestParseScriptRejectsMistakes(t *testing.T) {
	claim := `{"text":"t","context":"c","summary":"s","reasoning":"r","sources":[{"url":"https://e.org","title":"t","snippet":"s"}],"approved":true}`
	rule := func(claims ...string) string {
		return `{"rules":[{"name":"r","match":"m","claims":[` + strings.Join(claims, ",") + `]}]}`
	}
	_, err := fakeopenai.ParseScript([]byte(rule(claim)))
	require.NoError(t, err)
	for name, tc := range map[string]struct{ script, err string }{
		"no rules":         {`{"rules":[]}`, "no rules"},
		"unknown field":    {`{"rules":[{"name":"r","match":"m","claims":[],"approve":true}]}`, "unknown field"},
		"empty match":      {`{"rules":[{"name":"r","match":"  ","claims":[]}]}`, "match is empty"},
		"duplicate name":   {`{"rules":[{"name":"r","match":"a","claims":[]},{"name":"r","match":"b","claims":[]}]}`, "used twice"},
		"no verdict":       {rule(strings.Replace(claim, `,"approved":true`, "", 1)), "approved"},
		"empty summary":    {rule(strings.Replace(claim, `"summary":"s"`, `"summary":""`, 1)), "summary is empty"},
		"relative source":  {rule(strings.Replace(claim, "https://e.org", "/e", 1)), "absolute http(s)"},
		"no sources":       {rule(strings.Replace(claim, `[{"url":"https://e.org","title":"t","snippet":"s"}]`, "[]", 1)), "no sources"},
		"claim twice":      {rule(claim, claim), "scripted twice"},
		"not json at all":  {`rules:`, "invalid character"},
		"source no title":  {rule(strings.Replace(claim, `"title":"t"`, `"title":""`, 1)), "title and snippet"},
		"non-boolean flag": {rule(strings.Replace(claim, `"approved":true`, `"approved":"yes"`, 1)), "approved"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fakeopenai.ParseScript([]byte(tc.script))
			require.ErrorContains(t, err, tc.err)
		})
	}
}

// The extension's end-to-end script quotes the saved pages verbatim: every
// match phrase, claim and context is in the canonical text of its page, so
// the worker accepts the submissions.
func TestExtensionE2EScriptQuotesTheSavedPages(t *testing.T) {
	sc, err := fakeopenai.LoadScript(filepath.Join("..", "..", "..", "extension", "test", "e2e", "fixtures", "fake-script.json"))
	require.NoError(t, err)
	pages := map[string]string{
		"lesswrong":          "lesswrong-ioZxrP7BhS5ArK59w.normalized.txt",
		"wikipedia-einstein": "wikipedia-albert-einstein-page-html-1.parseApi.normalized.txt",
		"wikipedia-climate":  "wikipedia-climate-change-page-html-1.parseApi.normalized.txt",
	}
	checked := 0
	for _, r := range sc.Rules {
		if len(r.Claims) == 0 && r.Verdict != nil {
			// Only a verdict analysis: matched by a text submitted to the
			// workbench, not by a saved page.
			continue
		}
		checked++
		file, ok := pages[r.Name]
		require.True(t, ok, r.Name)
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "fixtures", "openerrata", file))
		require.NoError(t, err, "the shared fixtures are part of the checkout")
		text := content.Normalize(string(data))
		require.Contains(t, text, content.Normalize(r.Match))
		approved := 0
		for _, c := range r.Claims {
			require.Contains(t, text, content.Normalize(c.Text))
			require.Contains(t, text, content.Normalize(c.Context))
			require.Contains(t, content.Normalize(c.Context), content.Normalize(c.Text))
			if *c.Approved {
				approved++
			}
		}
		require.Greater(t, approved, 0, r.Name)
		require.Less(t, approved, len(r.Claims), "%s: one claim is rejected", r.Name)
	}
	require.Equal(t, len(pages), checked)
}
