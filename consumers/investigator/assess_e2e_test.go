package investigator_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving"
)

// withSources is correction with other sources.
func withSources(c tools.Correction, srcs ...tools.Source) tools.Correction {
	c.Sources = srcs
	return c
}

// assessments lists the claim_assessed events of a trail.
func assessments(trail []events.Event) []*events.InvestigationClaimAssessedV1 {
	var out []*events.InvestigationClaimAssessedV1
	for _, ev := range trail {
		if a, ok := ev.Payload.(*events.InvestigationClaimAssessedV1); ok {
			out = append(out, a)
		}
	}
	return out
}

func completedOf(t *testing.T, trail []events.Event) *events.InvestigationCompletedV1 {
	t.Helper()
	for _, ev := range trail {
		if c, ok := ev.Payload.(*events.InvestigationCompletedV1); ok {
			return c
		}
	}
	t.Fatal("no completed event")
	return nil
}

func assessorExchanges(trail []events.Event) []*events.InvestigationExchangeRecordedV1 {
	var out []*events.InvestigationExchangeRecordedV1
	for _, ev := range trail {
		if ex, ok := ev.Payload.(*events.InvestigationExchangeRecordedV1); ok && ex.Stage == events.StageAssessor {
			out = append(out, ex)
		}
	}
	return out
}

// runOne investigates the body with b and returns the serving status and
// the trail.
func runOne(t *testing.T, h *harness, b *brain, externalID string) (serving.VersionStatus, []events.Event) {
	t.Helper()
	b.install(h.fake)
	p := h.register(externalID, false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)
	got := h.waitStatus(p, 60*time.Second, events.StatusComplete)
	return got, h.trail(p.investigationID)
}

// Sources that do not pass the publish rule: the approved claim is
// withheld, the investigation completes without it, and the assessment
// records why.
func TestApprovedClaimWithheldWhenSourcesDoNotPassTheRule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		sources []tools.Source
		stances []phraseStance
		verdict string
		gate    string
		failed  []string
	}{
		{
			name:    "only a tier-4 blog refutes it",
			sources: []tools.Source{{URL: "https://medium.com/@someone/eiffel", Title: "A blog", Snippet: "A blogger says 1889."}},
			stances: []phraseStance{{phrase: "A blogger says 1889.", stance: refutes}},
			verdict: evidence.VerdictRefuted, gate: evidence.GateInsufficient,
			failed: []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum},
		},
		{
			name: "a tier-2 source supports it",
			sources: []tools.Source{
				{URL: "https://www.loc.gov/reference", Title: "Official record", Snippet: officialSnippet},
				{URL: "https://www.nytimes.com/eiffel", Title: "Newspaper", Snippet: "The newspaper confirms 1925."},
			},
			stances: []phraseStance{{phrase: officialSnippet, stance: refutes}, {phrase: "The newspaper confirms 1925.", stance: supports}},
			verdict: evidence.VerdictContested, gate: evidence.GateLow,
			failed: []string{evidence.ReasonContested, evidence.ReasonReliableSupport, evidence.ReasonGateBelowMinimum},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, investigator.Config{})
			b := &brain{submit: []tools.Correction{withSources(correction(eiffel, "It was completed in 1889."), tc.sources...)},
				approve: map[string]bool{eiffel: true}, stances: tc.stances}
			got, trail := runOne(t, h, b, "withheld"+string(rune('a'+len(tc.failed))))
			require.Empty(t, got.Claims, "the approved claim is not published")

			as := assessments(trail)
			require.Len(t, as, 1)
			a := as[0]
			require.False(t, a.Published)
			require.Equal(t, tc.failed[0], a.Reason)
			require.Equal(t, tc.failed, a.Failed)
			require.Equal(t, tc.verdict, a.Verdict)
			require.Equal(t, tc.gate, a.Gate4)
			require.Equal(t, evidence.PublishStrict, a.PublishMode)
			require.Equal(t, evidence.DefaultPolicy().Version(), a.PolicyVersion)
			require.Len(t, a.Sources, len(tc.sources))
			require.Equal(t, "gpt-test-stance", a.StanceModel)
			require.Empty(t, completedOf(t, trail).Claims)
			require.Len(t, assessorExchanges(trail), 1)

			sub, err := h.inv.Store.Submission(context.Background(), a.SubmissionID)
			require.NoError(t, err)
			require.True(t, sub.Assessed)
			require.False(t, sub.Published)
			require.Equal(t, tc.failed[0], sub.AssessReason)
		})
	}
}

// pageFetcher is fetch_url over fixed pages.
type pageFetcher struct{ pages map[string]fetchurl.Result }

func (f pageFetcher) Tool() llm.Tool { return fetchurl.New(nil, fetchurl.Options{}).Tool() }

func (f pageFetcher) Output(_ context.Context, u string) string {
	r, ok := f.pages[u]
	if !ok {
		r = fetchurl.Result{URL: u, Status: 404, Error: "the page answered 404 Not Found"}
	}
	return r.ToolOutput()
}

// fixedSearch answers every query with the same results, except those
// containing fail, which fail like a provider that is down.
type fixedSearch struct {
	results []websearch.Result
	fail    string
}

func (s fixedSearch) Search(_ context.Context, query string, _ int) ([]websearch.Result, error) {
	if s.fail != "" && strings.Contains(query, s.fail) {
		return nil, errors.New("searxng search: provider unavailable")
	}
	return s.results, nil
}
func (s fixedSearch) Provider() string { return "fixed" }

// Evidence from every origin passes the rule: the investigator's tier-1
// source, a page it fetched on a tier-2 domain, a tier-2 page the validator
// cited, and our own search. The claim is published with its submission's
// sources, naming the submission whose assessment holds the evidence.
func TestApprovedClaimPublishedWithEvidenceFromEveryOrigin(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	page := strings.Repeat("Paris has many monuments. ", 40) + "The Eiffel Tower was completed in 1889 for the fair. " +
		strings.Repeat("Bridges cross the river. ", 40)
	h.fetcher = pageFetcher{pages: map[string]fetchurl.Result{"https://www.reuters.com/world/eiffel": {URL: "https://www.reuters.com/world/eiffel",
		Status: 200, Title: "Eiffel Tower at 135", Text: page}}}
	h.search = fixedSearch{results: []websearch.Result{{Title: "Eiffel Tower", URL: "https://www.britannica.com/topic/Eiffel-Tower",
		Snippet: "Encyclopedia: the tower was built 1887-1889."}}}
	verdict := `{"approved":true,"reason":"The AP reports that the tower opened in 1889."}`
	b := &brain{
		submit: []tools.Correction{withSources(correction(eiffel, "It was completed in 1889."),
			tools.Source{URL: "https://www.loc.gov/reference", Title: "Official record", Snippet: officialSnippet})},
		fetch:   []string{"https://www.reuters.com/world/eiffel"},
		approve: map[string]bool{eiffel: true},
		verdict: "The AP reports that the tower opened in 1889.",
		cite:    []fakeopenai.URLCitation{fakeopenai.CiteQuote(verdict, "the tower opened in 1889", "https://apnews.com/article/eiffel", "AP")},
		stances: []phraseStance{
			{phrase: officialSnippet, stance: refutes},
			{phrase: "completed in 1889 for the fair", stance: refutes},
			{phrase: "the tower opened in 1889", stance: refutes},
			{phrase: "built 1887-1889", stance: refutes},
		},
	}
	got, trail := runOne(t, h, b, "origins01")
	require.Len(t, got.Claims, 1)
	require.Equal(t, eiffel, got.Claims[0].Text)

	as := assessments(trail)
	require.Len(t, as, 1)
	a := as[0]
	require.True(t, a.Published, "%s %v", a.Reason, a.Failed)
	require.Equal(t, evidence.ReasonPublished, a.Reason)
	require.Equal(t, []string{}, a.Failed)
	require.Equal(t, evidence.VerdictRefuted, a.Verdict)
	require.Equal(t, evidence.GateHigh, a.Gate4, "four independent domains, all refuting")
	var origins, urls []string
	for _, s := range a.Sources {
		origins = append(origins, s.Origin)
		urls = append(urls, s.URL)
	}
	require.Equal(t, []string{"investigator", "validator", "fetch_url", "search"}, origins)
	require.Equal(t, []string{"https://loc.gov/reference", "https://apnews.com/article/eiffel", "https://reuters.com/world/eiffel",
		"https://britannica.com/topic/Eiffel-Tower"}, urls)
	require.Equal(t, []int{1, 2, 2, 2}, []int{a.Sources[0].Tier, a.Sources[1].Tier, a.Sources[2].Tier, a.Sources[3].Tier})
	require.Equal(t, "the tower opened in 1889", a.Sources[1].Snippet)
	require.Contains(t, a.Sources[2].Snippet, "The Eiffel Tower was completed in 1889 for the fair.")
	require.NotEmpty(t, a.Queries)
	for _, q := range a.Queries {
		require.Equal(t, 1, q.Results)
	}

	completed := completedOf(t, trail)
	require.Len(t, completed.Claims, 1)
	require.Equal(t, a.SubmissionID, completed.Claims[0].SubmissionID)
	require.Equal(t, []events.SourceV1{{URL: "https://www.loc.gov/reference", Title: "Official record", Snippet: officialSnippet}},
		completed.Claims[0].Sources, "the claim keeps its submission's sources")
}

// A stance answer that breaks the schema on every try leaves every
// passage neutral with a note: the claim is withheld, with the reason.
func TestStanceSchemaViolationWithholds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	broken := fakeopenai.ScriptStance{Entail: 0.9, Contradict: 0.9, Neutral: 0.9}
	b := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true},
		stances: []phraseStance{{phrase: officialSnippet, stance: broken}, {phrase: wireSnippet, stance: broken}}}
	got, trail := runOne(t, h, b, "schema001")
	require.Empty(t, got.Claims)
	a := assessments(trail)[0]
	require.False(t, a.Published)
	require.Equal(t, evidence.ReasonNotRefuted, a.Reason)
	require.Equal(t, evidence.VerdictNotEnough, a.Verdict)
	for _, s := range a.Sources {
		require.Equal(t, 1.0, s.Neutral)
		require.Contains(t, s.StanceNote, "broke the schema 3 times")
	}
	require.Len(t, assessorExchanges(trail), 3, "the stance provider's three tries")
}

// A stance provider that keeps failing publishes nothing: the assessment
// is tried again after a wait, and once the failures reach the limit the
// claim is assessed without stance and withheld.
func TestStanceProviderFailureNeverPublishes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	h.assessMaxFailures = 3
	b := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	h.fake.HandleFunc(fakeopenai.Responses, func(req fakeopenai.Request) fakeopenai.Step {
		if _, _, ok, _ := req.Stance(); ok {
			return fakeopenai.Error(503, "server_error", "overloaded")
		}
		return b.answer(req)
	})
	p := h.register("stance503", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)
	got := h.waitStatus(p, 60*time.Second, events.StatusComplete)
	require.Empty(t, got.Claims)
	trail := h.trail(p.investigationID)
	exs := assessorExchanges(trail)
	require.Len(t, exs, 3, "one stance call of three tries, then no more")
	for _, ex := range exs {
		require.Equal(t, "server_error", ex.Error.Kind)
	}
	as := assessments(trail)
	require.Len(t, as, 1)
	require.False(t, as[0].Published)
	require.Equal(t, evidence.ReasonNotRefuted, as[0].Reason)
	for _, s := range as[0].Sources {
		require.Equal(t, "no stance: the stance provider failed 3 times", s.StanceNote)
	}
	require.Empty(t, as[0].StanceModel)
}

// The run state takes the first assessment of a submission: one that a
// retried assessor appends later, with another outcome, changes nothing,
// in either worker group's state or in what is published.
func TestRepeatedAssessmentChangesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{
		submit: []tools.Correction{withSources(correction(eiffel, "It was completed in 1889."),
			tools.Source{URL: "https://medium.com/@someone/eiffel", Title: "A blog", Snippet: "A blogger says 1889."})},
		approve:    map[string]bool{eiffel: true},
		stances:    []phraseStance{{phrase: "A blogger says 1889.", stance: refutes}},
		finalDelay: 4 * time.Second, // stage 1 is still running when the claim is assessed
	}
	b.install(h.fake)
	p := h.register("repeat001", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)

	sub := events.SubmissionID(events.AttemptRef{InvestigationID: p.investigationID, Series: 1, Attempt: 1}, 0)
	var first runstate.Submission
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		var err error
		first, err = h.val.Store.Submission(context.Background(), sub)
		return err == nil && first.Assessed, "not assessed yet"
	})
	require.False(t, first.Published)
	a := assessments(h.trail(p.investigationID))[0]
	second := *a
	second.Published, second.Reason, second.Failed = true, evidence.ReasonPublished, []string{}
	require.NoError(t, h.eventLog.Append(context.Background(), p.investigationID, &second))

	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Empty(t, got.Claims, "the first assessment withheld it")
	trail := h.trail(p.investigationID)
	require.Len(t, assessments(trail), 2)
	require.Empty(t, completedOf(t, trail).Claims)
	for _, g := range []*runstate.Group{h.inv, h.val} {
		s, err := g.Store.Submission(context.Background(), sub)
		require.NoError(t, err)
		require.True(t, s.Assessed)
		require.False(t, s.Published)
		require.Equal(t, evidence.ReasonNoAuthority, s.AssessReason)
	}
}

// An operator who chooses the validator-only policy publishes every
// approved claim, and the assessment records that choice.
func TestValidatorOnlyPolicyPublishesApprovedClaims(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	h.policy = evidence.ValidatorOnlyPolicy()
	b := &brain{
		submit: []tools.Correction{withSources(correction(eiffel, "It was completed in 1889."),
			tools.Source{URL: "https://medium.com/@someone/eiffel", Title: "A blog", Snippet: "A blogger says 1889."})},
		approve: map[string]bool{eiffel: true},
		stances: []phraseStance{{phrase: "A blogger says 1889.", stance: refutes}},
	}
	got, trail := runOne(t, h, b, "valonly01")
	require.Len(t, got.Claims, 1)
	a := assessments(trail)[0]
	require.True(t, a.Published)
	require.Equal(t, evidence.PublishValidatorOnly, a.PublishMode)
	require.Equal(t, evidence.ValidatorOnlyPolicy().Version(), a.PolicyVersion)
	require.Equal(t, evidence.GateInsufficient, a.Gate4, "the engine's judgement is recorded all the same")
}
