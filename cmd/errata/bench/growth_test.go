package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/testenv"
)

func TestCountLabel(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1k"}, {2000, "2k"}, {1500, "1.5k"}, {10_000, "10k"},
		{100_000, "100k"}, {1_000_000, "1M"}, {2_500_000, "2.5M"},
	} {
		require.Equal(t, tc.want, countLabel(tc.n), "%d", tc.n)
	}
}

func TestGrowthSizes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []int
		want    []int
		wantErr bool
	}{
		{name: "none", in: nil, want: []int{}},
		{name: "sorted and deduplicated", in: []int{100_000, 10_000, 1_000_000, 10_000}, want: []int{10_000, 100_000, 1_000_000}},
		{name: "zero refused", in: []int{10, 0}, wantErr: true},
		{name: "negative refused", in: []int{-5}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GrowthSizes(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, append([]int{}, got...))
		})
	}
}

// TestGrowthRows checks the rows of the growth phase: each figure beside
// its baseline at the same size, and compared with the smallest size.
func TestGrowthRows(t *testing.T) {
	point := func(size int, view, base, p99, baseP99, proj, copyFrom, rssView, rssCatch float64) GrowthPoint {
		return GrowthPoint{Size: size, LogEvents: size,
			View:      FixedLoad{RequestsPerSec: view, Latency: Latency{P99: p99}, PeakRSSMB: rssView},
			Baseline:  FixedLoad{RequestsPerSec: base, Latency: Latency{P99: baseP99}},
			Projector: ProjectorStats{Events: 20_000, EventsPerSec: proj}, CopyFrom: Throughput{PerSec: copyFrom},
			CatchUp: ProjectorStats{Events: size}, CatchUpRSSMB: rssCatch, AutovacuumWaitSeconds: float64(size) / 1e5}
	}
	g := &GrowthResult{Concurrency: 64, Slice: 20_000, Points: []GrowthPoint{
		point(10_000, 2000, 4000, 10, 5, 30_000, 200_000, 100, 80),
		point(1_000_000, 1000, 4000, 20, 5, 15_000, 150_000, 150, 80),
	}}
	rows := growthRows(g)
	require.Len(t, rows, 10)
	for _, tc := range []struct {
		row      int
		measure  string
		figure   string
		baseline string
		ratio    float64
	}{
		{0, "log growth, 10k events in the log (10000): view path recordViewAndGetStatus (64 clients) throughput", "2000 req/s (0 errors), 1.00× the 10k-event figure", "4000 req/s produce+select at this size", 0.5},
		{1, "log growth, 10k events in the log (10000): view path recordViewAndGetStatus (64 clients) p99", "10.00 ms, 1.00× the 10k-event figure", "5.00 ms produce+select", 2},
		{2, "log growth, 10k events in the log (10000): serving projector, exactly-once, over the next 20000 events (after 0.1 s waiting for autovacuum)", "30000 events/s, 1.00× the 10k-event figure", "200000 rows/s pgx CopyFrom of as many rows", 0.15},
		{3, "log growth, 10k events in the log (10000): peak RSS of this process (API, its serving projector, load generator) under the view load", "100 MB", "100 MB at 10k events", 1},
		{4, "log growth, 10k events in the log (10000): peak RSS of this process while a serving projector catches up 10000 events", "80 MB (live heap peak 0 MB)", "80 MB at 10k events", 1},
		{5, "log growth, 1M events in the log (1000000): view path recordViewAndGetStatus (64 clients) throughput", "1000 req/s (0 errors), 0.50× the 10k-event figure", "4000 req/s produce+select at this size", 0.25},
		{6, "log growth, 1M events in the log (1000000): view path recordViewAndGetStatus (64 clients) p99", "20.00 ms, 2.00× the 10k-event figure", "5.00 ms produce+select", 4},
		{7, "log growth, 1M events in the log (1000000): serving projector, exactly-once, over the next 20000 events (after 10.0 s waiting for autovacuum)", "15000 events/s, 0.50× the 10k-event figure", "150000 rows/s pgx CopyFrom of as many rows", 0.1},
		{8, "log growth, 1M events in the log (1000000): peak RSS of this process (API, its serving projector, load generator) under the view load", "150 MB", "100 MB at 10k events", 1.5},
		{9, "log growth, 1M events in the log (1000000): peak RSS of this process while a serving projector catches up 1000000 events", "80 MB (live heap peak 0 MB)", "80 MB at 10k events", 1},
	} {
		r := rows[tc.row]
		require.Equal(t, tc.measure, r.Measure)
		require.Equal(t, tc.figure, r.Figure)
		require.Equal(t, tc.baseline, r.Baseline)
		require.NotNil(t, r.Ratio, r.Measure)
		require.InDelta(t, tc.ratio, *r.Ratio, 1e-9, r.Measure)
	}

	// errata serve and worker as processes add their rows.
	g.Processes = &ProcessRSS{CatchUpEvents: 1_000_000, CatchUpSeconds: 50, WorkerCatchUpRSSMB: 120, WorkerIdleRSSMB: 80, WorkerFollowRSSMB: 100,
		Serve: ExternalResult{View: FixedLoad{RequestsPerSec: 3000, Latency: Latency{P99: 30}, PeakRSSMB: 90},
			Health: FixedLoad{RequestsPerSec: 15000, Latency: Latency{P99: 6}, PeakRSSMB: 60}}}
	rows = growthRows(g)
	require.Len(t, rows, 14)
	for i, want := range []struct {
		measure, figure, baseline string
		ratio                     float64
	}{
		{"errata serve, its own process, on the grown log: recordViewAndGetStatus throughput (64 clients)", "3000 req/s (0 errors), p99 30.00 ms", "15000 req/s GET /health, same server, p99 6.00 ms", 0.2},
		{"errata serve, its own process: peak RSS under the view load (64 clients)", "90 MB", "60 MB under GET /health", 1.5},
		{"errata worker --projectors serving, its own process: peak RSS catching up 1000000 events from offset 0 (20000 events/s, its start included)", "120 MB", "80 MB once caught up", 1.5},
		{"errata worker --projectors serving, its own process: peak RSS projecting the view load (64 clients)", "100 MB", "80 MB once caught up", 1.25},
	} {
		r := rows[10+i]
		require.Equal(t, want.measure, r.Measure)
		require.Equal(t, want.figure, r.Figure)
		require.Equal(t, want.baseline, r.Baseline)
		require.InDelta(t, want.ratio, *r.Ratio, 1e-9, r.Measure)
	}
	g.Processes = nil

	var notes strings.Builder
	growthNotes(&notes, g)
	require.Equal(t, "\nlog growth:\n- log growth 1M against 10k, each figure over its own baseline: view path throughput 0.50×, p99 2.00×, serving projector 0.67×\n", notes.String())

	// A zero at the smallest size has no comparison, and no baseline no ratio.
	g.Points[0].View.RequestsPerSec, g.Points[1].Baseline.RequestsPerSec = 0, 0
	rows = growthRows(g)
	require.Equal(t, "1000 req/s (0 errors), -", rows[5].Figure)
	require.Nil(t, rows[5].Ratio)
	require.Nil(t, growthRows(nil))
	require.Nil(t, growthRows(&GrowthResult{}))
}

// TestGrowthPhase grows a log to two small sizes on the real services and
// checks the phase's counts, checks and rows; speed is never asserted.
func TestGrowthPhase(t *testing.T) {
	cfg := testenv.Config(t)
	testenv.Postgres(t) // skips (or fails under ERRATA_INTEGRATION=1) without Postgres
	testenv.Kafka(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rs, err := NewResources(ctx, cfg.KafkaBrokers, cfg.DatabaseURL)
	require.NoError(t, err)
	defer func() { require.NoError(t, rs.Close(context.Background())) }()
	opt := Options{Brokers: cfg.KafkaBrokers, AdminDatabaseURL: cfg.DatabaseURL, HashSecret: "bench-test", Partitions: 2,
		APIDuration: time.Second, Words: 40, ViewConcurrency: 4, GrowthSizes: []int{4000, 2000}, GrowthSlice: 1000}
	opt.Defaults()
	var res Result
	require.NoError(t, runGrowth(ctx, opt, rs, &res, func(string, ...any) {}))
	for _, c := range res.Checks {
		require.True(t, c.OK, "%s: %s", c.Name, c.Detail)
	}
	// Two sizes, four checks each, and the comparison at the end.
	require.Len(t, res.Checks, 2*4+1)
	g := res.Growth
	require.NotNil(t, g)
	require.Len(t, g.Points, 2)
	for i, size := range []int{2000, 4000} {
		p := g.Points[i]
		require.Equal(t, size, p.Size)
		require.GreaterOrEqual(t, p.LogEvents, size)
		require.Positive(t, p.View.Requests)
		require.Positive(t, p.Baseline.Requests)
		require.Equal(t, 1000, p.Projector.Events)
		require.Equal(t, 1000, p.CopyFrom.Count)
		require.Less(t, p.AutovacuumWaitSeconds, 5*60.0+1, "the slice waits for autovacuum at most five minutes")
		require.Positive(t, p.CatchUp.Events)
	}
	// The first size's log is generated events only, up to the warm-up
	// registration the stack appended.
	require.Equal(t, 2000, g.Points[0].Appended+1)
	rows := growthRows(g)
	require.Len(t, rows, 10)
	for _, r := range rows {
		require.NotNil(t, r.Ratio, r.Measure)
	}
	res.Rows = rows
	var md bytes.Buffer
	require.NoError(t, res.WriteMarkdown(&md))
	require.Equal(t, len(rows)+1, strings.Count(md.String(), "\n|"), md.String())
	t.Log("\n" + md.String())
}
