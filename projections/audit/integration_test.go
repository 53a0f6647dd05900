package audit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
)

// TestTrailFromLogAndProjection appends a complete and a pending
// investigation (and their posts) to real Kafka, reads both trails from
// the log, projects the topics into Postgres, and requires the projection
// to return the very same trail, the public one only when COMPLETE.
func TestTrailFromLogAndProjection(t *testing.T) {
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

	done := audittest.Complete("it-complete", "1860000000000000101")
	pending := audittest.Pending("it-pending", "1860000000000000102")
	var all []events.Event
	for _, f := range []*audittest.Fixture{done, pending} {
		all = append(all, f.Posts...)
		all = append(all, f.Investigation...)
	}
	positions, err := app.Append(ctx, all...)
	require.NoError(t, err)

	src := audit.LogSource{Brokers: brokers, Topics: topics, Registry: reg, Timeout: time.Minute}
	fromLog, err := audit.ReadLog(ctx, src, done.InvestigationID)
	require.NoError(t, err)
	require.Equal(t, events.StatusComplete, fromLog.Status)
	require.Equal(t, len(done.Investigation), fromLog.Steps)
	require.Equal(t, int64(3), fromLog.PostVersion.Registrations)
	require.Equal(t, topics.Name(events.TopicInvestigations), fromLog.Result.Step.Position.Topic)
	require.Equal(t, audit.PartitionOf(done.InvestigationID, partitions), fromLog.Result.Step.Position.Partition)
	require.Equal(t, int64(7830), fromLog.Usage.TotalTokens)
	// ReadLog read only the partition it computed; every step is there, at
	// increasing offsets, as the producer wrote them.
	var last int64 = -1
	for _, a := range fromLog.Attempts {
		for _, x := range a.Exchanges {
			require.Equal(t, audit.PartitionOf(done.InvestigationID, partitions), x.Step.Position.Partition)
			require.Greater(t, x.Step.Position.Offset, last)
			last = x.Step.Position.Offset
		}
	}
	require.Equal(t, audit.PartitionOf(done.PostID, partitions), fromLog.PostVersion.FirstRegistered.Position.Partition)

	pendingFromLog, err := audit.ReadLog(ctx, src, pending.InvestigationID)
	require.NoError(t, err)
	require.Equal(t, events.StatusPending, pendingFromLog.Status)

	unknown := events.InvestigationID(events.PostVersionID(done.PostID, "no-such-version"))
	_, err = audit.ReadLog(ctx, src, unknown)
	require.ErrorIs(t, err, audit.ErrNotFound)
	_, err = audit.ReadLog(ctx, src, "not-an-id")
	require.ErrorIs(t, err, audit.ErrInvalidID)

	// The projection.
	dbURL := testenv.Postgres(t)
	pool, err := postgres.Connect(ctx, dbURL, audit.Schema)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgproj.Migrate(ctx, pool, audit.Schema, audit.Migrations(), logging.Discard()))
	require.NoError(t, pgproj.Migrate(ctx, pool, audit.Schema, audit.Migrations(), logging.Discard()), "migrations are idempotent")
	proj := pgproj.NewProjector(audit.ProjectorName, pool, reg, audit.NewApplier(reg),
		kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), "audit-test", logging.Discard()), logging.Discard())
	runCtx, stop := context.WithCancel(ctx)
	r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: topics.Prefix + "projector.audit",
		Topics: []string{topics.Name(events.TopicInvestigations), topics.Name(events.TopicPosts)}, Positions: proj}, proj, logging.Discard())
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
	full, err := reader.FullTrail(ctx, done.InvestigationID)
	require.NoError(t, err)
	requireSameJSON(t, fromLog, full, "the projection's trail is the log's")
	pendingFull, err := reader.FullTrail(ctx, pending.InvestigationID)
	require.NoError(t, err)
	requireSameJSON(t, pendingFromLog, pendingFull, "also while pending")

	public, err := reader.Trail(ctx, done.InvestigationID)
	require.NoError(t, err)
	require.NotNil(t, public)
	wantPublic, err := fromLog.Public()
	require.NoError(t, err)
	requireSameJSON(t, wantPublic, public, "the public trail of a complete investigation")
	require.Empty(t, public.Attempts[1].Exchanges[0].RawRequest)

	none, err := reader.Trail(ctx, pending.InvestigationID)
	require.NoError(t, err)
	require.Nil(t, none, "no public trail before COMPLETE")
	none, err = reader.Trail(ctx, unknown)
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = reader.FullTrail(ctx, unknown)
	require.ErrorIs(t, err, audit.ErrNotFound)
	_, err = reader.Trail(ctx, "x")
	require.ErrorIs(t, err, audit.ErrInvalidID)
}

func requireSameJSON(t *testing.T, want, got *audit.Trail, msg string) {
	t.Helper()
	w, err := audit.JSON(want)
	require.NoError(t, err)
	g, err := audit.JSON(got)
	require.NoError(t, err)
	require.Equal(t, string(w), string(g), msg)
}
