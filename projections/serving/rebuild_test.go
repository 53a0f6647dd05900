package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// TestRebuildFromOffsetZeroIsIdentical projects a mixed log live (posts,
// views, API keys, investigation requests, anomalies, configurations,
// experiments, re-processings, appeals), then rebuilds the
// serving projection from offset 0 of the same topics into a fresh schema
// with a new consumer group, and requires every table to be identical.
func TestRebuildFromOffsetZeroIsIdentical(t *testing.T) {
	t.Parallel()
	const ipCap = 4
	s := teststack.Serving(t, teststack.Options{IPRangeDailyCap: ipCap})
	w := workload.Generate(workload.Spec{
		Seed: 11, Posts: 60, ViewsPerPost: 30, Viewers: 25, IPRanges: 5, Days: 2,
		IPRangeDailyCap: ipCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	at := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	extra := []events.Payload{}
	for i, ev := range w.Events {
		reg, ok := ev.Payload.(*events.PostVersionRegisteredV1)
		if !ok || i%7 != 0 {
			continue
		}
		extra = append(extra,
			&events.InvestigationRequestedV1{
				InvestigationID: events.InvestigationID(reg.PostVersionID), PostID: reg.PostID, PostVersionID: reg.PostVersionID,
				Platform: reg.Platform, ExternalID: reg.ExternalID, VersionHash: reg.VersionHash, Source: events.RequestSourceSelector,
			},
			&events.PostIntegrityAnomalyRecordedV1{
				PostID: reg.PostID, PostVersionID: reg.PostVersionID, Platform: reg.Platform, ExternalID: reg.ExternalID,
				Kind: events.AnomalyContentMismatch, Field: "content_hash", ObservedValue: "a", ServerValue: "b",
			})
	}
	sha := hex64("key-1")
	extra = append(extra, &events.APIKeyAddedV1{KeyID: events.APIKeyID(sha), KeySHA256: sha, Label: "one"},
		&events.APIKeyRevokedV1{KeyID: events.APIKeyID(sha), Reason: "rotated"})
	all := append([]events.Event{}, w.Events...)
	for i, p := range extra {
		all = append(all, newEvent(t, p, at.Add(time.Duration(i)*time.Second)))
	}
	// Configurations, a promotion, an experiment, re-processed
	// investigations and appeals: the control events, the investigations
	// and the appeals land in different partitions of the investigations
	// topic, so the rebuild applies them in another interleaving.
	cw := newControlWorld(t)
	strictID := events.ConfigurationID(cw.strict)
	control := append(cw.all(), newEvent(t, promoted(strictID, "", false), at.Add(time.Hour)),
		newEvent(t, started("rebuild-exp", strictID, events.ConfigurationID(cw.cand), 2500), at.Add(time.Hour+time.Second)))
	s.AppendAndWait(t, all...)
	require.NoError(t, workload.Verify(context.Background(), s.Pool, w.Expect))
	s.AppendAndWait(t, control...)

	// Rebuild into schema "rebuild" of the same database.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := postgres.Connect(ctx, s.DBURL, "rebuild")
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgproj.Migrate(ctx, pool, "rebuild", serving.Migrations(), logging.Discard()))
	proj := pgproj.NewProjector(serving.ProjectorName, pool, s.Registry, serving.NewApplier(ipCap), &deadLetters{}, logging.Discard())
	var topics []string
	for _, tp := range s.Registry.Topics() {
		topics = append(topics, s.Topics.Name(tp))
	}
	r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: s.Brokers, Group: s.Topics.Prefix + "rebuild", Topics: topics, Positions: proj}, proj, logging.Discard())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	rebuilt := pgproj.NewWatermark(pool, serving.ProjectorName)
	var ends []struct {
		topic string
		part  int32
		next  int64
	}
	rows, err := s.Pool.Query(ctx, `SELECT topic, partition, next_offset FROM projection_checkpoints`)
	require.NoError(t, err)
	for rows.Next() {
		var e struct {
			topic string
			part  int32
			next  int64
		}
		require.NoError(t, rows.Scan(&e.topic, &e.part, &e.next))
		ends = append(ends, e)
	}
	rows.Close()
	for _, e := range ends {
		require.NoError(t, rebuilt.WaitFor(ctx, e.topic, e.part, e.next-1, time.Minute))
	}
	cancel()
	require.NoError(t, <-done)

	require.Equal(t, dumpSchema(t, s.Pool), dumpSchema(t, pool), "a rebuild from offset 0 must equal the live projection")
	for _, table := range []string{"analysis_configurations", "configuration_promotions", "experiments", "appeals"} {
		require.NotEmpty(t, (&projection{pool: pool}).texts(t, `SELECT count(*)::text FROM `+table+` HAVING count(*) > 0`), table)
	}
	require.Equal(t, []string{"1"}, (&projection{pool: pool}).texts(t, `SELECT count(*)::text FROM claims WHERE retracted_at IS NOT NULL`))
}
