package analytics_test

import (
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// cohortLog builds the events of an experiment with two arms: a declared
// candidate configuration, an experiment splitting posts between the
// default configuration (control) and the candidate, investigations whose
// claims are published or withheld at different Gate 4 levels, model
// exchanges with usage, appeals (one retracts, one is upheld, one stays
// open), and one investigation outside the experiment.
type cohortLog struct {
	reg *events.Registry
	n   int
	at  time.Time
	evs []events.Event
}

var cohortStart = time.Date(2026, 5, 4, 8, 0, 0, 0, time.UTC)

func (l *cohortLog) add(t *testing.T, p events.Payload, after time.Duration) {
	t.Helper()
	l.n++
	l.at = l.at.Add(after)
	ev, err := l.reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint("cohort-", l.n))).String(), Time: l.at})
	require.NoError(t, err)
	l.evs = append(l.evs, ev)
}

func cohortHash(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// cohortPost is one investigated post of the fixture: how many claims its
// investigation publishes and withholds, its tokens and its latency.
type cohortPost struct {
	published, withheld int
	gate4               []string // per assessed claim, published ones first
	tokens              int64
	latency             time.Duration
	appeals             []string // per published claim: "", "RETRACTED", "UPHELD" or "OPEN"
}

const (
	cohortPolicy   = "strict-v1@0123456789ab"
	cohortRegistry = "starter-v1@5ca1ab1e0000"
)

func cohortEvents(t *testing.T) (evs []events.Event, experimentID, candidateID string) {
	t.Helper()
	l := &cohortLog{reg: events.NewCatalogRegistry(), at: cohortStart}
	candidate := events.AnalysisConfigurationV1{Name: "mini-v2", Model: "gpt-5-mini", InvestigatorPrompt: "v2",
		ValidatorPrompt: "v1", Policy: cohortPolicy}
	candidateID = events.ConfigurationID(candidate)
	l.add(t, &events.ConfigurationDeclaredV1{ConfigurationID: candidateID, Configuration: candidate, Operator: "ana",
		Reason: "a smaller model with the second investigator prompt"}, time.Minute)
	experimentID = events.ExperimentID("mini-vs-default")
	l.add(t, &events.ExperimentStartedV1{ExperimentID: experimentID, Name: "mini-vs-default", ControlConfigurationID: "",
		CandidateConfigurationID: candidateID, CandidateShareBP: 5000, Operator: "ana", Reason: "compare the arms"}, time.Minute)

	// Posts are assigned by events.ExperimentArm; the fixture takes the
	// first external ids that fill each arm with its planned posts.
	plans := map[string][]cohortPost{
		events.ArmControl: {
			{published: 2, withheld: 1, gate4: []string{"HIGH", "MEDIUM", "MEDIUM"}, tokens: 9000, latency: 90 * time.Second, appeals: []string{"RETRACTED", "UPHELD"}},
			{published: 1, withheld: 0, gate4: []string{"HIGH"}, tokens: 7000, latency: 70 * time.Second, appeals: []string{"OPEN"}},
			{published: 0, withheld: 2, gate4: []string{"INSUFFICIENT", "LOW"}, tokens: 8000, latency: 60 * time.Second},
			{published: 0, withheld: 0, tokens: 5000, latency: 40 * time.Second},
		},
		events.ArmCandidate: {
			{published: 1, withheld: 1, gate4: []string{"HIGH", "INSUFFICIENT"}, tokens: 3000, latency: 30 * time.Second, appeals: []string{""}},
			{published: 0, withheld: 1, gate4: []string{"INSUFFICIENT"}, tokens: 2000, latency: 20 * time.Second},
			{published: 0, withheld: 0, tokens: 1000, latency: 10 * time.Second},
		},
	}
	next := map[string]int{}
	for ext := 9100; next[events.ArmControl] < len(plans[events.ArmControl]) || next[events.ArmCandidate] < len(plans[events.ArmCandidate]); ext++ {
		postID := events.PostID(events.PlatformX, fmt.Sprint(ext))
		pvid := events.PostVersionID(postID, cohortHash(fmt.Sprint("version-", ext)))
		arm := events.ExperimentArm(experimentID, pvid, 5000)
		if next[arm] == len(plans[arm]) {
			continue
		}
		plan := plans[arm][next[arm]]
		next[arm]++
		cfgID, cfg := "", (*events.AnalysisConfigurationV1)(nil)
		if arm == events.ArmCandidate {
			cfgID, cfg = candidateID, &candidate
		}
		cohortInvestigation(t, l, ext, cfgID, cfg, experimentID, arm, plan)
	}
	// Outside the experiment: a re-processing under the candidate of a
	// post the default configuration investigated.
	cohortInvestigation(t, l, 9900, "", nil, "", "", cohortPost{published: 1, gate4: []string{"MEDIUM"}, tokens: 6000, latency: 50 * time.Second})
	first := events.InvestigationID(events.PostVersionID(events.PostID(events.PlatformX, "9900"), cohortHash("version-9900")))
	cohortInvestigationSuperseding(t, l, 9900, candidateID, &candidate, first,
		cohortPost{published: 0, withheld: 1, gate4: []string{"LOW"}, tokens: 2500, latency: 25 * time.Second})
	l.add(t, &events.ExperimentStoppedV1{ExperimentID: experimentID, Operator: "ana", Reason: "enough posts"}, time.Minute)
	return l.evs, experimentID, candidateID
}

func cohortInvestigation(t *testing.T, l *cohortLog, ext int, cfgID string, cfg *events.AnalysisConfigurationV1, experimentID, arm string, plan cohortPost) {
	t.Helper()
	cohortInvestigationSuperseding(t, l, ext, cfgID, cfg, "", plan, experimentID, arm)
}

func cohortInvestigationSuperseding(t *testing.T, l *cohortLog, ext int, cfgID string, cfg *events.AnalysisConfigurationV1, supersedes string,
	plan cohortPost, experiment ...string) {
	t.Helper()
	externalID := fmt.Sprint(ext)
	postID := events.PostID(events.PlatformX, externalID)
	vh := cohortHash("version-" + externalID)
	pvid := events.PostVersionID(postID, vh)
	text := "Post " + externalID + " says the Eiffel Tower was finished in 1925."
	if supersedes == "" {
		l.add(t, &events.PostVersionRegisteredV1{PostID: postID, PostVersionID: pvid, Platform: events.PlatformX, ExternalID: externalID,
			URL: "https://x.com/someone/status/" + externalID, VersionHash: vh, ContentHash: cohortHash(text),
			OccurrencesHash: cohortHash("occurrences:none"), ContentText: text, WordCount: 11, Provenance: events.ProvenanceClientFallback,
			ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
			X: &events.XMetaV1{TweetID: externalID, Text: text, AuthorHandle: "someone", MediaURLs: []string{}}}, time.Minute)
	}
	invID := events.InvestigationIDFor(pvid, cfgID)
	req := &events.InvestigationRequestedV1{InvestigationID: invID, PostID: postID, PostVersionID: pvid, Platform: events.PlatformX,
		ExternalID: externalID, VersionHash: vh, Source: events.RequestSourceSelector, UniqueViewScore: 2,
		ConfigurationID: cfgID, Configuration: cfg, Supersedes: supersedes}
	if supersedes != "" {
		req.Source = events.RequestSourceReprocess
	}
	if len(experiment) == 2 && experiment[0] != "" {
		req.ExperimentID, req.Arm = experiment[0], experiment[1]
	}
	l.add(t, req, time.Minute)
	requestedAt := l.at
	ref := events.AttemptRef{InvestigationID: invID, Series: 1, Attempt: 1}
	model := "gpt-5"
	if cfg != nil {
		model = cfg.Model
	}
	prompt := events.PromptRefV1{Name: "investigator", Version: "v1", SHA256: cohortHash("investigator v1")}
	// Two exchanges share the tokens: stage 1 and one assessment.
	for i, stage := range []string{events.StageInvestigator, events.StageAssessor} {
		x := &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: stage, Round: 1, Prompt: prompt, Provider: "openai-responses",
			Model: model, HTTPStatus: 200, DurationMS: plan.latency.Milliseconds() / 4, RawRequest: json.RawMessage(`{}`),
			Response: json.RawMessage(`{}`), ToolResults: []events.ToolResultV1{},
			Usage: events.UsageV1{InputTokens: plan.tokens * 3 / 4 / 2, CachedInputTokens: plan.tokens / 8 / 2,
				OutputTokens: plan.tokens / 4 / 2, TotalTokens: plan.tokens / 2}}
		if stage == events.StageAssessor {
			x.SubmissionID = events.SubmissionID(ref, 0)
		}
		l.add(t, x, time.Duration(i+1)*time.Second)
	}
	claims := []events.ClaimV1{}
	for i := range plan.published + plan.withheld {
		sub := events.SubmissionID(ref, i)
		published := i < plan.published
		reason, failed := "published", []string{}
		if !published {
			reason, failed = "no_authoritative_contradiction", []string{"no_authoritative_contradiction"}
			if plan.gate4[i] == "INSUFFICIENT" || plan.gate4[i] == "LOW" {
				reason, failed = "gate4_below_minimum", []string{"gate4_below_minimum"}
			}
		}
		l.add(t, &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: sub, Queries: []events.EvidenceQueryV1{},
			Sources: []events.AssessedSourceV1{}, Dropped: []events.DroppedSourceV1{}, Failed: failed, Verdict: events.EvidenceRefuted,
			Score: 80, Raw: 0.7, Gate4: plan.gate4[i], RegistryVersion: cohortRegistry, PolicyVersion: cohortPolicy,
			PublishMode: "strict", Published: published, Reason: reason}, time.Second)
		if published {
			n := len(claims)
			claims = append(claims, events.ClaimV1{ID: events.ClaimID(invID, n), Text: fmt.Sprint("claim ", n, " of ", externalID),
				Context: text, Summary: "The tower was finished in 1889.", Reasoning: "Official history.", SubmissionID: sub,
				Sources: []events.SourceV1{{URL: "https://www.toureiffel.paris/en/the-monument/history", Title: "History", Snippet: "1889"}}})
		}
	}
	l.at = requestedAt.Add(plan.latency - time.Second)
	l.add(t, &events.InvestigationCompletedV1{InvestigationID: invID, PostID: postID, PostVersionID: pvid,
		Provenance: events.ProvenanceClientFallback, PromptVersion: "investigator@v1", Provider: "openai-responses", Model: model,
		Claims: claims, Series: 1, Attempt: 1, ConfigurationID: cfgID}, time.Second)
	for i, outcome := range plan.appeals {
		if outcome == "" {
			continue
		}
		claimID := claims[i].ID
		key, reason, urls := cohortHash("reader-"+claimID), "The claim is right: see the archive of the period.", []string{"https://example.org/archive"}
		appealID := events.AppealID(claimID, key, reason, urls)
		l.add(t, &events.AppealFiledV1{AppealID: appealID, ClaimID: claimID, InvestigationID: invID, PostID: postID, PostVersionID: pvid,
			Role: events.AppealRoleReader, Reason: reason, URLs: urls, RequesterKey: key}, time.Hour)
		if outcome != "OPEN" {
			l.add(t, &events.AppealDecidedV1{AppealID: appealID, ClaimID: claimID, InvestigationID: invID, Outcome: outcome,
				Reason: "re-investigated with the appeal's source", PolicyVersion: cohortPolicy}, time.Hour)
		}
	}
}

// experimentQueries returns the sql blocks of README.md's experiments
// section.
func experimentQueries(t *testing.T) []string {
	t.Helper()
	body, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(body)
	const heading = "## For analysts: configurations and experiments in ClickHouse"
	i := strings.Index(s, heading)
	require.GreaterOrEqual(t, i, 0, "README.md lacks %q", heading)
	section := s[i+len(heading):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// TestREADMEExperimentQueries runs the README's experiment examples on a
// database the projector filled with two arms and compares every answer
// with testdata/readme_experiments.golden (go test -update rewrites it;
// read the diff). The same log fed again, and fed one event per batch
// into a fresh database, gives the same dump.
func TestREADMEExperimentQueries(t *testing.T) {
	evs, experimentID, candidateID := cohortEvents(t)
	recs := fixtureRecords(t, evs...)
	f := newFixture(t, 0)
	f.feed(t, inBatches(recs, 50))
	queries := experimentQueries(t)
	require.Len(t, queries, 6)

	var got strings.Builder
	for i, q := range queries {
		answer := curlQuery(t, f.url, f.database, q)
		require.NotEmpty(t, strings.TrimSpace(answer), "README experiment query %d answers nothing:\n%s", i+1, q)
		fmt.Fprintf(&got, "-- query %d\n%s", i+1, answer)
	}
	// Ids are derived, so the golden file names them.
	out := strings.NewReplacer(experimentID, "<experiment mini-vs-default>", candidateID, "<configuration mini-v2>").Replace(got.String())
	golden := filepath.Join("testdata", "readme_experiments.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), out)
	require.Empty(t, parkedRows(t, f))

	before := f.dump(t)
	f.feed(t, inBatches(recs, 3))
	require.Equal(t, string(before), string(f.dump(t)), "redelivery changes nothing")
	rebuilt := newFixture(t, 2)
	rebuilt.feed(t, inBatches(recs, 1))
	require.Equal(t, string(before), string(rebuilt.dump(t)), "a rebuild from offset 0 is identical")
}

// TestCohortHostileEvents appends what a confused or hostile producer
// could: a decision of an appeal never filed, a second decision of a
// decided appeal, a stop of an unknown experiment, another configuration
// reusing a declared name. Each is stored (nothing parked) and none
// changes the arms' figures: a decision counts only for a filed appeal,
// its first decision wins, and investigations keep the configuration
// their request recorded.
func TestCohortHostileEvents(t *testing.T) {
	evs, experimentID, _ := cohortEvents(t)
	f := newFixture(t, 0)
	f.feed(t, inBatches(fixtureRecords(t, evs...), 50))
	arms := `SELECT arm, investigations, appeals_filed, claims_retracted, round(retraction_rate, 4) FROM experiment_arms ORDER BY arm`
	before := curlQuery(t, f.url, f.database, arms)
	require.Equal(t, "CANDIDATE\t3\t0\t0\t0\nCONTROL\t4\t3\t1\t0.3333\n", before)

	var filed *events.AppealFiledV1
	for _, ev := range evs {
		if p, ok := ev.Payload.(*events.AppealFiledV1); ok && filed == nil {
			filed = p
		}
	}
	require.NotNil(t, filed)
	l := &cohortLog{reg: events.NewCatalogRegistry(), at: cohortStart.Add(48 * time.Hour), n: 10_000}
	l.add(t, &events.AppealDecidedV1{AppealID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("never filed")).String(), ClaimID: filed.ClaimID,
		InvestigationID: filed.InvestigationID, Outcome: events.AppealRetracted, Reason: "no such appeal", PolicyVersion: cohortPolicy}, time.Minute)
	l.add(t, &events.AppealDecidedV1{AppealID: filed.AppealID, ClaimID: filed.ClaimID, InvestigationID: filed.InvestigationID,
		Outcome: events.AppealUpheld, Reason: "a second decision", PolicyVersion: cohortPolicy}, time.Minute)
	l.add(t, &events.ExperimentStoppedV1{ExperimentID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("unknown")).String(), Operator: "eve",
		Reason: "stop what never ran"}, time.Minute)
	l.add(t, &events.ExperimentStoppedV1{ExperimentID: experimentID, Operator: "eve", Reason: "stopped twice"}, time.Minute)
	again := events.AnalysisConfigurationV1{Name: "mini-v2", Model: "gpt-5", InvestigatorPrompt: "v1", ValidatorPrompt: "v1", Policy: cohortPolicy}
	l.add(t, &events.ConfigurationDeclaredV1{ConfigurationID: events.ConfigurationID(again), Configuration: again, Operator: "eve",
		Reason: "the same name, another configuration"}, time.Minute)
	all := append(append([]events.Event{}, evs...), l.evs...)
	f.feed(t, inBatches(fixtureRecords(t, all...), 50))
	require.Empty(t, parkedRows(t, f))
	require.Equal(t, before, curlQuery(t, f.url, f.database, arms))
	require.Equal(t, "4\n", curlQuery(t, f.url, f.database, "SELECT count() FROM appeals FINAL WHERE kind = 'DECIDED'"), "two decisions, then two more")
	require.Equal(t, "1\t1\n", curlQuery(t, f.url, f.database,
		"SELECT countIf(stopped_at IS NOT NULL AND name = ''), countIf(name = 'mini-vs-default') FROM experiment_names WHERE stopped_at IS NOT NULL"))
}
