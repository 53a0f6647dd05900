package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/serving/workload"
)

func TestFormatProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p    replay.Progress
		want string
	}{
		{replay.Progress{Done: 0, Total: 20000}, "s g2 [--------------------]   0%  0/20,000 events  0 ev/s  ETA -"},
		{replay.Progress{Done: 9000, Total: 20000, Rate: 8100.4, ETA: 1400 * time.Millisecond},
			"s g2 [#########-----------]  45%  9,000/20,000 events  8,100 ev/s  ETA 1s"},
		{replay.Progress{Done: 20000, Total: 20000, Rate: 1234567}, "s g2 [####################] 100%  20,000/20,000 events  1,234,567 ev/s  ETA 0s"},
		{replay.Progress{}, "s g2 [####################] 100%  0/0 events  0 ev/s  ETA 0s"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, formatProgress("s g2", tc.p))
	}
}

// What `errata replay` prints for each way a replay ends.
func TestPrintReplay(t *testing.T) {
	t.Parallel()
	plan := replay.Plan{Projection: "audit", Live: 1, Generation: 2}
	boom := errors.New("boom")
	tests := []struct {
		name string
		res  replay.ReplayResult
		opt  replay.ReplayOptions
		err  error
		want string
	}{
		{"switched, old kept", replay.ReplayResult{Plan: plan, Events: 42, Switched: true}, replay.ReplayOptions{}, nil,
			"audit: switched to generation 2 (42 events); readers and projectors follow within 2s\n" +
				"audit: generation 1 kept; drop it with: errata projections drop --projection audit --generation 1\n"},
		{"switched, old dropped", replay.ReplayResult{Plan: plan, Events: 42, Switched: true, Dropped: true}, replay.ReplayOptions{DropOld: true}, nil,
			"audit: switched to generation 2 (42 events); readers and projectors follow within 2s\n" +
				"audit: dropped generation 1\n"},
		{"switched, the drop failed", replay.ReplayResult{Plan: plan, Events: 42, Switched: true}, replay.ReplayOptions{DropOld: true}, boom,
			"audit: switched to generation 2 (42 events); readers and projectors follow within 2s\n"},
		{"built, not switched", replay.ReplayResult{Plan: plan, Events: 42}, replay.ReplayOptions{NoSwitch: true, DropOld: true}, nil,
			"audit: generation 2 built from 42 events; not switched (--no-switch)\n"},
		{"the build failed", replay.ReplayResult{Plan: plan, Events: 7}, replay.ReplayOptions{NoSwitch: true}, boom, ""},
		{"the switch failed", replay.ReplayResult{Plan: plan, Events: 42}, replay.ReplayOptions{}, boom, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			printReplay(&out, tc.res, tc.opt, tc.err)
			require.Equal(t, tc.want, out.String())
		})
	}
}

// What `errata verify` prints for a rebuild that differs from the live
// copy: every live table with the rebuild's verdict, then the first
// differing rows.
func TestPrintVerify(t *testing.T) {
	t.Parallel()
	sum := func(c byte) string { return strings.Repeat(string(c), 64) }
	res := replay.VerifyResult{Projection: "serving", Live: 2, Generation: 3, Events: 1234,
		Tables: []replay.TableCheck{
			{TableSum: replay.TableSum{Table: "posts", Rows: 3, SHA256: sum('a')}, Rebuilt: &replay.TableSum{Table: "posts", Rows: 3, SHA256: sum('a')}},
			{TableSum: replay.TableSum{Table: "views", Rows: 10, SHA256: sum('b')}, Rebuilt: &replay.TableSum{Table: "views", Rows: 9, SHA256: sum('c')}},
			{TableSum: replay.TableSum{Table: "extra", Rows: 1, SHA256: sum('d')}},
		},
		Diffs: []replay.DiffLine{{Live: true, Line: "views: (1,x)"}, {Live: false, Line: "views: (1,y)"}}}
	var out strings.Builder
	printVerify(&out, res)
	require.Equal(t, "serving: live generation 2 vs rebuild from offset 0 (1234 events)\n"+
		"  posts                                     3 rows  aaaaaaaaaaaaaaaa  identical\n"+
		"  views                                    10 rows  bbbbbbbbbbbbbbbb  DIFFERS (rebuild: 9 rows, cccccccccccccccc)\n"+
		"  extra                                     1 rows  dddddddddddddddd  missing in rebuild\n"+
		"serving: DIFFERENT; first differing rows (- live, + rebuild):\n"+
		"  - views: (1,x)\n"+
		"  + views: (1,y)\n", out.String())

	res.Tables, res.Identical, res.Diffs = res.Tables[:1], true, nil
	out.Reset()
	printVerify(&out, res)
	require.Equal(t, "serving: live generation 2 vs rebuild from offset 0 (1234 events)\n"+
		"  posts                                     3 rows  aaaaaaaaaaaaaaaa  identical\n"+
		"serving: identical\n", out.String())
}

// mixedWorkload is a log with registrations, re-registrations and views
// (workload.Generate) plus investigations in every end state written
// directly: requested only, completed with claims, completed clean, failed,
// and failed then completed in a second series. The claims of completions
// come with the evidence engine's assessments (published ones, and one
// withheld beside the two claims of each investigation completed with
// claims in its first series).
func mixedWorkload(t *testing.T) []events.Event {
	t.Helper()
	w := workload.Generate(workload.Spec{
		Seed: 7, Posts: 40, ViewsPerPost: 12, Viewers: 15, IPRanges: 4, Days: 2,
		IPRangeDailyCap: 10, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	reg := events.NewCatalogRegistry()
	at := time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC)
	n := 0
	add := func(p events.Payload) events.Event {
		n++
		ev, err := reg.New(p, events.Meta{ID: uuid.NewString(), Time: at.Add(time.Duration(n) * time.Minute)})
		require.NoError(t, err)
		return ev
	}
	out := append([]events.Event{}, w.Events...)
	i := 0
	for _, ev := range w.Events {
		p, ok := ev.Payload.(*events.PostVersionRegisteredV1)
		if !ok {
			continue
		}
		i++
		id := events.InvestigationID(p.PostVersionID)
		req := &events.InvestigationRequestedV1{InvestigationID: id, PostID: p.PostID, PostVersionID: p.PostVersionID,
			Platform: p.Platform, ExternalID: p.ExternalID, VersionHash: p.VersionHash, Source: events.RequestSourceSelector}
		failed := &events.InvestigationFailedV1{InvestigationID: id, PostID: p.PostID, PostVersionID: p.PostVersionID,
			Provenance: p.Provenance, Reason: "provider_unauthorized: the model provider rejected the key", Attempts: 1, Series: 1}
		completed := func(claims int, series int) *events.InvestigationCompletedV1 {
			c := &events.InvestigationCompletedV1{InvestigationID: id, PostID: p.PostID, PostVersionID: p.PostVersionID,
				Provenance: p.Provenance, PromptVersion: "investigator-fresh@3", Provider: "openai", Model: "gpt-test",
				Claims: []events.ClaimV1{}, Series: series, Attempt: 1}
			words := strings.Fields(p.ContentText)
			for k := 0; k < claims && k < len(words); k++ {
				c.Claims = append(c.Claims, events.ClaimV1{ID: events.ClaimID(id, k), Text: words[k], Context: p.ContentText[:min(80, len(p.ContentText))],
					Summary: fmt.Sprintf("Claim %d of post %d is wrong.", k, i), Reasoning: "Because the record says otherwise.",
					Sources:      []events.SourceV1{{URL: "https://example.org/source", Title: "Source", Snippet: "What the source says."}},
					SubmissionID: events.SubmissionID(events.AttemptRef{InvestigationID: id, Series: series, Attempt: 1}, k)})
			}
			return c
		}
		assessed := func(series, seq int, published bool) *events.InvestigationClaimAssessedV1 {
			return workloadAssessment(events.AttemptRef{InvestigationID: id, Series: series, Attempt: 1}, seq, published)
		}
		switch i % 6 {
		case 0:
			out = append(out, add(req))
		case 1:
			out = append(out, add(req), add(assessed(1, 0, true)), add(assessed(1, 1, true)), add(assessed(1, 2, false)), add(completed(2, 1)))
		case 2:
			out = append(out, add(req), add(completed(0, 1)))
		case 3:
			out = append(out, add(req), add(failed))
		case 4:
			again := *req
			again.Source = events.RequestSourceInvestigateNow
			out = append(out, add(req), add(failed), add(&again), add(assessed(2, 0, true)), add(completed(1, 2)))
		}
	}
	// Verdict analyses, every one ended (a False post, an opinion-only
	// submission, a failed URL submission): the analyst stage runs none.
	return append(out, analysistest.New("replay").All()...)
}

// workloadAssessment is the evidence engine's judgement of submission seq
// of ref under the strict policy: published (a tier-1 and a tier-2 domain
// contradict the claim, Gate 4 MEDIUM), or withheld (only a blog
// contradicts it).
func workloadAssessment(ref events.AttemptRef, seq int, published bool) *events.InvestigationClaimAssessedV1 {
	a := &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
		Queries: []events.EvidenceQueryV1{{Query: "record says otherwise", Kind: "keyword", Results: 2}}, Dropped: []events.DroppedSourceV1{},
		Sources: []events.AssessedSourceV1{
			{URL: "https://www.bls.gov/record", Domain: "bls.gov", Tier: 1, Rule: "exact:bls.gov", Title: "Record", Snippet: "The record says otherwise.",
				Origin: "search", Entail: 0.02, Contradict: 0.95, Neutral: 0.03, Recency: 0.5},
			{URL: "https://www.reuters.com/record", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com", Title: "Record", Snippet: "Not so.",
				Origin: "investigator", Entail: 0.05, Contradict: 0.9, Neutral: 0.05, Recency: 0.5}},
		EMax: 0.05, EMean3: 0.035, CMax: 0.95, AgreeDom: 0, RelAvg: 0.9, RecMax: 0.5, NumOK: 0, Raw: -0.0525, Score: 2,
		Verdict: events.EvidenceRefuted, Gate4: "MEDIUM", Gate4Sources: 2, Gate4Quality: 0.9, Gate4Agreement: 1,
		RegistryVersion: "starter-v1@000000000001", PolicyVersion: "strict-v1@000000000001", PublishMode: "strict",
		Published: true, Reason: "published", Failed: []string{}}
	if !published {
		a.Sources = []events.AssessedSourceV1{{URL: "https://someone.blogspot.com/record", Domain: "someone.blogspot.com", Tier: 4,
			Rule: "parent:blogspot.com", Title: "Blog", Snippet: "Not so.", Origin: "search", Entail: 0.05, Contradict: 0.85, Neutral: 0.1, Recency: 0.5}}
		a.RelAvg, a.CMax, a.Gate4, a.Gate4Sources, a.Gate4Quality = 0.35, 0.85, "INSUFFICIENT", 1, 0.35
		a.Published, a.Reason, a.Failed = false, "no_authoritative_contradiction", []string{"no_authoritative_contradiction", "gate4_below_minimum"}
	}
	return a
}

// TestReplayAndVerifyAfterMixedWorkload is the auditor's guarantee: after a
// mixed workload (registrations, views, investigations through the real
// worker and API, failures, a second series, an update of an investigated
// post), `errata verify` finds every projection identical to a rebuild from
// offset 0; `errata replay` builds generation 2 while the system serves,
// switches readers and the live projector to it, and the system goes on
// (new events reach generation 2, the API answers from it after generation 1
// is dropped), and it still verifies.
func TestReplayAndVerifyAfterMixedWorkload(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s := newStack(t, ctx, "OPENAI_API_KEY="+"sk-instance-test-0123456789")
	s.fake.RequireAPIKey("sk-instance-test-0123456789")
	s.start(t)
	key := addInstanceKey(t, s.env) // waits until the serving projection has it

	require.NoError(t, s.rig.append(ctx, mixedWorkload(t), 250))
	// A real investigation through the API and the worker.
	versionID := s.registerTweet(t)
	status, data := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID},
		map[string]string{"x-api-key": key})
	require.Equal(t, http.StatusOK, status, string(data))
	investigationID := events.InvestigationID(versionID)
	claims := s.waitInvestigated(t, investigationID, time.Minute)
	require.Len(t, claims, 1)

	verify := func() string {
		t.Helper()
		var out, stderr string
		var err error
		// The live projection may still be applying the tail of the log;
		// verify compares at the positions its dump reflects either way.
		out, stderr, err = runErrata(t, s.env, "verify", "--projection", "all")
		require.NoError(t, err, "verify:\n%s\n%s", out, stderr)
		t.Log(out)
		return out
	}
	// What the public GraphQL readers answer before the replay.
	const public = `query($id: ID!) {
		publicInvestigation(investigationId: $id) { investigation { auditTrail } }
		searchInvestigations(query: "Exposition Universelle") { investigations { id } }
		publicMetrics { totalInvestigatedPosts investigatedPostsWithFlags } }`
	// The stack's worker completes the workload's requested investigations
	// on its own; let it finish and every projector catch up, so nothing but
	// what this test appends changes the answers from here on.
	s.waitIdle(t, ctx, time.Minute)
	// ... and the verdict analyses' readers (serving, audit, search).
	const analyses = `query($id: ID!) {
		analysis(id: $id) { status verdict { label band confidence caps { rule cap before } } claims { text } auditTrail }
		searchAnalyses(label: False) { total analyses { id label claims } } }`
	analysisID := analysistest.New("replay").CompleteID
	var analysesBefore map[string]any
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		got, errs := s.gql(t, analyses, map[string]any{"id": analysisID})
		analysesBefore = got
		ok := len(errs) == 0 && got["analysis"] != nil && got["analysis"].(map[string]any)["auditTrail"] != nil &&
			got["searchAnalyses"].(map[string]any)["total"].(float64) == 1
		return ok, string(mustJSON(t, map[string]any{"data": got, "errors": errs}))
	})
	var before map[string]any
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		got, errs := s.gql(t, public, map[string]any{"id": investigationID})
		before = got
		ok := len(errs) == 0 && got["publicInvestigation"] != nil &&
			got["publicInvestigation"].(map[string]any)["investigation"].(map[string]any)["auditTrail"] != nil &&
			len(got["searchInvestigations"].(map[string]any)["investigations"].([]any)) == 1
		return ok, string(mustJSON(t, map[string]any{"data": got, "errors": errs}))
	})
	require.Positive(t, before["publicMetrics"].(map[string]any)["totalInvestigatedPosts"].(float64))

	out := verify()
	for _, name := range projectorNames() {
		require.Contains(t, out, name+": identical", out)
	}

	require.Equal(t, []string{"audit", "metrics", "search", "serving"}, projectorNames())
	out, stderr, err := runErrata(t, s.env, "replay", "--projection", "all")
	require.NoError(t, err, "replay:\n%s\n%s", out, stderr)
	for _, name := range projectorNames() {
		require.Contains(t, out, name+": switched to generation 2")
		require.Contains(t, stderr, name+" g2 [####################] 100%")
	}

	// New events after the switch reach generation 2 through the live worker.
	more := workload.Generate(workload.Spec{
		Seed: 8, Posts: 5, ViewsPerPost: 3, Viewers: 4, IPRanges: 2, Days: 1,
		IPRangeDailyCap: 10, Start: time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC),
	})
	require.NoError(t, s.rig.append(ctx, more.Events, 50))
	want := int64(len(s.logRecords(t)))
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		var n int64
		err := s.rig.pool.QueryRow(ctx, `SELECT COALESCE(sum(next_offset), 0) FROM serving_g2.projection_checkpoints
			WHERE projector = 'serving'`).Scan(&n)
		return err == nil && n == want, fmt.Sprintf("generation 2 applied %d of %d records (%v)", n, want, err)
	})
	// Every projector moved to generation 2 and follows the log there.
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		out, stderr, err := runErrata(t, s.env, "projections", "list")
		if err != nil {
			return false, out + stderr
		}
		for _, name := range projectorNames() {
			if !regexp.MustCompile(`(?m)^` + name + ` .*\(active\)  g2 applied [0-9]+ of [0-9]+ events \(lag 0\)$`).MatchString(out) {
				return false, out
			}
		}
		return true, out
	})

	out, stderr, err = runErrata(t, s.env, "projections", "drop", "--projection", "serving", "--generation", "2")
	require.Error(t, err, "the active generation cannot be dropped")
	require.Contains(t, stderr+out, "is active")
	for _, name := range projectorNames() {
		out, stderr, err = runErrata(t, s.env, "projections", "drop", "--projection", name, "--generation", "1")
		require.NoError(t, err, "%s\n%s", out, stderr)
	}
	out, _, err = runErrata(t, s.env, "projections", "list")
	require.NoError(t, err)
	for _, name := range projectorNames() {
		require.Regexp(t, `(?m)^`+name+` +generations: 2 \(active\)`, out)
	}

	// The GraphQL readers (audit trail, search alias, metrics database)
	// moved to generation 2 with the projectors: generation 1 is gone and
	// they give the same answers as before the switch, the trail byte for
	// byte (the events appended since are other posts' registrations and
	// views, which change none of them).
	wantJSON := string(mustJSON(t, before))
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		got, errs := s.gql(t, public, map[string]any{"id": investigationID})
		if len(errs) > 0 {
			return false, string(mustJSON(t, errs))
		}
		gotJSON := string(mustJSON(t, got))
		return gotJSON == wantJSON, "got  " + gotJSON + "\nwant " + wantJSON
	})
	wantAnalyses := string(mustJSON(t, analysesBefore))
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		got, errs := s.gql(t, analyses, map[string]any{"id": analysisID})
		if len(errs) > 0 {
			return false, string(mustJSON(t, errs))
		}
		gotJSON := string(mustJSON(t, got))
		return gotJSON == wantAnalyses, "got  " + gotJSON + "\nwant " + wantAnalyses
	})

	// The API reads generation 2: generation 1 no longer exists.
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		status, data := s.call(t, http.MethodGet, "getInvestigation", map[string]string{"investigationId": investigationID}, nil)
		if status != http.StatusOK {
			return false, string(data)
		}
		var got struct {
			State  string            `json:"investigationState"`
			Claims []json.RawMessage `json:"claims"`
		}
		require.NoError(t, json.Unmarshal(data, &got))
		return got.State == "INVESTIGATED" && len(got.Claims) == 1, string(data)
	})
	out = verify()
	for _, name := range projectorNames() {
		require.Contains(t, out, name+": live generation 2 vs rebuild", out)
		require.Contains(t, out, name+": identical", out)
	}
}

// waitIdle waits until the stack's writers are idle: the worker has ended
// every requested investigation (none is PENDING or PROCESSING in the
// serving projection) and every rebuildable projection has applied the
// whole log (lag 0). Only what the test appends changes anything after.
func (s *stack) waitIdle(t *testing.T, ctx context.Context, timeout time.Duration) {
	t.Helper()
	reader := serving.NewReader(s.rig.pool)
	testenv.Eventually(t, timeout, func() (bool, string) {
		byStatus, err := reader.InvestigationsByStatus(ctx)
		if err != nil {
			return false, err.Error()
		}
		open := byStatus[events.StatusPending] + byStatus[events.StatusProcessing]
		return open == 0, fmt.Sprintf("investigations by status: %v", byStatus)
	})
	testenv.Eventually(t, timeout, func() (bool, string) {
		out, stderr, err := runErrata(t, s.env, "projections", "list")
		if err != nil {
			return false, out + stderr
		}
		for _, name := range projectorNames() {
			if !regexp.MustCompile(`(?m)^` + name + ` .*\(active\)  g[0-9]+ applied ([0-9]+) of ([0-9]+) events \(lag 0\)$`).MatchString(out) {
				return false, out
			}
		}
		return true, out
	})
}
