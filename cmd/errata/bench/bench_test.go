package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/cmd/errata/bench"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestRunTiny runs the whole bench with tiny sizes on the real services and
// checks its structure and exact counts; speed is never asserted.
func TestRunTiny(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.Postgres(t) // skips (or fails under ERRATA_INTEGRATION=1) without Postgres
	testenv.Kafka(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	res, err := bench.Run(ctx, bench.Options{
		Brokers: cfg.KafkaBrokers, AdminDatabaseURL: cfg.DatabaseURL, HashSecret: "bench-test",
		Partitions: 2, APIDuration: 1500 * time.Millisecond, Concurrency: 3, Words: 40,
		FreshnessSamples: 5, FreshnessInterval: 5 * time.Millisecond, ProjectionPosts: 10, ViewsPerPost: 9,
		Progress: &progress,
	})
	require.NoError(t, err, progress.String())

	for _, c := range res.Checks {
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	require.False(t, res.Flagged)
	require.GreaterOrEqual(t, len(res.Checks), 15)

	// The load generator's counts are exact and every view follows a register.
	require.Positive(t, res.API.Registers)
	require.Equal(t, res.API.Registers, res.API.Views)
	require.Equal(t, res.API.Registers, len(res.API.Registered))
	require.Equal(t, res.API.Registers+res.API.Views, res.API.Requests)
	require.Equal(t, res.API.Requests, res.API.Register.Count+res.API.View.Count)
	require.Zero(t, res.API.Errors)
	require.Positive(t, res.Echo.Requests)
	require.Zero(t, res.Echo.Errors)

	require.Equal(t, 5, res.Freshness.Latency.Count)
	require.Equal(t, 5, res.KafkaRound.Count)
	require.GreaterOrEqual(t, res.Freshness.Polls, 5)
	// Its breakdown, every sample measured (their order in time depends on
	// scheduling, so it is not asserted).
	require.Equal(t, 5, res.Freshness.Appended.Count)
	require.Equal(t, 5, res.Freshness.Committed.Count)
	require.Positive(t, res.Freshness.Appended.P50)
	require.Positive(t, res.Freshness.Committed.P50)

	// 10 posts, every tenth registered twice, 9 views each.
	require.Equal(t, 10+1+90, res.Projection.Events)
	require.Equal(t, res.Projection.Events, res.Projection.Applied)
	require.Equal(t, res.Projection.Events, res.CopyFrom.Count)
	require.Equal(t, res.Projection.Events, res.ProjConsume.Count)
	// The replay read everything the API phase appended: the warm-up, the
	// load's registrations and views, the freshness posts and requests.
	wantReplay := 1 + res.API.Registers + res.API.Views + 2*(5+1)
	require.Equal(t, wantReplay, res.Replay.Events)
	require.Equal(t, wantReplay, res.Replay.Applied)
	require.Equal(t, wantReplay, res.ReplayRaw.Count)

	// Every row is there, each with a ratio, in both renderings.
	measures := []string{"API register+view throughput", "registerObservedVersion latency p50", "registerObservedVersion latency p99",
		"recordViewAndGetStatus latency p50", "recordViewAndGetStatus latency max", "freshness p50", "freshness p99",
		"freshness breakdown p50: append acknowledged", "freshness breakdown p50: projector's checkpoint committed",
		"serving projection", "replay from offset 0"}
	for _, m := range measures {
		found := false
		for _, r := range res.Rows {
			if strings.HasPrefix(r.Measure, m) {
				found = true
				require.NotNil(t, r.Ratio, r.Measure)
				require.Positive(t, *r.Ratio, r.Measure)
			}
		}
		require.True(t, found, "row %q missing", m)
	}
	// Throughput, 8 latencies, freshness p50/p99, its 2-part breakdown, 3
	// projection and replay rates, and 3 more: replay against CopyFrom, and
	// the peak heap of the projection and of the replay.
	require.Len(t, res.Rows, 1+8+2+2+3+3)
	var md bytes.Buffer
	require.NoError(t, res.WriteMarkdown(&md))
	require.Equal(t, len(res.Rows)+1, strings.Count(md.String(), "\n|"), md.String())
	t.Log("\n" + md.String())
	require.Contains(t, md.String(), "checks passed")
	// Each measured path's profile summary: the API load (1.5 s of work)
	// always has samples; a path too short for one is left out.
	paths := map[string]bool{}
	for _, p := range res.Profiles {
		paths[p.Path] = true
		require.Positive(t, p.CPUSeconds, p.Path)
		require.NotEmpty(t, p.Functions, p.Path)
		require.NotEmpty(t, p.Packages, p.Path)
		for _, c := range append(p.Functions, p.Packages...) {
			require.True(t, c.Share > 0 && c.Share <= 1, "%s: %s %v", p.Path, c.Function, c.Share)
		}
		require.Contains(t, md.String(), "- "+p.Path+" (", "the summary is printed")
	}
	require.True(t, paths["API register+view (server, projector and load generator)"], "%v", paths)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Len(t, back["rows"], len(res.Rows))

	// Its own database and topics are gone.
	conn, err := pgx.Connect(ctx, cfg.DatabaseURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var exists bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, res.Database).Scan(&exists))
	require.False(t, exists, "database %s left behind", res.Database)
	cl, err := kafka.NewClient(cfg.KafkaBrokers)
	require.NoError(t, err)
	defer cl.Close()
	left, err := kadm.NewClient(cl).ListTopics(ctx)
	require.NoError(t, err)
	for _, name := range left.Names() {
		require.False(t, strings.HasPrefix(name, res.TopicPrefix), "topic %s left behind", name)
	}
}
