package bench

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/serving"
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
	pool, err := postgres.Connect(ctx, r.DatabaseURL, r.Schema)
	if err != nil {
		return ProjectorStats{}, err
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, r.Schema, serving.Migrations(), r.Log); err != nil {
		return ProjectorStats{}, err
	}
	dl := &countingDeadLetter{}
	proj := pgproj.NewProjector(serving.ProjectorName, pool, events.NewCatalogRegistry(), serving.NewApplier(r.IPRangeDailyCap), dl, r.Log)
	runtime.GC() // the start figure is live data only
	startHeap := liveHeap()
	stopSampling := make(chan struct{})
	peakHeap := sampleHeap(20*time.Millisecond, stopSampling)
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
