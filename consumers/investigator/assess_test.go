package investigator

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/")

// These tests need no services: the assessor is a function of its input,
// the real source registry and policy, and a stance judge (a scripted one
// here, or the real stance provider against the in-process fake API).

const towerClaim = "The Eiffel Tower was completed in 1925"

var assessRef = events.AttemptRef{InvestigationID: "7f1c2a56-0a0b-4c1d-8e2f-3a4b5c6d7e8f", Series: 1, Attempt: 1}

var assessSubmission = events.SubmissionID(assessRef, 0)

// Stances the scripted judge gives.
var (
	refutes  = evidence.Stance{Entail: 0.05, Contradict: 0.9, Neutral: 0.05}
	supports = evidence.Stance{Entail: 0.9, Contradict: 0.05, Neutral: 0.05}
)

// scriptedJudge answers each passage with the stance of the first phrase
// of its script that the passage contains (neutral otherwise), and
// reports one exchange per call.
type scriptedJudge struct {
	script []phraseStance
	err    error
	calls  []stance.Call
}

type phraseStance struct {
	phrase string
	stance evidence.Stance
	note   string
}

func (j *scriptedJudge) Judge(_ context.Context, call stance.Call, observe func(stance.Turn)) ([]evidence.StanceResult, error) {
	j.calls = append(j.calls, call)
	res := &llm.Response{Provider: "scripted", Model: "judge-1", Status: llm.StatusCompleted, HTTPStatus: 200,
		RawRequest: json.RawMessage(`{"model":"judge-1"}`), RawResponse: json.RawMessage(`{}`)}
	if observe != nil {
		observe(stance.Turn{Batch: 1, Try: 1, Response: res, Err: j.err})
	}
	if j.err != nil {
		return nil, j.err
	}
	out := make([]evidence.StanceResult, len(call.Passages))
	for i, p := range call.Passages {
		out[i] = evidence.StanceResult{Stance: evidence.NeutralStance}
		for _, s := range j.script {
			if strings.Contains(p, s.phrase) {
				out[i] = evidence.StanceResult{Stance: s.stance, Note: s.note}
				break
			}
		}
	}
	return out, nil
}

func (j *scriptedJudge) PromptRef() events.PromptRefV1 {
	return events.PromptRefV1{Name: "stance", Version: "v1", SHA256: strings.Repeat("ab", 32)}
}
func (j *scriptedJudge) Model() string        { return "judge-1" }
func (j *scriptedJudge) ProviderName() string { return "scripted" }

// scriptedSearch answers each query from a table; a query it does not know
// fails like a provider that is down.
type scriptedSearch struct {
	results map[string][]websearch.Result
	queries []string
}

func (s *scriptedSearch) Search(_ context.Context, query string, limit int) ([]websearch.Result, error) {
	s.queries = append(s.queries, query)
	r, ok := s.results[query]
	if !ok {
		return nil, errors.New("brave search: HTTP 503: search: provider unavailable")
	}
	return r[:min(limit, len(r))], nil
}
func (s *scriptedSearch) Provider() string { return "scripted" }

var assessNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestAssessor(judge StanceJudge, policy evidence.Policy, searcher websearch.Searcher) *Assessor {
	return NewAssessor(AssessorConfig{}, sources.Default(), policy, judge, searcher, func() time.Time { return assessNow })
}

func towerInput(srcs ...events.SourceV1) AssessInput {
	return AssessInput{Ref: assessRef, SubmissionID: assessSubmission, Claim: events.CorrectionV1{
		Text: towerClaim, Context: towerClaim + " for the World Fair.", Summary: "It was completed in 1889.",
		Reasoning: "The sources give 1889.", Sources: srcs}}
}

func src(url, snippet string) events.SourceV1 {
	return events.SourceV1{URL: url, Title: "Source at " + url, Snippet: snippet}
}

// The publish rule, end to end through the assessor, on the real starter
// registry and the strict policy: what each kind of evidence decides.
func TestAssessAppliesThePublishRule(t *testing.T) {
	judge := &scriptedJudge{script: []phraseStance{
		{phrase: "was completed in March 1889", stance: refutes},
		{phrase: "opened in 1889 after two years", stance: refutes},
		{phrase: "indeed completed in 1925", stance: supports},
	}}
	const (
		official = "The tower was completed in March 1889."
		wire     = "The tower opened in 1889 after two years of work."
		support  = "It was indeed completed in 1925."
	)
	for _, tc := range []struct {
		name      string
		sources   []events.SourceV1
		published bool
		reason    string
		failed    []string
		verdict   string
		gate      string
		score     int
	}{
		{
			name:      "a tier-1 and a tier-2 domain refute it",
			sources:   []events.SourceV1{src("https://www.loc.gov/item/eiffel", official), src("https://www.reuters.com/eiffel", wire)},
			published: true, reason: evidence.ReasonPublished, failed: []string{},
			verdict: evidence.VerdictRefuted, gate: evidence.GateMedium, score: 3,
		},
		{
			name:      "two independent tier-2 domains refute it",
			sources:   []events.SourceV1{src("https://apnews.com/article/eiffel", official), src("https://www.reuters.com/eiffel", wire)},
			published: true, reason: evidence.ReasonPublished, failed: []string{},
			verdict: evidence.VerdictRefuted, gate: evidence.GateMedium, score: 3,
		},
		{
			name:    "only a tier-4 blog refutes it",
			sources: []events.SourceV1{src("https://medium.com/@someone/eiffel", official)},
			reason:  evidence.ReasonNoAuthority,
			failed:  []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum},
			verdict: evidence.VerdictRefuted, gate: evidence.GateInsufficient, score: 2,
		},
		{
			name:    "one tier-1 source refutes it, alone",
			sources: []events.SourceV1{src("https://www.loc.gov/item/eiffel", official)},
			reason:  evidence.ReasonGateBelowMinimum, failed: []string{evidence.ReasonGateBelowMinimum},
			verdict: evidence.VerdictRefuted, gate: evidence.GateInsufficient, score: 3,
		},
		{
			name: "a tier-2 source supports it against a tier-1 refutation",
			sources: []events.SourceV1{src("https://www.loc.gov/item/eiffel", official), src("https://www.reuters.com/eiffel", wire),
				src("https://www.nytimes.com/eiffel", support)},
			reason:  evidence.ReasonContested,
			failed:  []string{evidence.ReasonContested, evidence.ReasonReliableSupport},
			verdict: evidence.VerdictContested, gate: evidence.GateMedium, score: 47,
		},
		{
			name:    "two tier-2 domains on one registrable domain count once",
			sources: []events.SourceV1{src("https://en.wikipedia.org/wiki/Eiffel_Tower", official), src("https://fr.wikipedia.org/wiki/Tour_Eiffel", wire)},
			reason:  evidence.ReasonNoAuthority,
			failed:  []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum},
			verdict: evidence.VerdictRefuted, gate: evidence.GateInsufficient, score: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(), towerInput(tc.sources...))
			require.NoError(t, err)
			ev := out.Event
			require.Equal(t, tc.published, ev.Published)
			require.Equal(t, tc.reason, ev.Reason)
			require.Equal(t, tc.failed, ev.Failed)
			require.Equal(t, tc.verdict, ev.Verdict)
			require.Equal(t, tc.gate, ev.Gate4)
			require.Equal(t, tc.score, ev.Score)
			require.Equal(t, evidence.PublishStrict, ev.PublishMode)
			require.Equal(t, evidence.DefaultPolicy().Version(), ev.PolicyVersion)
			require.Equal(t, sources.Default().Version(), ev.RegistryVersion)
			require.Len(t, ev.Sources, len(tc.sources))
			require.Len(t, out.Exchanges, 1)
			require.NoError(t, ev.Validate())
		})
	}
}

// Under the validator-only policy every approved claim is published; the
// assessment is still computed and recorded with its policy.
func TestAssessValidatorOnlyPublishesWhatTheEngineWithholds(t *testing.T) {
	judge := &scriptedJudge{script: []phraseStance{{phrase: "1889", stance: refutes}}}
	out, err := newTestAssessor(judge, evidence.ValidatorOnlyPolicy(), nil).Assess(context.Background(),
		towerInput(src("https://medium.com/@someone/eiffel", "It opened in 1889.")))
	require.NoError(t, err)
	require.True(t, out.Event.Published)
	require.Equal(t, evidence.ReasonPublished, out.Event.Reason)
	require.Equal(t, evidence.PublishValidatorOnly, out.Event.PublishMode)
	require.True(t, strings.HasPrefix(out.Event.PolicyVersion, "validator-only-v1@"), out.Event.PolicyVersion)
	require.Equal(t, evidence.VerdictRefuted, out.Event.Verdict)
	require.Equal(t, evidence.GateInsufficient, out.Event.Gate4)
}

func fetched(t *testing.T, r fetchurl.Result) string {
	t.Helper()
	return r.ToolOutput()
}

// Every origin feeds the assessment, in priority order; URLs that do not
// resolve and later duplicates are dropped with their reasons; our own
// search records each query, a failing one with its error, and never fails
// the assessment. The whole event is a golden file.
func TestAssessGathersEveryOrigin(t *testing.T) {
	page := strings.Repeat("Paris has many monuments and museums to visit. ", 30) +
		"Construction of the Eiffel Tower began in 1887 and the tower was completed in March 1889, in time for the fair. " +
		strings.Repeat("The city also has parks and bridges along the river. ", 30) +
		"Visitors reach the top of the tower by lift."
	in := towerInput(
		src("https://www.loc.gov/item/eiffel?utm_source=newsletter#history", "The tower was completed in March 1889."),
		src("not a url", "A snippet without a page."),
		src("http://intranet.local/eiffel", "An internal page."),
		src("https://medium.com/@someone/eiffel", ""), // no snippet: the title is judged
	)
	in.ValidatorCitations = []events.SourceV1{
		{URL: "https://loc.gov/item/eiffel", Title: "The same page again", Snippet: "completed in 1889"},
		{URL: "https://apnews.com/article/eiffel-tower", Title: "AP", Snippet: "the tower opened in 1889"},
	}
	in.Fetched = []string{
		fetched(t, fetchurl.Result{URL: "https://reut.rs/eiffel", FinalURL: "https://www.reuters.com/world/eiffel-tower", Status: 200,
			Title: "Eiffel Tower at 135", Text: page}),
		fetched(t, fetchurl.Result{URL: "https://example.com/404", Status: 404, Error: "the page answered 404 Not Found"}),
		fetched(t, fetchurl.Result{URL: "https://www.bbc.co.uk/food", Status: 200, Title: "Recipes", Text: "Bread, cheese and wine."}),
		`{"status":"error","error":"there is no tool named fetch_url"}`,
	}
	judge := &scriptedJudge{script: []phraseStance{
		{phrase: "completed in March 1889", stance: refutes},
		{phrase: "opened in 1889", stance: refutes},
		{phrase: "Eiffel Tower facts", stance: evidence.Stance{Entail: 0.2, Contradict: 0.3, Neutral: 0.5}},
	}}
	searcher := &scriptedSearch{results: map[string][]websearch.Result{}}
	a := newTestAssessor(judge, evidence.DefaultPolicy(), searcher)
	// Whatever the queries are, the first one finds two results and the
	// others fail.
	plan := planOf(in)
	require.NotEmpty(t, plan)
	searcher.results[plan[0]] = []websearch.Result{
		{Title: "Eiffel Tower facts", URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Snippet: "Eiffel Tower facts and history."},
		{Title: "Duplicate", URL: "https://reuters.com/world/eiffel-tower/", Snippet: "The same article."},
	}
	out, err := a.Assess(context.Background(), in)
	require.NoError(t, err)
	ev := out.Event
	require.Equal(t, plan, searcher.queries, "every query of the plan runs, in order")

	origins := []string{}
	urls := []string{}
	for _, s := range ev.Sources {
		origins = append(origins, s.Origin)
		urls = append(urls, s.URL)
	}
	require.Equal(t, []string{"https://loc.gov/item/eiffel", "https://medium.com/@someone/eiffel", "https://apnews.com/article/eiffel-tower",
		"https://reuters.com/world/eiffel-tower", "https://britannica.com/topic/Eiffel-Tower-Paris-France"}, urls)
	require.Equal(t, []string{"investigator", "investigator", "validator", "fetch_url", "search"}, origins)
	require.Equal(t, []events.DroppedSourceV1{
		{URL: "https://example.com/404", Origin: "fetch_url", Reason: DropFetchNoText},
		{URL: "https://www.bbc.co.uk/food", Origin: "fetch_url", Reason: DropNoKeyTerms},
		{URL: "not a url", Origin: "investigator", Reason: "not_absolute"},
		{URL: "http://intranet.local/eiffel", Origin: "investigator", Reason: "no_public_suffix"},
		{URL: "https://loc.gov/item/eiffel", Origin: "validator", Reason: gather.DropDuplicate},
		{URL: "https://reuters.com/world/eiffel-tower/", Origin: "search", Reason: gather.DropDuplicate},
	}, ev.Dropped)
	require.Equal(t, "Source at https://medium.com/@someone/eiffel", ev.Sources[1].Snippet, "no snippet: the title is judged")
	require.Contains(t, ev.Sources[3].Snippet, "the tower was completed in March 1889")
	require.Len(t, ev.Queries, len(plan))
	require.Equal(t, 2, ev.Queries[0].Results)
	for _, q := range ev.Queries[1:] {
		require.Equal(t, 0, q.Results)
		require.Equal(t, "brave search: HTTP 503: search: provider unavailable", q.Error)
	}
	require.True(t, ev.Published, "a tier-1 and two tier-2 domains refute it: %s %v", ev.Reason, ev.Failed)

	// The stance was asked once for exactly the recorded snippets.
	require.Len(t, judge.calls, 1)
	snippets := make([]string, len(ev.Sources))
	for i, s := range ev.Sources {
		snippets[i] = s.Snippet
	}
	require.Equal(t, snippets, judge.calls[0].Passages)
	require.Equal(t, towerClaim, judge.calls[0].Claim)
	require.Equal(t, map[string]string{"investigation_id": assessRef.InvestigationID, "submission_id": assessSubmission}, judge.calls[0].Metadata)

	// The versions change with the registry's and the policy's data; the
	// golden file holds the rest.
	require.Equal(t, sources.Default().Version(), ev.RegistryVersion)
	require.Equal(t, evidence.DefaultPolicy().Version(), ev.PolicyVersion)
	stable := *ev
	stable.RegistryVersion, stable.PolicyVersion = "<registry version>", "<policy version>"
	got, err := json.MarshalIndent(stable, "", "  ")
	require.NoError(t, err)
	golden(t, "assessment_every_origin.golden.json", got)
}

// planOf is the query texts the assessor's search runs for in.
func planOf(in AssessInput) []string {
	var out []string
	for _, q := range queriesPlan(in.Claim).Queries {
		out = append(out, q.Text)
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	require.JSONEq(t, string(want), string(got))
}

// Hostile sources: NUL bytes, invalid UTF-8, a huge snippet, a punycode
// host and far too many sources end as a valid event: texts cleaned and
// cut, passages bounded, the rest dropped with the reason.
func TestAssessBoundsHostileSources(t *testing.T) {
	var srcs []events.SourceV1
	srcs = append(srcs,
		events.SourceV1{URL: "https://www.reuters.com/a\x00b", Title: "t", Snippet: "nul in the url"},
		events.SourceV1{URL: "https://apnews.com/x", Title: "bad \xff title\x00", Snippet: "opened in 1889 \x00 " + strings.Repeat("é", 5000)},
		events.SourceV1{URL: "https://xn--mnchen-3ya.de/eiffel", Title: "IDN", Snippet: "Ein Turm, completed in March 1889."},
		events.SourceV1{URL: "https://münchen.de/eiffel", Title: "IDN, Unicode", Snippet: "The same host written in Unicode."},
		events.SourceV1{URL: "https://" + strings.Repeat("a", 5000) + ".com/", Title: "long", Snippet: "long"},
		events.SourceV1{URL: "javascript:alert(1)", Title: "js", Snippet: "js"},
	)
	for i := range 40 {
		srcs = append(srcs, events.SourceV1{URL: "https://site" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".org/p", Title: "filler", Snippet: "filler"})
	}
	judge := &scriptedJudge{}
	out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(), towerInput(srcs...))
	require.NoError(t, err)
	ev := out.Event
	require.NoError(t, ev.Validate())
	require.Len(t, ev.Sources, 24, "at most MaxPassages passages")
	require.Equal(t, "https://apnews.com/x", ev.Sources[0].URL)
	require.Equal(t, "bad \uFFFD title", ev.Sources[0].Title)
	require.LessOrEqual(t, len(ev.Sources[0].Snippet), 1500)
	require.True(t, strings.HasPrefix(ev.Sources[0].Snippet, "opened in 1889  é"), ev.Sources[0].Snippet[:30])
	require.Equal(t, "https://xn--mnchen-3ya.de/eiffel", ev.Sources[1].URL)
	require.Equal(t, "xn--mnchen-3ya.de", ev.Sources[1].Domain)
	reasons := map[string]int{}
	for _, d := range ev.Dropped {
		reasons[d.Reason]++
		require.NotContains(t, d.URL, "\x00")
		require.LessOrEqual(t, len(d.URL), 2048)
	}
	require.Equal(t, map[string]int{"control_character": 1, gather.DropDuplicate: 1, "too_long": 1, "unsupported_scheme": 1,
		gather.DropPassageLimit: 40 + 2 - 24}, reasons)
	for _, c := range judge.calls[0].Passages {
		require.NotContains(t, c, "\x00")
	}
	require.False(t, ev.Published)
}

// A stance provider failure is no assessment: the error comes back with
// the exchanges made, to record; nothing is published.
func TestAssessStanceFailureIsRetriedLater(t *testing.T) {
	judge := &scriptedJudge{err: &llm.Error{Provider: "scripted", Class: llm.Transient, Kind: llm.KindRateLimited, StatusCode: 429, Message: "slow down"}}
	out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(),
		towerInput(src("https://www.loc.gov/item/eiffel", "completed in March 1889")))
	require.Error(t, err)
	require.True(t, llm.IsRetryable(err), "the provider's error, wrapped: %v", err)
	require.Nil(t, out.Event)
	require.Len(t, out.Exchanges, 1)
	ex := out.Exchanges[0].(*events.InvestigationExchangeRecordedV1)
	require.Equal(t, events.StageAssessor, ex.Stage)
	require.Equal(t, assessSubmission, ex.SubmissionID)
	require.Equal(t, 1, ex.Round)
	require.Equal(t, "rate_limited", ex.Error.Kind)
	require.Equal(t, events.FailureTransient, ex.Error.Class)
	require.NoError(t, ex.Validate())
}

// Without a stance (the provider failed too often, no credentials) every
// passage is neutral with the note, no provider is called, and the claim
// is withheld.
func TestAssessWithoutStanceWithholds(t *testing.T) {
	judge := &scriptedJudge{script: []phraseStance{{phrase: "1889", stance: refutes}}}
	in := towerInput(src("https://www.loc.gov/item/eiffel", "completed in March 1889"), src("https://www.reuters.com/e", "opened in 1889"))
	in.NoStance = "no stance: the stance provider failed 12 times"
	out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(), in)
	require.NoError(t, err)
	require.Empty(t, judge.calls)
	require.Empty(t, out.Exchanges)
	ev := out.Event
	require.False(t, ev.Published)
	require.Equal(t, evidence.ReasonNotRefuted, ev.Reason)
	require.Equal(t, evidence.VerdictNotEnough, ev.Verdict)
	for _, s := range ev.Sources {
		require.Equal(t, 1.0, s.Neutral)
		require.Equal(t, in.NoStance, s.StanceNote)
	}
	require.Empty(t, ev.StanceModel)
	require.Nil(t, ev.StancePrompt)
}

// A claim without any usable source has no passage: no stance call, and
// the claim is withheld for want of evidence.
func TestAssessWithoutSourcesWithholds(t *testing.T) {
	judge := &scriptedJudge{}
	out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(), towerInput(src("ftp://x.org/a", "x")))
	require.NoError(t, err)
	require.Empty(t, judge.calls)
	require.False(t, out.Event.Published)
	require.Equal(t, evidence.ReasonNoEvidence, out.Event.Reason)
	require.Equal(t, []events.AssessedSourceV1{}, out.Event.Sources)
	require.NoError(t, out.Event.Validate())
}

// The real stance provider against the fake API: an answer that breaks
// the stance schema every time leaves the passages neutral with a note,
// each try is an ASSESSOR exchange, and the claim is withheld.
func TestAssessStanceSchemaViolationWithholds(t *testing.T) {
	fake := fakeopenai.NewForTest(t)
	fake.HandleFunc(fakeopenai.Responses, func(req fakeopenai.Request) fakeopenai.Step {
		_, passages, ok, err := req.Stance()
		require.True(t, ok)
		require.NoError(t, err)
		bad := make([]fakeopenai.ScriptStance, len(passages))
		for i := range bad {
			bad[i] = fakeopenai.ScriptStance{Entail: 0.9, Contradict: 0.9, Neutral: 0.9} // sums to 2.7
		}
		return fakeopenai.StanceReply(fakeopenai.Responses, bad)
	})
	judge := stance.New(llm.OpenAIResponses{}, stance.Config{Model: "gpt-test-stance"})
	in := towerInput(src("https://www.loc.gov/item/eiffel", "completed in March 1889"), src("https://www.reuters.com/e", "opened in 1889"))
	in.Cred = llm.Credentials{BaseURL: fake.URL}
	out, err := newTestAssessor(judge, evidence.DefaultPolicy(), nil).Assess(context.Background(), in)
	require.NoError(t, err)
	ev := out.Event
	require.False(t, ev.Published)
	require.Equal(t, evidence.ReasonNotRefuted, ev.Reason)
	require.Equal(t, evidence.VerdictNotEnough, ev.Verdict)
	for _, s := range ev.Sources {
		require.Equal(t, evidence.NeutralStance, evidence.Stance{Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral})
		require.Contains(t, s.StanceNote, "broke the schema 3 times")
	}
	require.Equal(t, "gpt-test-stance", ev.StanceModel)
	require.Equal(t, llm.ProviderOpenAIResponses, ev.StanceProvider)
	require.Len(t, out.Exchanges, 3, "MaxTries tries of the one batch")
	for i, p := range out.Exchanges {
		ex := p.(*events.InvestigationExchangeRecordedV1)
		require.Equal(t, events.StageAssessor, ex.Stage)
		require.Equal(t, i+1, ex.Round)
		require.Equal(t, "stance", ex.Prompt.Name)
		require.NoError(t, ex.Validate())
	}
}

// Windows of a fetched page: the spans around the claim's key terms with
// the most distinct terms, in page order, joined.
func TestWindows(t *testing.T) {
	terms := keyTerms(towerClaim)
	require.Equal(t, map[string]bool{"eiffel": true, "tower": true, "completed": true, "1925": true}, terms)
	text := "Bread and cheese. The tower is tall. Lorem ipsum dolor sit amet. " +
		"The Eiffel Tower was completed in 1889. Consectetur adipiscing elit. Sed do eiusmod. Eiffel was an engineer."
	// Around "Eiffel" (byte 69): bytes 39-99, three distinct terms; it ties
	// with the window around "Tower" and comes first. The windows around
	// "tower" (byte 22) and "completed" overlap it; the last "Eiffel" has
	// one term, less than half of three.
	require.Equal(t, "ipsum dolor sit amet. The Eiffel Tower was completed in", windows(text, terms, 2, 60))
	// The best window holds all four terms (around "Tower", byte 168: bytes
	// 138-198); a second place with two terms, half of four, is kept; the
	// result is in text order.
	text = "Sed do eiusmod tempor. The Eiffel Tower opened in Paris. " + strings.Repeat("Ut enim ad minim veniam. ", 4) +
		"The Eiffel Tower was completed in 1925, they say."
	require.Equal(t, "Sed do eiusmod tempor. The Eiffel Tower opened in Paris"+windowSeparator+
		"ad minim veniam. The Eiffel Tower was completed in 1925", windows(text, terms, 3, 60))
	require.Equal(t, "", windows("Nothing relevant here.", terms, 3, 400))
	require.Equal(t, "", windows(text, map[string]bool{}, 3, 400))
}

// BenchmarkAssess is the assessor's own work for one claim outside provider
// time: registry lookups, windows of four fetched pages of 20,000
// characters, checks, the policy and the event (the stance judge answers at
// once).
func BenchmarkAssess(b *testing.B) {
	page := strings.Repeat("Paris has many monuments and museums to visit, and bridges along the river. ", 280)
	page = page[:len(page)/2] + " The Eiffel Tower was completed in March 1889 for the fair. " + page[len(page)/2:]
	in := towerInput(src("https://www.loc.gov/item/eiffel", "The tower was completed in March 1889."),
		src("https://www.reuters.com/eiffel", "It opened in 1889."), src("https://medium.com/@a/eiffel", "A blog says 1889."))
	in.ValidatorCitations = []events.SourceV1{{URL: "https://apnews.com/a", Title: "AP", Snippet: "opened in 1889"}}
	for i := range 4 {
		in.Fetched = append(in.Fetched, fetchurl.Result{URL: "https://www.bbc.co.uk/news/" + string(rune('a'+i)), Status: 200,
			Title: "Page", Text: page[:20000]}.ToolOutput())
	}
	judge := &scriptedJudge{script: []phraseStance{{phrase: "1889", stance: refutes}}}
	a := newTestAssessor(judge, evidence.DefaultPolicy(), nil)
	b.ReportAllocs()
	for b.Loop() {
		judge.calls = judge.calls[:0]
		out, err := a.Assess(context.Background(), in)
		if err != nil || !out.Event.Published {
			b.Fatalf("%v %+v", err, out.Event)
		}
	}
}

// failingJudge fails before it makes any exchange.
type failingJudge struct{ scriptedJudge }

func (j *failingJudge) Judge(context.Context, stance.Call, func(stance.Turn)) ([]evidence.StanceResult, error) {
	return nil, errors.New("stance: the prompt does not render")
}

// A stance step that fails before any exchange is recorded as one failed
// exchange, so the failure counts towards the assessment's wait and limit.
func TestAssessFailureWithoutExchangeIsRecorded(t *testing.T) {
	out, err := newTestAssessor(&failingJudge{}, evidence.DefaultPolicy(), nil).Assess(context.Background(),
		towerInput(src("https://www.loc.gov/item/eiffel", "completed in March 1889")))
	require.ErrorContains(t, err, "the prompt does not render")
	require.Nil(t, out.Event)
	require.Len(t, out.Exchanges, 1)
	ex := out.Exchanges[0].(*events.InvestigationExchangeRecordedV1)
	require.Equal(t, events.StageAssessor, ex.Stage)
	require.Equal(t, "scripted", ex.Provider)
	require.Equal(t, "judge-1", ex.Model)
	require.Equal(t, "internal", ex.Error.Kind)
	require.NoError(t, ex.Validate())
}
