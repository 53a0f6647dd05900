package audit_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
)

// TestAnalysisTrailGolden: the trail of the fixture's False post shows
// every step (both attempts, every exchange with its exact bodies, claims,
// triage, queries, sources, verdicts, the end of each attempt); the public
// one leaves out the bodies, requester hashes and worker names.
func TestAnalysisTrailGolden(t *testing.T) {
	f := analysistest.New("audit")
	// Every event twice (a re-appended event is one step).
	recs := positioned("errata.analyses", 2, append(append([]events.Event{}, f.Complete...), f.Complete...))
	trail, err := audit.BuildAnalysis(f.CompleteID, recs)
	require.NoError(t, err)
	js, err := audit.AnalysisJSON(trail)
	require.NoError(t, err)
	golden(t, "analysis.json", js)
	var text bytes.Buffer
	require.NoError(t, audit.AnalysisText(&text, trail))
	golden(t, "analysis.txt", text.Bytes())
	pub, err := trail.Public()
	require.NoError(t, err)
	pubJS, err := audit.AnalysisJSON(pub)
	require.NoError(t, err)
	golden(t, "analysis.public.json", pubJS)

	require.Equal(t, events.StatusComplete, trail.Status)
	require.Equal(t, len(f.Complete), trail.Steps)
	require.Len(t, trail.Requests, 2)
	require.Len(t, trail.Attempts, 2)
	require.Equal(t, "FAILED", trail.Attempts[0].End.Outcome)
	require.True(t, trail.Attempts[0].End.Retryable)
	a := trail.Attempts[1]
	require.Len(t, a.Exchanges, 3)
	require.Equal(t, []string{"extract", "stance", "verdict"}, []string{a.Exchanges[0].Stage, a.Exchanges[1].Stage, a.Exchanges[2].Stage})
	require.Equal(t, `{"id":"resp_stance"}`, a.Exchanges[1].RawResponse)
	require.Len(t, a.Claims, 2)
	require.Len(t, a.Claims[0].Queries, 2)
	require.Len(t, a.Claims[0].Sources, 2)
	require.Equal(t, []audit.Cap{{Rule: "approximate_numeric_evidence", Cap: 70, Before: 88}}, a.Claims[0].Verdict.Caps)
	require.Equal(t, events.LabelFalse, a.PostVerdict.Label)
	require.Equal(t, int64(4*920), trail.Usage.TotalTokens)
	require.NotContains(t, string(pubJS), "raw_request")
	require.NotContains(t, string(pubJS), analysistest.Hash("requester"))
	require.NotContains(t, string(pubJS), "worker-1")
	require.Contains(t, string(js), analysistest.Hash("requester"))

	for _, tc := range []struct {
		id     string
		evs    []events.Event
		status string
	}{{f.OpinionID, f.Opinion, events.StatusComplete}, {f.FailedID, f.Failed, events.StatusFailed}} {
		tr, err := audit.BuildAnalysis(tc.id, positioned("errata.analyses", 0, tc.evs))
		require.NoError(t, err)
		require.Equal(t, tc.status, tr.Status)
		require.Equal(t, len(tc.evs), tr.Steps)
	}
	running, err := audit.BuildAnalysis(f.CompleteID, positioned("errata.analyses", 0, f.Complete[:9]))
	require.NoError(t, err)
	require.Equal(t, "RUNNING", running.Status)
	_, err = audit.BuildAnalysis(f.OpinionID, positioned("errata.analyses", 0, f.Complete))
	require.ErrorIs(t, err, audit.ErrAnalysisNotFound)
}

// TestAnalysisTrailFromLogAndProjection appends the fixture's analyses to
// real Kafka, reads a trail from the log, projects the topic into
// Postgres, and requires the projection to give the very same trail (a
// hostile event with NUL bytes included: the audit keeps envelopes as
// bytes).
func TestAnalysisTrailFromLogAndProjection(t *testing.T) {
	t.Parallel()
	const partitions = 3
	brokers, topics := testenv.Kafka(t, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := events.NewCatalogRegistry()
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()
	app := producers.NewAppender(producer, reg, topics, nil)
	f := analysistest.New("audit-log")
	nul, err := reg.New(&events.AnalysisClaimExtractedV1{AnalysisRef: events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 1},
		ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 3), Index: 3, Text: "a\x00b", Context: "c"},
		events.Meta{ID: "0194f3a2-7c1e-7b3a-9a55-00000000abcd", Time: analysistest.Start.Add(90 * time.Minute)})
	require.NoError(t, err)
	positions, err := app.Append(ctx, append(f.All(), nul)...)
	require.NoError(t, err)

	src := audit.LogSource{Brokers: brokers, Topics: topics, Registry: reg, Timeout: time.Minute}
	fromLog, err := audit.ReadAnalysisLog(ctx, src, f.CompleteID)
	require.NoError(t, err)
	require.Equal(t, len(f.Complete), fromLog.Steps)
	require.Equal(t, topics.Name(events.TopicAnalyses), fromLog.Requests[0].Step.Position.Topic)
	require.Equal(t, audit.PartitionOf(f.CompleteID, partitions), fromLog.Requests[0].Step.Position.Partition)
	opinion, err := audit.ReadAnalysisLog(ctx, src, f.OpinionID)
	require.NoError(t, err)
	require.Equal(t, "a\x00b", opinion.Attempts[0].Claims[1].Text)
	_, err = audit.ReadAnalysisLog(ctx, src, events.AnalysisID("content:none", events.AnalysisTypeVerdict, "v1"))
	require.ErrorIs(t, err, audit.ErrAnalysisNotFound)
	_, err = audit.ReadAnalysisLog(ctx, src, "nope")
	require.ErrorIs(t, err, audit.ErrInvalidAnalysisID)

	pool, err := postgres.Connect(ctx, testenv.Postgres(t), audit.Schema)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgproj.Migrate(ctx, pool, audit.Schema, audit.Migrations(), logging.Discard()))
	proj := pgproj.NewProjector(audit.ProjectorName, pool, reg, audit.NewApplier(reg),
		kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), "audit-test", logging.Discard()), logging.Discard())
	runCtx, stop := context.WithCancel(ctx)
	r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: topics.Prefix + "projector.audit",
		Topics: []string{topics.Name(events.TopicAnalyses)}, Positions: proj}, proj, logging.Discard())
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(runCtx) }()
	wm := pgproj.NewWatermark(pool, audit.ProjectorName)
	for _, p := range positions {
		require.NoError(t, wm.WaitFor(ctx, p.Topic, p.Partition, p.Offset, time.Minute))
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		require.NoError(t, err)
	}
	reader := audit.NewReader(pool, reg)
	for _, id := range []string{f.CompleteID, f.OpinionID, f.FailedID} {
		want, err := audit.ReadAnalysisLog(ctx, src, id)
		require.NoError(t, err)
		got, err := reader.FullAnalysisTrail(ctx, id)
		require.NoError(t, err)
		w, err := audit.AnalysisJSON(want)
		require.NoError(t, err)
		g, err := audit.AnalysisJSON(got)
		require.NoError(t, err)
		require.Equal(t, string(w), string(g), id)
		pubs, err := reader.AnalysisTrails(ctx, []string{id, "nope"})
		require.NoError(t, err)
		require.Len(t, pubs, 1)
		pub := pubs[id]
		wantPub, err := want.Public()
		require.NoError(t, err)
		p1, _ := audit.AnalysisJSON(wantPub)
		p2, _ := audit.AnalysisJSON(pub)
		require.Equal(t, string(p1), string(p2))
		require.False(t, strings.Contains(string(p2), "raw_response"))
	}
	none, err := reader.AnalysisTrails(ctx, []string{events.AnalysisID("content:none", events.AnalysisTypeVerdict, "v1"), "nope"})
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = reader.FullAnalysisTrail(ctx, "nope")
	require.ErrorIs(t, err, audit.ErrInvalidAnalysisID)
}
