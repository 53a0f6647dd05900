package serving_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// fixtureLog is the audit fixture's posts and investigation as one
// partition of records from offset 0 (the serving projector reads both
// topics alike).
func fixtureLog(t *testing.T, f *audittest.Fixture) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for _, ev := range append(append([]events.Event{}, f.Posts...), f.Investigation...) {
		out = append(out, record(t, postsTopic, 0, int64(len(out)), ev))
	}
	return out
}

// assessedIn returns the fixture's claim_assessed payloads in log order.
func assessedIn(f *audittest.Fixture) []*events.InvestigationClaimAssessedV1 {
	var out []*events.InvestigationClaimAssessedV1
	for _, ev := range f.Investigation {
		if p, ok := ev.Payload.(*events.InvestigationClaimAssessedV1); ok {
			out = append(out, p)
		}
	}
	return out
}

// servedAs is the assessment the serving model should hold for p.
func servedAs(p *events.InvestigationClaimAssessedV1, at time.Time) serving.Assessment {
	a := serving.Assessment{SubmissionID: p.SubmissionID, InvestigationID: p.InvestigationID, Series: p.Series, Attempt: p.Attempt,
		Causal: p.Causal, Features: serving.AssessmentFeatures{EMax: p.EMax, EMean3: p.EMean3, CMax: p.CMax, AgreeDom: p.AgreeDom,
			RelAvg: p.RelAvg, RecMax: p.RecMax, NumOK: p.NumOK}, Raw: p.Raw, Score: p.Score, Verdict: p.Verdict, Gate4: p.Gate4,
		Gate4Sources: p.Gate4Sources, Gate4Quality: p.Gate4Quality, Gate4Agreement: p.Gate4Agreement, RegistryVersion: p.RegistryVersion,
		PolicyVersion: p.PolicyVersion, PublishMode: p.PublishMode, Published: p.Published, Reason: p.Reason, Failed: p.Failed,
		DroppedCount: len(p.Dropped), AssessedAt: at, Sources: []serving.AssessmentSource{}}
	for _, s := range p.Sources {
		a.Sources = append(a.Sources, serving.AssessmentSource{URL: s.URL, Domain: s.Domain, Tier: s.Tier, Rule: s.Rule, Origin: s.Origin,
			Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral, Num: s.Num, Recency: s.Recency})
	}
	return a
}

// TestAssessmentsServed: the audit fixture (one claim published, one
// withheld by the evidence engine) gives both assessments with every
// field; the public claim reads the one that published it; a second
// assessment of a submission, redelivery and rebuilds in other batches
// change nothing.
func TestAssessmentsServed(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := audittest.Complete("serving-assessments", "1860000000000000401")
	recs := fixtureLog(t, f)
	p := newProjection(t, url, "assess_one_batch", 2)
	p.handle(t, recs...)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	assessed := assessedIn(f)
	require.Len(t, assessed, 2)
	var times []time.Time
	for _, ev := range f.Investigation {
		if _, ok := ev.Payload.(*events.InvestigationClaimAssessedV1); ok {
			times = append(times, ev.Time)
		}
	}
	got, err := rd.AssessmentsOfInvestigation(ctx, f.InvestigationID)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i := range got {
		require.True(t, got[i].AssessedAt.Equal(times[i]))
		got[i].AssessedAt = times[i]
	}
	require.Equal(t, []serving.Assessment{servedAs(assessed[0], times[0]), servedAs(assessed[1], times[1])}, got)
	require.True(t, got[0].Published)
	require.False(t, got[1].Published)
	require.Equal(t, audittest.WithheldFailed, got[1].Failed)

	// The public claim reads the assessment that published it; an
	// unknown claim, a non-UUID and another investigation's claim id read
	// nothing.
	claims, err := rd.ClaimsOfInvestigations(ctx, []string{f.InvestigationID})
	require.NoError(t, err)
	require.Len(t, claims[f.InvestigationID], 1, "only the published claim is a claim")
	claimID := claims[f.InvestigationID][0].ID
	byClaim, err := rd.AssessmentsOfClaims(ctx, []string{claimID, events.ClaimID(f.InvestigationID, 1), "not-a-uuid"})
	require.NoError(t, err)
	require.Len(t, byClaim, 1)
	require.Equal(t, assessed[0].SubmissionID, byClaim[claimID].SubmissionID)
	require.Equal(t, got[0].Sources, byClaim[claimID].Sources)
	require.Equal(t, []string{assessed[0].SubmissionID}, p.texts(t, `SELECT submission_id::text FROM claims`))

	// The extension's answer is the published claim, as before.
	st, err := rd.VersionStatusByID(ctx, f.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusComplete, st.InvestigationStatus)
	require.Equal(t, []string{audittest.Claim}, []string{st.Claims[0].Text})

	// A second assessment of the published submission, saying withheld:
	// the first one stays, sources and all.
	want := dumpSchema(t, p.pool, "projection_checkpoints")
	second := *assessed[0]
	second.Published, second.Reason, second.Failed = false, "contested", []string{"contested"}
	second.Sources = second.Sources[:1]
	secondRec := record(t, postsTopic, 0, int64(len(recs)), newEvent(t, &second, times[1].Add(time.Hour)))
	p.handle(t, secondRec)
	require.Equal(t, want, dumpSchema(t, p.pool, "projection_checkpoints"))

	// Redelivered, and rebuilt in other batches: identical.
	all := append(append([]*kgo.Record{}, recs...), secondRec)
	full := dumpSchema(t, p.pool)
	p.handle(t, recs...)
	require.Equal(t, full, dumpSchema(t, p.pool), "redelivery changes nothing")
	for _, sizes := range [][]int{{1}, {3, 2, 5}} {
		r := newProjection(t, url, "assess_rebuild_"+strings.Repeat("x", len(sizes)), 2)
		r.handleInBatches(t, all[:len(recs)], sizes...)
		r.handle(t, all[len(recs):]...)
		require.Equal(t, full, dumpSchema(t, r.pool), "batches %v", sizes)
	}
	require.Contains(t, full, "claim_assessments: (")
	require.Contains(t, full, "assessment_sources: (")
}

// parkingDeadLetters keeps the offsets the projector parks.
type parkingDeadLetters struct {
	mu      sync.Mutex
	offsets []int64
}

func (d *parkingDeadLetters) Send(_ context.Context, rec *kgo.Record, _ error, _ time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.offsets = append(d.offsets, rec.Offset)
	return nil
}

// TestHostileAssessments appends assessments a producer bypassing the
// worker could write, between good events: a 10,000-character rule and
// NUL in a snippet are applied (the snippet is not stored); NUL in a rule
// or a failed rule is what Postgres refuses, so those events are parked,
// and everything after them is applied. Rebuilds park the same.
func TestHostileAssessments(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	f := audittest.Complete("serving-hostile", "1860000000000000402")
	recs := fixtureLog(t, f)
	// The completion last: hostile assessments come before it.
	done, recs := recs[len(recs)-1], recs[:len(recs)-1]
	assessed := assessedIn(f)
	ref := assessed[0].AttemptRef
	hostile := func(seq int, mutate func(*events.InvestigationClaimAssessedV1)) *kgo.Record {
		p := *assessed[1]
		p.SubmissionID = events.SubmissionID(ref, seq)
		p.Sources = append([]events.AssessedSourceV1{}, p.Sources...)
		p.Failed = append([]string{}, p.Failed...)
		mutate(&p)
		return record(t, postsTopic, 0, int64(len(recs)), newEvent(t, &p, base.Add(time.Duration(seq)*time.Minute)))
	}
	long := strings.Repeat("r", 10_000)
	recs = append(recs, hostile(10, func(p *events.InvestigationClaimAssessedV1) { p.Sources[0].Rule = long }))
	recs = append(recs, hostile(11, func(p *events.InvestigationClaimAssessedV1) { p.Sources[1].Snippet = "a\x00b" }))
	nulRule := len(recs)
	recs = append(recs, hostile(12, func(p *events.InvestigationClaimAssessedV1) { p.Sources[2].Rule = "a\x00b" }))
	nulFailed := len(recs)
	recs = append(recs, hostile(13, func(p *events.InvestigationClaimAssessedV1) { p.Failed[1] = "\x00" }))
	done.Offset = int64(len(recs))
	recs = append(recs, done)

	open := func(schema string) (*projection, *parkingDeadLetters) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		pool, err := postgres.Connect(ctx, url, schema)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		require.NoError(t, pgproj.Migrate(ctx, pool, schema, serving.Migrations(), logging.Discard()))
		dl := &parkingDeadLetters{}
		return &projection{pool: pool, proj: pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(),
			serving.NewApplier(2), dl, logging.Discard())}, dl
	}
	live, dl := open("hostile_live")
	live.handle(t, recs...)
	require.Equal(t, []int64{int64(nulRule), int64(nulFailed)}, dl.offsets, "exactly the events Postgres refuses are parked")
	require.Equal(t, []string{
		`22021 invalid byte sequence for encoding "UTF8": 0x00`, `22021 invalid byte sequence for encoding "UTF8": 0x00`,
	}, live.texts(t, `SELECT substring(reason from 'SQLSTATE (\d+)') || ' ' || substring(reason from 'ERROR: (.*) \(SQLSTATE')
		FROM projection_parked ORDER BY log_offset`))
	require.Equal(t, []string{"10000"}, live.texts(t, `SELECT length(rule)::text FROM assessment_sources WHERE length(rule) > 100`))
	require.Equal(t, []string{"4"}, live.texts(t, `SELECT count(*)::text FROM claim_assessments`), "the fixture's two and the two applied")
	require.Equal(t, []string{"COMPLETE"}, live.texts(t, `SELECT status FROM investigations`), "the completion after them is applied")
	require.Equal(t, []string{"deterministic", "deterministic"}, live.texts(t, `SELECT class FROM projection_parked ORDER BY log_offset`))

	want := dumpSchema(t, live.pool)
	for i, sizes := range [][]int{{1}, {4, 3}} {
		r, rdl := open("hostile_rebuild_" + strings.Repeat("x", i+1))
		r.handleInBatches(t, recs, sizes...)
		require.Equal(t, want, dumpSchema(t, r.pool), "batches %v", sizes)
		require.Equal(t, dl.offsets, rdl.offsets)
	}
}
