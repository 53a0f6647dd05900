package serving_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// analysesTopic is the (prefixed) analyses topic the test records come from.
const analysesTopic = "test.analyses"

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// analysisRecords encodes evs as consecutive records of one partition of
// the analyses topic from offset first.
func analysisRecords(t testing.TB, first int64, evs []events.Event) []*kgo.Record {
	t.Helper()
	out := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		out[i] = record(t, analysesTopic, 0, first+int64(i), ev)
	}
	return out
}

// jobsJSON reads the fixture's three analyses and renders them as the API
// would, one indented array.
func jobsJSON(t testing.TB, rd *serving.Reader, f *analysistest.Fixture) []byte {
	t.Helper()
	var jobs []json.RawMessage
	for _, id := range []string{f.CompleteID, f.OpinionID, f.FailedID} {
		a, err := rd.Analysis(context.Background(), id)
		require.NoError(t, err, id)
		b, err := json.Marshal(a)
		require.NoError(t, err)
		jobs = append(jobs, b)
	}
	out, err := json.MarshalIndent(jobs, "", "  ")
	require.NoError(t, err)
	return append(out, '\n')
}

// golden compares got with testdata/name (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(got))
}

// TestAnalysisJobs applies every event of the fixture's three analyses and
// compares the reader's job JSON with the golden file; then the same
// events redelivered, re-appended (same ids at later offsets), in other
// batches and shuffled across and within analyses give the same jobs.
func TestAnalysisJobs(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := analysistest.New("serving")
	all := f.All()
	recs := analysisRecords(t, 0, all)
	p := newProjection(t, url, "analyses_one_batch", 2)
	p.handle(t, recs...)
	rd := serving.NewReader(p.pool)
	want := jobsJSON(t, rd, f)
	golden(t, "analysis_jobs.golden.json", want)

	// Spot checks of what the golden file holds.
	ctx := context.Background()
	complete, err := rd.Analysis(ctx, f.CompleteID)
	require.NoError(t, err)
	require.Equal(t, events.StatusComplete, complete.Status)
	require.Equal(t, 2, complete.Attempt, "the retried attempt is the current one")
	require.Equal(t, 2, complete.RequestCount)
	require.Len(t, complete.Claims, 2)
	require.Equal(t, analysistest.FalseClaim, complete.Claims[0].Text)
	require.Equal(t, events.LabelFalse, complete.Verdict.Label)
	require.Equal(t, []serving.VerdictCap{{Rule: "approximate_numeric_evidence", Cap: 70, Before: 88}}, complete.Verdict.Caps)
	require.Nil(t, complete.Claims[1].Verdict, "the opinion claim has no verdict")
	opinion, err := rd.Analysis(ctx, f.OpinionID)
	require.NoError(t, err)
	require.Equal(t, events.LabelOpinion, opinion.Verdict.Label)
	require.Empty(t, opinion.Claims[0].Queries, "an opinion is not searched")
	failed, err := rd.Analysis(ctx, f.FailedID)
	require.NoError(t, err)
	require.Equal(t, events.StatusFailed, failed.Status)
	require.Equal(t, "provider error (HTTP 500)", *failed.Failure)
	require.Nil(t, failed.CompletedAt)

	_, err = rd.Analysis(ctx, events.AnalysisID("content:none", events.AnalysisTypeVerdict, "v1"))
	require.ErrorIs(t, err, serving.ErrNotFound)
	_, err = rd.Analysis(ctx, "not-a-uuid")
	require.ErrorIs(t, err, serving.ErrNotFound)

	// Redelivered: nothing changes.
	full := dumpSchema(t, p.pool)
	p.handle(t, recs...)
	require.Equal(t, full, dumpSchema(t, p.pool))

	// Re-appended: every event a second time at later offsets (a producer
	// retry): the jobs and the event stream are the same.
	p.handle(t, analysisRecords(t, int64(len(recs)), all)...)
	require.Equal(t, string(want), string(jobsJSON(t, rd, f)))
	stream, err := rd.AnalysisEventsFrom(ctx, f.CompleteID, -1, 1000)
	require.NoError(t, err)
	require.Len(t, stream, len(f.Complete))

	// Other batches: the same rows.
	for i, sizes := range [][]int{{1}, {4, 7, 2}} {
		r := newProjection(t, url, "analyses_batches_"+strings.Repeat("x", i+1), 2)
		r.handleInBatches(t, recs, sizes...)
		require.Equal(t, full, dumpSchema(t, r.pool), "batches %v", sizes)
	}

	// Shuffled: the same jobs, whatever the order the steps arrive in.
	for seed := uint64(1); seed <= 3; seed++ {
		shuffled := append([]events.Event{}, all...)
		rand.New(rand.NewPCG(seed, 99)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		r := newProjection(t, url, "analyses_shuffled_"+strings.Repeat("x", int(seed)), 2)
		r.handleInBatches(t, analysisRecords(t, 0, shuffled), 5)
		require.Equal(t, string(want), string(jobsJSON(t, serving.NewReader(r.pool), f)), "seed %d", seed)
	}
}

// TestAnalysisProgress follows the post's analysis event by event: PENDING
// until an attempt starts, RUNNING while it runs (claims, triage, queries
// and verdicts appear as they happen), PENDING again after a retryable
// failure, then COMPLETE with the second attempt's claims only.
func TestAnalysisProgress(t *testing.T) {
	t.Parallel()
	f := analysistest.New("progress")
	p := newServing(t, 2)
	rd := serving.NewReader(p.pool)
	ctx := context.Background()
	type seen struct {
		status         string
		attempt        int
		claims, triage int
		queries        int
		verdict        bool
	}
	var got []seen
	for i, rec := range analysisRecords(t, 0, f.Complete) {
		p.handle(t, rec)
		a, err := rd.Analysis(ctx, f.CompleteID)
		require.NoError(t, err, "after event %d", i)
		s := seen{status: a.Status, attempt: a.Attempt, claims: len(a.Claims), verdict: a.Verdict != nil}
		for _, c := range a.Claims {
			if c.Triage != nil {
				s.triage++
			}
			s.queries += len(c.Queries)
		}
		got = append(got, s)
	}
	pending, running := events.StatusPending, events.StatusRunning
	require.Equal(t, []seen{
		{pending, 0, 0, 0, 0, false},              // requested
		{pending, 0, 0, 0, 0, false},              // requested again
		{running, 1, 0, 0, 0, false},              // attempt 1
		{running, 1, 1, 0, 0, false},              // a claim of attempt 1
		{running, 1, 1, 0, 0, false},              // its failed exchange
		{pending, 1, 1, 0, 0, false},              // failed, retryable
		{running, 2, 0, 0, 0, false},              // attempt 2: attempt 1's claim is gone
		{running, 2, 0, 0, 0, false},              // extract exchange
		{running, 2, 1, 0, 0, false},              // claim 0
		{running, 2, 2, 0, 0, false},              // claim 1
		{running, 2, 2, 1, 0, false},              // triage 0
		{running, 2, 2, 2, 0, false},              // triage 1
		{running, 2, 2, 2, 1, false},              // query
		{running, 2, 2, 2, 2, false},              // failed query
		{running, 2, 2, 2, 2, false},              // stance exchange
		{running, 2, 2, 2, 2, false},              // source
		{running, 2, 2, 2, 2, false},              // source
		{running, 2, 2, 2, 2, false},              // claim verdict
		{running, 2, 2, 2, 2, false},              // verdict exchange
		{running, 2, 2, 2, 2, true},               // post verdict
		{events.StatusComplete, 2, 2, 2, 2, true}, // completed
	}, got)

	// The event stream: every event in log order; exchanges without their
	// raw bodies; a cursor continues after the last offset seen.
	stream, err := rd.AnalysisEventsFrom(ctx, f.CompleteID, -1, 1000)
	require.NoError(t, err)
	require.Len(t, stream, len(f.Complete))
	for i, e := range stream {
		require.Equal(t, f.Complete[i].Type(), e.Type)
		require.True(t, f.Complete[i].Time.Equal(e.Time))
		require.Equal(t, int64(i), e.Offset)
		if e.Type == events.TypeAnalysisExchangeRecordedV1 {
			require.NotContains(t, string(e.Data), "raw_request")
			require.NotContains(t, string(e.Data), "raw_response")
			require.Contains(t, string(e.Data), `"step"`)
		}
	}
	sse, err := json.Marshal(stream[2])
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"analysis.attempt_started.v1","time":"2026-11-23T09:00:03.75Z","data":{"analysis_id":"`+f.CompleteID+
		`","attempt":1,"worker":"worker-1","prompts":[{"name":"verdict-extract","version":"v1","sha256":"`+
		analysistest.Hash("extract prompt v1")+`"},{"name":"stance","version":"v1","sha256":"`+analysistest.Hash("stance prompt v1")+
		`"},{"name":"verdict-summary","version":"v1","sha256":"`+analysistest.Hash("verdict prompt v1")+
		`"}],"provider":"openai-responses","model":"gpt-5","registry_version":"`+analysistest.RegistryVersion+
		`","policy_version":"`+analysistest.PolicyVersion+`","rubric_version":"`+analysistest.RubricVersion+`"}}`, string(sse))
	rest, err := rd.AnalysisEventsFrom(ctx, f.CompleteID, stream[17].Offset, 2)
	require.NoError(t, err)
	require.Equal(t, []int64{18, 19}, []int64{rest[0].Offset, rest[1].Offset})
	none, err := rd.AnalysisEventsFrom(ctx, f.OpinionID, -1, 10)
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = rd.AnalysisEventsFrom(ctx, f.CompleteID, -1, 1001)
	require.Error(t, err)
}

// TestAnalysesOfPosts: the analysis of a post version by prompt version
// (or the latest under any), and the analyses of a post.
func TestAnalysesOfPosts(t *testing.T) {
	t.Parallel()
	f := analysistest.New("of-posts")
	p := newServing(t, 2)
	p.handle(t, analysisRecords(t, 0, f.All())...)
	rd := serving.NewReader(p.pool)
	ctx := context.Background()

	id, err := rd.AnalysisOfPostVersion(ctx, f.PostVersionID, analysistest.PromptVersion)
	require.NoError(t, err)
	require.Equal(t, f.CompleteID, id)
	id, err = rd.AnalysisOfPostVersion(ctx, f.PostVersionID, "")
	require.NoError(t, err)
	require.Equal(t, f.CompleteID, id)
	for _, args := range [][2]string{{f.PostVersionID, "verdict-v2"}, {events.PostVersionID(f.PostID, "other"), ""}, {"x", ""}} {
		_, err = rd.AnalysisOfPostVersion(ctx, args[0], args[1])
		require.ErrorIs(t, err, serving.ErrNotFound, args)
	}

	list, err := rd.AnalysesOfPost(ctx, f.Platform, f.ExternalID, 20)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, f.CompleteID, list[0].ID)
	list, err = rd.AnalysesOfPost(ctx, f.Platform, "unknown", 20)
	require.NoError(t, err)
	require.Empty(t, list)
	list, err = rd.AnalysesOfPost(ctx, "MYSPACE", f.ExternalID, 20)
	require.NoError(t, err)
	require.Empty(t, list)

	many, err := rd.Analyses(ctx, []string{f.OpinionID, f.FailedID, "nope", f.OpinionID})
	require.NoError(t, err)
	require.Len(t, many, 2)
}

// TestHostileAnalysisEvents appends, among the fixture's events, what a
// producer bypassing the worker could write: a claim whose text has a NUL
// and a query whose results do (Postgres refuses both: parked), a claim
// verdict whose label is 10 KB (invalid: parked as undecodable), and a
// 10,000-character claim text (applied). Everything after them is applied,
// and rebuilds in other batches park the same events and hold the same
// rows.
func TestHostileAnalysisEvents(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := analysistest.New("hostile")
	reg := events.NewCatalogRegistry()
	// The opinion's events, with the hostile ones before its completion.
	evs := append([]events.Event{}, f.Opinion...)
	done := evs[len(evs)-1]
	evs = evs[:len(evs)-1]
	ref := events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 1}
	hostile := func(n int, p events.Payload) events.Event {
		ev, err := reg.New(p, events.Meta{ID: "00000000-0000-7000-8000-00000000aa0" + string(rune('0'+n)), Time: done.Time.Add(-time.Millisecond)})
		require.NoError(t, err)
		return ev
	}
	nulClaim := len(evs)
	evs = append(evs, hostile(1, &events.AnalysisClaimExtractedV1{AnalysisRef: ref, ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 5),
		Index: 5, Text: "a\x00b", Context: "c"}))
	evs = append(evs, hostile(2, &events.AnalysisClaimExtractedV1{AnalysisRef: ref, ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 6),
		Index: 6, Text: strings.Repeat("w", 10_000), Context: "c"}))
	nulResult := len(evs)
	evs = append(evs, hostile(3, &events.AnalysisQueryIssuedV1{AnalysisRef: ref, ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 0),
		Query: "q", Kind: "keyword", Results: []events.SearchResultV1{{URL: "https://e.example/", Title: "t\x00", Snippet: "s"}}}))
	bigLabel := len(evs)
	evs = append(evs, hostile(4, &events.AnalysisClaimVerdictV1{AnalysisRef: ref, ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 0),
		Caps: []events.CapV1{}, Label: events.LabelOpinion, Band: events.BandUnverified, Summary: "s"}))
	evs = append(evs, done)
	recs := analysisRecords(t, 0, evs)
	// The 10 KB label goes in after validation, as a hostile producer would write it.
	recs[bigLabel].Value = bytes.Replace(recs[bigLabel].Value, []byte(`"label":"Opinion"`),
		[]byte(`"label":"`+strings.Repeat("L", 10_240)+`"`), 1)

	open := func(schema string) (*projection, *parkingDeadLetters) {
		ctx := context.Background()
		pool, err := postgres.Connect(ctx, url, schema)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		require.NoError(t, pgproj.Migrate(ctx, pool, schema, serving.Migrations(), logging.Discard()))
		dl := &parkingDeadLetters{}
		return &projection{pool: pool, proj: pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(),
			serving.NewApplier(2), dl, logging.Discard())}, dl
	}
	live, dl := open("hostile_analyses")
	live.handle(t, recs...)
	require.Equal(t, []int64{int64(nulClaim), int64(nulResult), int64(bigLabel)}, dl.offsets)
	require.Equal(t, []string{"deterministic", "deterministic", "decode"},
		live.texts(t, `SELECT class FROM projection_parked ORDER BY log_offset`))
	a, err := serving.NewReader(live.pool).Analysis(context.Background(), f.OpinionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusComplete, a.Status, "the completion after them is applied")
	require.Len(t, a.Claims, 2, "the fixture's claim and the long one")
	require.Len(t, a.Claims[1].Text, 10_000)
	require.Nil(t, a.Claims[0].Verdict)

	want := dumpSchema(t, live.pool)
	for i, sizes := range [][]int{{1}, {3, 2}} {
		r, rdl := open("hostile_analyses_" + strings.Repeat("x", i+1))
		r.handleInBatches(t, recs, sizes...)
		require.Equal(t, want, dumpSchema(t, r.pool), "batches %v", sizes)
		require.Equal(t, dl.offsets, rdl.offsets)
	}
}

// BenchmarkAnalysisRead measures reading one job (the fixture's False post:
// two claims, queries, sources, verdicts) and replaying its event stream.
func BenchmarkAnalysisRead(b *testing.B) {
	f := analysistest.New("bench")
	p := newServing(b, 2)
	p.handle(b, analysisRecords(b, 0, f.All())...)
	rd := serving.NewReader(p.pool)
	ctx := context.Background()
	b.Run("Analysis", func(b *testing.B) {
		for b.Loop() {
			if _, err := rd.Analysis(ctx, f.CompleteID); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AnalysisEventsFrom", func(b *testing.B) {
		for b.Loop() {
			if _, err := rd.AnalysisEventsFrom(ctx, f.CompleteID, -1, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
}
