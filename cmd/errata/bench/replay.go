package bench

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/errata-dev/errata/internal/memstat"
	"github.com/errata-dev/errata/projections/replay"
)

// ReplayRun is `errata replay`'s catch-up of the serving projection from
// offset 0 into a fresh schema: replay.CatchUp (no consumer group) with
// replay.PostgresPartitions partitions applied at once, each batch's rows
// and checkpoint in one transaction.
type ReplayRun struct {
	Brokers         []string
	DatabaseURL     string
	Schema          string // fresh: migrated here
	Until           Offsets
	IPRangeDailyCap int
	Log             *slog.Logger
}

// Run migrates the schema and replays everything below Until into it.
// Seconds span the whole catch-up, from reading the checkpoints to the
// last commit.
func (r ReplayRun) Run(ctx context.Context) (ProjectorStats, error) {
	pool, proj, dl, err := servingProjector(ctx, r.DatabaseURL, r.Schema, r.IPRangeDailyCap, r.Log)
	if err != nil {
		return ProjectorStats{}, err
	}
	defer pool.Close()
	runtime.GC() // the start figure is live data only
	startHeap := memstat.LiveHeap()
	stopSampling := make(chan struct{})
	peakHeap := memstat.SamplePeak(20*time.Millisecond, stopSampling)
	start := time.Now()
	n, err := replay.CatchUp(ctx, replay.Config{Brokers: r.Brokers, Until: replay.Offsets(r.Until), Handler: proj, Positions: proj,
		Partitions: replay.PostgresPartitions}, r.Log)
	took := time.Since(start)
	close(stopSampling)
	peak := peakHeap()
	if err != nil {
		return ProjectorStats{}, fmt.Errorf("catch up: %w", err)
	}
	applied, _, err := checkpointProgress(ctx, pool, r.Until)
	if err != nil {
		return ProjectorStats{}, err
	}
	st := ProjectorStats{Events: int(n), Applied: applied, Seconds: took.Seconds(), DeadLetters: dl.count(),
		StartHeapBytes: startHeap, PeakHeapBytes: max(startHeap, peak)}
	if st.Seconds > 0 {
		st.EventsPerSec = float64(n) / st.Seconds
	}
	return st, nil
}
