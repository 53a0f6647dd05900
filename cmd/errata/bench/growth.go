package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/retry"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// GrowthResult is the log-growth phase: at each size of the log, the view
// path and the serving projector beside their raw baselines measured at
// that size, and the memory of the process serving and projecting.
type GrowthResult struct {
	Concurrency int `json:"concurrency"`
	// Processes is errata worker and serve run as processes on the grown
	// log (nil without Options.Binary).
	Processes *ProcessRSS `json:"processes,omitempty"`
	// Slice is how many events the projector is timed over at each size.
	Slice  int           `json:"slice"`
	Points []GrowthPoint `json:"points"`
}

// GrowthPoint is one size of the log.
type GrowthPoint struct {
	// Size asked for; LogEvents the log's length when measured (at least
	// Size: the views of earlier sizes' loads are in the log too).
	Size      int `json:"size"`
	LogEvents int `json:"log_events"`
	// Appended events to reach Size, at AppendPerSec (not a measure: the
	// growth itself only sets the stage).
	Appended     int     `json:"appended"`
	AppendPerSec float64 `json:"append_per_sec"`
	// View is recordViewAndGetStatus of a version registered at this size,
	// Baseline the bare produce+select handler reading the same schema.
	View     FixedLoad `json:"view"`
	Baseline FixedLoad `json:"produce_select_baseline"`
	// CatchUp is a second serving projector catching up from the previous
	// size to this one; CatchUpRSSMB the process's peak RSS meanwhile.
	CatchUp      ProjectorStats `json:"catch_up"`
	CatchUpRSSMB float64        `json:"catch_up_peak_rss_mb"`
	// Projector is that projector over the next Slice events, CopyFrom a
	// raw pgx CopyFrom of as many rows, right after it.
	Projector ProjectorStats `json:"projector"`
	CopyFrom  Throughput     `json:"copyfrom_baseline"`
	// AutovacuumWaitSeconds: how long the slice waited for Postgres's
	// autovacuum workers to finish first (after a bulk catch-up they
	// vacuum the grown tables for seconds: maintenance that a measure of
	// the log's length should not include).
	AutovacuumWaitSeconds float64 `json:"autovacuum_wait_seconds"`
}

// growthChunk shapes the generated log: 200 posts, every tenth registered
// twice, 49 views each (the serving projection phase's workload), with
// new posts in every chunk so the tables grow with the log.
var growthChunk = workload.Spec{Posts: 200, ViewsPerPost: 49, Viewers: 500, IPRanges: 50, Days: 2}

// growthSchemas: the API's live projection and the timed projector's.
const (
	growthServing   = "growth"
	growthProjected = "growthproj"
	// growthProcesses is the schema of the errata worker and serve processes.
	growthProcesses = "growthproc"
)

// GrowthSizes checks the sizes of the growth phase and sorts them.
func GrowthSizes(sizes []int) ([]int, error) {
	out := slices.Clone(sizes)
	for _, s := range out {
		if s <= 0 {
			return nil, fmt.Errorf("growth size %d: must be positive", s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// runGrowth grows one log to each of opt.GrowthSizes in turn, on a stack of
// its own (topics and schema "growth"), and measures at each size.
func runGrowth(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) error {
	sizes, err := GrowthSizes(opt.GrowthSizes)
	if err != nil {
		return err
	}
	if len(sizes) == 0 {
		return errors.New("growth: no sizes given")
	}
	topics, err := rs.Topics(ctx, "growth", opt.Partitions)
	if err != nil {
		return err
	}
	progress("log growth: a stack of its own, the log grown to %v events", sizes)
	stack, err := StartStack(ctx, opt.apiStack(rs, growthServing, topics))
	if err != nil {
		return fmt.Errorf("start growth API: %w", err)
	}
	stackClosed := false
	defer func() {
		if !stackClosed {
			_ = stack.Close()
		}
	}()
	baseTopic, err := rs.Topic(ctx, "growthbase", opt.Partitions)
	if err != nil {
		return err
	}
	baseURL, stopBase, err := StartProduceSelect(ctx, opt.Brokers, baseTopic, rs.DatabaseURL, growthServing)
	if err != nil {
		return err
	}
	baseStopped := false
	defer func() {
		if !baseStopped {
			_ = stopBase()
		}
	}()

	g := &GrowthResult{Concurrency: opt.ViewConcurrency, Slice: opt.GrowthSlice}
	if g.Concurrency <= 0 {
		g.Concurrency = 64
	}
	res.Growth = g
	projector := ProjectorRun{Brokers: opt.Brokers, DatabaseURL: rs.DatabaseURL, Schema: growthProjected,
		Group: topics.Prefix + "bench.growth", Topics: stack.ServingTops, IPRangeDailyCap: opt.IPRangeDailyCap, Log: opt.Log}
	chunk, seed := 0, uint64(1000) // the n-th chunk has seed 1000+n
	// grow appends generated chunks until the log holds n events.
	grow := func(n int) (appended int, took time.Duration, err error) {
		until, err := EndOffsets(ctx, opt.Brokers, stack.ServingTops)
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		for have := until.Total(); have < n; chunk, seed = chunk+1, seed+1 {
			spec := growthChunk
			spec.Seed, spec.FirstPost, spec.IPRangeDailyCap = seed, chunk*spec.Posts, opt.IPRangeDailyCap
			spec.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(chunk) * time.Duration(spec.Days) * 24 * time.Hour)
			evs := workload.Generate(spec).Events
			evs = evs[:min(len(evs), n-have)] // a prefix keeps each post's events in order
			if err := AppendWorkload(ctx, opt.Brokers, topics, evs); err != nil {
				return appended, 0, err
			}
			have += len(evs)
			appended += len(evs)
		}
		return appended, time.Since(start), nil
	}
	// caughtUp waits for the API's projection, then brings the timed
	// projector to the end of the log.
	caughtUp := func() (Offsets, ProjectorStats, float64, error) {
		until, err := EndOffsets(ctx, opt.Brokers, stack.ServingTops)
		if err != nil {
			return nil, ProjectorStats{}, 0, err
		}
		if err := waitApplied(ctx, stack.Pool, until, 15*time.Minute); err != nil {
			return nil, ProjectorStats{}, 0, err
		}
		p := projector
		p.Until = until
		rss := sampleRSS(0)
		st, err := p.Run(ctx)
		return until, st, rss(), err
	}

	viewsServed := 0
	for i, size := range sizes {
		pt := GrowthPoint{Size: size}
		progress("log growth %s: appending generated registrations and views", countLabel(size))
		appended, took, err := grow(size)
		if err != nil {
			return fmt.Errorf("grow the log to %d: %w", size, err)
		}
		pt.Appended, pt.AppendPerSec = appended, throughput(appended, took).PerSec
		progress("log growth %s: appended %d events at %.0f events/s", countLabel(size), appended, pt.AppendPerSec)
		until, err := EndOffsets(ctx, opt.Brokers, stack.ServingTops)
		if err != nil {
			return err
		}
		if err := waitApplied(ctx, stack.Pool, until, 15*time.Minute); err != nil {
			return err
		}
		pt.LogEvents = until.Total()

		post, err := NewPost(2_000_000, i, opt.Words)
		if err != nil {
			return err
		}
		if _, err := stack.register(ctx, post, time.Minute); err != nil {
			return fmt.Errorf("growth registration: %w", err)
		}
		progress("log growth %s: recordViewAndGetStatus, %d clients, %s (CPU profiled), then produce+select", countLabel(size), g.Concurrency, opt.APIDuration)
		if pt.View, err = RunFixed(ctx, "recordViewAndGetStatus", viewRequest(stack.URL, post), g.Concurrency, opt.APIDuration,
			opt.profiling(fmt.Sprintf("growth-view-%d", size)), 0); err != nil {
			return err
		}
		served, _ := stack.Served("/trpc/post.recordViewAndGetStatus")
		res.check(fmt.Sprintf("log growth %s: view path without errors", countLabel(size)), pt.View.Errors == 0 && served-viewsServed == pt.View.Requests,
			"%d errors of %d requests, server answered %d %s", pt.View.Errors, pt.View.Requests, served-viewsServed, pt.View.FirstError)
		viewsServed = served
		if pt.Baseline, err = RunFixed(ctx, "produce+select", FixedRequest{Method: http.MethodPost, URL: baseURL + "/view/" + post.PostVersionID,
			Body: post.ViewBody()}, g.Concurrency, opt.APIDuration, Profiling{}, 0); err != nil {
			return err
		}
		res.check(fmt.Sprintf("log growth %s: produce+select baseline without errors", countLabel(size)), pt.Baseline.Errors == 0,
			"%d errors of %d %s", pt.Baseline.Errors, pt.Baseline.Requests, pt.Baseline.FirstError)

		progress("log growth %s: a second serving projector catching up to the log's end (RSS sampled)", countLabel(size))
		catchUntil, st, rss, err := caughtUp()
		if err != nil {
			return fmt.Errorf("growth catch-up: %w", err)
		}
		pt.CatchUp, pt.CatchUpRSSMB = st, rss
		res.check(fmt.Sprintf("log growth %s: catch-up applied every event once", countLabel(size)), st.Applied == catchUntil.Total() && st.DeadLetters == 0,
			"applied %d, log holds %d, %d dead letters", st.Applied, catchUntil.Total(), st.DeadLetters)

		progress("log growth %s: the serving projector over the next %d events, then pgx CopyFrom of as many rows", countLabel(size), g.Slice)
		if _, _, err := grow(catchUntil.Total() + g.Slice); err != nil {
			return fmt.Errorf("append the slice: %w", err)
		}
		until, err = EndOffsets(ctx, opt.Brokers, stack.ServingTops)
		if err != nil {
			return err
		}
		// The API's projector applies the slice first, so the timed one
		// runs alone.
		if err := waitApplied(ctx, stack.Pool, until, 15*time.Minute); err != nil {
			return err
		}
		waited, err := waitAutovacuum(ctx, stack.Pool, 5*time.Minute)
		if err != nil {
			return err
		}
		pt.AutovacuumWaitSeconds = waited.Seconds()
		p := projector
		p.Until = until
		if err := res.profilePath(fmt.Sprintf("serving projector over %d events at %s in the log", g.Slice, countLabel(size)), func() (err error) {
			pt.Projector, err = p.Run(ctx)
			return err
		}); err != nil {
			return fmt.Errorf("growth projector: %w", err)
		}
		res.check(fmt.Sprintf("log growth %s: projector applied the slice once", countLabel(size)),
			pt.Projector.Events == g.Slice && pt.Projector.Applied == until.Total() && pt.Projector.DeadLetters == 0,
			"applied %d of %d, checkpoints %d of %d, %d dead letters", pt.Projector.Events, g.Slice, pt.Projector.Applied, until.Total(), pt.Projector.DeadLetters)
		took, err = CopyFromBaseline(ctx, rs.DatabaseURL, growthProjected, g.Slice)
		if err != nil {
			return err
		}
		pt.CopyFrom = throughput(g.Slice, took)
		if err := dropCopyBaseline(ctx, rs.DatabaseURL, growthProjected); err != nil {
			return err
		}
		g.Points = append(g.Points, pt)
	}

	// The API's live projection and the one caught up size by size read
	// the same log: they must be identical.
	if _, _, _, err := caughtUp(); err != nil {
		return err
	}
	progress("log growth: comparing the live projection with the one caught up size by size")
	diff, err := compareSchemas(ctx, rs.DatabaseURL, growthServing, growthProjected)
	if err != nil {
		return err
	}
	res.check("log growth: projector caught up size by size identical to the live projection", diff == "", "%s", or(diff, "every table equal"))
	if opt.Binary == "" {
		return nil
	}
	// The processes run alone: the in-process API and projector stop.
	stackClosed, baseStopped = true, true
	if err := errors.Join(stack.Close(), stopBase()); err != nil {
		return err
	}
	procs, err := runProcesses(ctx, opt, rs, stack.ServingTops, topics.Prefix, g.Concurrency, progress)
	if err != nil {
		return err
	}
	g.Processes = &procs
	res.check("log growth: errata serve answered every view and /health", procs.Serve.View.Errors == 0 && procs.Serve.Health.Errors == 0,
		"%d and %d errors %s%s", procs.Serve.View.Errors, procs.Serve.Health.Errors, procs.Serve.View.FirstError, procs.Serve.Health.FirstError)
	return nil
}

// waitApplied waits until the serving projection behind pool has applied
// everything below until.
func waitApplied(ctx context.Context, pool *pgxpool.Pool, until Offsets, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, done, err := checkpointProgress(ctx, pool, until)
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serving projection did not reach %d events within %s", until.Total(), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitAutovacuum waits until no autovacuum worker runs in pool's database
// (or timeout passes: then the measure runs beside it) and returns how
// long it waited.
func waitAutovacuum(ctx context.Context, pool *pgxpool.Pool, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		var running int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'autovacuum worker' AND datname = current_database()`).Scan(&running); err != nil {
			return 0, fmt.Errorf("read autovacuum workers: %w", err)
		}
		if running == 0 || time.Since(start) > timeout {
			return time.Since(start), nil
		}
		if err := retry.Sleep(ctx, 100*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// dropCopyBaseline removes CopyFromBaseline's table, so the next size
// copies into an empty one again.
func dropCopyBaseline(ctx context.Context, databaseURL, schema string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `DROP TABLE `+pgx.Identifier{schema, "copy_baseline"}.Sanitize()); err != nil {
		return fmt.Errorf("drop baseline table: %w", err)
	}
	return nil
}

// countLabel writes an event count as people say it: 10k, 1.5M, 999.
func countLabel(n int) string {
	trim := func(f float64, unit string) string {
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f), "0"), ".") + unit
	}
	switch {
	case n >= 1_000_000:
		return trim(float64(n)/1e6, "M")
	case n >= 1000:
		return trim(float64(n)/1e3, "k")
	default:
		return fmt.Sprint(n)
	}
}

// growthRows are the phase's rows: at each size, each figure beside its
// raw baseline at that size, and how it compares with the smallest size.
func growthRows(g *GrowthResult) []Row {
	if g == nil || len(g.Points) == 0 {
		return nil
	}
	first := g.Points[0]
	vsFirst := func(v, v0 float64) string {
		q := ratio(v, v0)
		if q == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f× the %s-event figure", *q, countLabel(first.Size))
	}
	var out []Row
	for _, p := range g.Points {
		at := fmt.Sprintf("log growth, %s events in the log (%d)", countLabel(p.Size), p.LogEvents)
		view := fmt.Sprintf("%s: view path recordViewAndGetStatus (%d clients)", at, g.Concurrency)
		out = append(out,
			Row{Measure: view + " throughput",
				Figure:   fmt.Sprintf("%.0f req/s (%d errors), %s", p.View.RequestsPerSec, p.View.Errors, vsFirst(p.View.RequestsPerSec, first.View.RequestsPerSec)),
				Baseline: fmt.Sprintf("%.0f req/s produce+select at this size", p.Baseline.RequestsPerSec),
				Ratio:    ratio(p.View.RequestsPerSec, p.Baseline.RequestsPerSec)},
			Row{Measure: view + " p99",
				Figure:   fmt.Sprintf("%.2f ms, %s", p.View.Latency.P99, vsFirst(p.View.Latency.P99, first.View.Latency.P99)),
				Baseline: fmt.Sprintf("%.2f ms produce+select", p.Baseline.Latency.P99),
				Ratio:    ratio(p.View.Latency.P99, p.Baseline.Latency.P99)},
			Row{Measure: fmt.Sprintf("%s: serving projector, exactly-once, over the next %d events (after %.1f s waiting for autovacuum)", at, p.Projector.Events, p.AutovacuumWaitSeconds),
				Figure:   fmt.Sprintf("%.0f events/s, %s", p.Projector.EventsPerSec, vsFirst(p.Projector.EventsPerSec, first.Projector.EventsPerSec)),
				Baseline: fmt.Sprintf("%.0f rows/s pgx CopyFrom of as many rows", p.CopyFrom.PerSec),
				Ratio:    ratio(p.Projector.EventsPerSec, p.CopyFrom.PerSec)},
			Row{Measure: fmt.Sprintf("%s: peak RSS of this process (API, its serving projector, load generator) under the view load", at),
				Figure:   fmt.Sprintf("%.0f MB", p.View.PeakRSSMB),
				Baseline: fmt.Sprintf("%.0f MB at %s events", first.View.PeakRSSMB, countLabel(first.Size)),
				Ratio:    ratio(p.View.PeakRSSMB, first.View.PeakRSSMB)},
			Row{Measure: fmt.Sprintf("%s: peak RSS of this process while a serving projector catches up %d events", at, p.CatchUp.Events),
				Figure:   fmt.Sprintf("%.0f MB (live heap peak %.0f MB)", p.CatchUpRSSMB, float64(p.CatchUp.PeakHeapBytes)/(1<<20)),
				Baseline: fmt.Sprintf("%.0f MB at %s events", first.CatchUpRSSMB, countLabel(first.Size)),
				Ratio:    ratio(p.CatchUpRSSMB, first.CatchUpRSSMB)},
		)
	}
	if pr := g.Processes; pr != nil {
		c := fmt.Sprintf("%d clients", g.Concurrency)
		out = append(out,
			Row{Measure: fmt.Sprintf("errata serve, its own process, on the grown log: recordViewAndGetStatus throughput (%s)", c),
				Figure:   fmt.Sprintf("%.0f req/s (%d errors), p99 %.2f ms", pr.Serve.View.RequestsPerSec, pr.Serve.View.Errors, pr.Serve.View.Latency.P99),
				Baseline: fmt.Sprintf("%.0f req/s GET /health, same server, p99 %.2f ms", pr.Serve.Health.RequestsPerSec, pr.Serve.Health.Latency.P99),
				Ratio:    ratio(pr.Serve.View.RequestsPerSec, pr.Serve.Health.RequestsPerSec)},
			Row{Measure: fmt.Sprintf("errata serve, its own process: peak RSS under the view load (%s)", c),
				Figure:   fmt.Sprintf("%.0f MB", pr.Serve.View.PeakRSSMB),
				Baseline: fmt.Sprintf("%.0f MB under GET /health", pr.Serve.Health.PeakRSSMB),
				Ratio:    ratio(pr.Serve.View.PeakRSSMB, pr.Serve.Health.PeakRSSMB)},
			Row{Measure: fmt.Sprintf("errata worker --projectors serving, its own process: peak RSS catching up %d events from offset 0 (%.0f events/s, its start included)",
				pr.CatchUpEvents, float64(pr.CatchUpEvents)/max(pr.CatchUpSeconds, 1e-9)),
				Figure:   fmt.Sprintf("%.0f MB", pr.WorkerCatchUpRSSMB),
				Baseline: fmt.Sprintf("%.0f MB once caught up", pr.WorkerIdleRSSMB),
				Ratio:    ratio(pr.WorkerCatchUpRSSMB, pr.WorkerIdleRSSMB)},
			Row{Measure: fmt.Sprintf("errata worker --projectors serving, its own process: peak RSS projecting the view load (%s)", c),
				Figure:   fmt.Sprintf("%.0f MB", pr.WorkerFollowRSSMB),
				Baseline: fmt.Sprintf("%.0f MB once caught up", pr.WorkerIdleRSSMB),
				Ratio:    ratio(pr.WorkerFollowRSSMB, pr.WorkerIdleRSSMB)},
		)
	}
	return out
}

// growthNotes compare each size's ratios to its baselines with the
// smallest size's (the machine's noise moves a figure and its baseline
// together), then give the view path's top costs at each size.
func growthNotes(b *strings.Builder, g *GrowthResult) {
	if g == nil || len(g.Points) == 0 {
		return
	}
	b.WriteString("\nlog growth:\n")
	first := g.Points[0]
	rel := func(f, base, f0, base0 float64) string {
		q, q0 := ratio(f, base), ratio(f0, base0)
		if q == nil || q0 == nil {
			return "-"
		}
		return fmt.Sprintf("%.2f×", *ratio(*q, *q0))
	}
	for _, p := range g.Points[1:] {
		fmt.Fprintf(b, "- log growth %s against %s, each figure over its own baseline: view path throughput %s, p99 %s, serving projector %s\n",
			countLabel(p.Size), countLabel(first.Size),
			rel(p.View.RequestsPerSec, p.Baseline.RequestsPerSec, first.View.RequestsPerSec, first.Baseline.RequestsPerSec),
			rel(p.View.Latency.P99, p.Baseline.Latency.P99, first.View.Latency.P99, first.Baseline.Latency.P99),
			rel(p.Projector.EventsPerSec, p.CopyFrom.PerSec, first.Projector.EventsPerSec, first.CopyFrom.PerSec))
	}
	for _, p := range g.Points {
		if len(p.View.Top) == 0 {
			continue
		}
		fmt.Fprintf(b, "- log growth %s: profile of recordViewAndGetStatus: server side %.0f%% of the CPU; top costs (flat): %s\n",
			countLabel(p.Size), 100*p.View.ServerCPUShare, costList(p.View.Top))
	}
}

// ProcessRSS is the memory of `errata worker` and `errata serve` run as
// their own processes on the grown log: the worker's serving projector
// catching up from offset 0, then the API under the view load while the
// worker follows it.
type ProcessRSS struct {
	// CatchUp is the worker's catch-up of the whole log into a fresh schema.
	CatchUpEvents      int            `json:"catch_up_events"`
	CatchUpSeconds     float64        `json:"catch_up_seconds"`
	WorkerCatchUpRSSMB float64        `json:"worker_catch_up_peak_rss_mb"`
	WorkerFollowRSSMB  float64        `json:"worker_under_view_load_peak_rss_mb"`
	WorkerIdleRSSMB    float64        `json:"worker_idle_rss_mb"`
	Serve              ExternalResult `json:"serve"`
}

// growthProcessEnv is the environment of the errata processes: the growth
// log's topics and the bench's database, a schema of their own, loopback
// addresses, and no search or metrics store (nothing they run uses one).
func growthProcessEnv(opt Options, rs *Resources, prefix, httpAddr string) []string {
	return append(os.Environ(),
		"ERRATA_KAFKA_BROKERS="+strings.Join(opt.Brokers, ","),
		"ERRATA_KAFKA_TOPIC_PREFIX="+prefix,
		"ERRATA_DATABASE_URL="+rs.DatabaseURL,
		"ERRATA_SERVING_SCHEMA="+growthProcesses,
		"ERRATA_HTTP_ADDR="+httpAddr,
		"ERRATA_WORKER_HTTP_ADDR=127.0.0.1:0",
		"ERRATA_API_METRICS_ADDR=off",
		"ERRATA_ELASTICSEARCH_URL=http://127.0.0.1:9",
		"ERRATA_CLICKHOUSE_URL=http://127.0.0.1:9",
		"ERRATA_RATE_LIMIT=off",
		"ERRATA_SERVER_VERIFICATION=false",
		"ERRATA_LOG_LEVEL=warn",
		"ERRATA_HASH_SECRET="+opt.HashSecret,
		fmt.Sprintf("ERRATA_VIEW_IP_RANGE_DAILY_CAP=%d", opt.IPRangeDailyCap),
		"ERRATA_READ_YOUR_WRITES_TIMEOUT="+opt.ReadYourWritesTimeout.String(),
	)
}

// childProcess is an errata process the bench started; stop ends it by
// its pid (SIGTERM, then SIGKILL after 30 s).
type childProcess struct {
	cmd    *exec.Cmd
	exited chan error
	log    *lockedBuffer
}

func startChild(binary string, env []string, args ...string) (*childProcess, error) {
	cmd := exec.Command(binary, args...) //nolint:gosec,noctx // the errata binary itself, with fixed arguments; stopped by stop, not by a context
	cmd.Env = env
	c := &childProcess{cmd: cmd, exited: make(chan error, 1), log: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = io.Discard, c.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start errata %s: %w", args[0], err)
	}
	go func() { c.exited <- cmd.Wait() }()
	return c, nil
}

func (c *childProcess) pid() int { return c.cmd.Process.Pid }

func (c *childProcess) stop() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.Exited() {
			return fmt.Errorf("errata %s: %w: %s", c.cmd.Args[1], err, c.logTail())
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		return errors.Join(fmt.Errorf("errata %s did not stop within 30 s", c.cmd.Args[1]), <-c.exited)
	}
}

func (c *childProcess) logTail() string {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	s := c.log.buf.String()
	return s[max(0, len(s)-2000):]
}

// lockedBuffer keeps a child's log; writes and logTail's reads are
// serialised.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// runProcesses runs errata worker (the serving projector alone) from
// offset 0 of the grown log, then errata serve beside it under the view
// load, sampling each process's RSS from /proc.
func runProcesses(ctx context.Context, opt Options, rs *Resources, topics []string, prefix string, concurrency int,
	progress func(string, ...any)) (ProcessRSS, error) {
	var out ProcessRSS
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return out, fmt.Errorf("listen: %w", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	env := growthProcessEnv(opt, rs, prefix, addr)
	until, err := EndOffsets(ctx, opt.Brokers, topics)
	if err != nil {
		return out, err
	}
	out.CatchUpEvents = until.Total()
	// As `errata migrate` does for generation 1 of the serving projection.
	pool, err := postgres.Connect(ctx, rs.DatabaseURL, growthProcesses)
	if err != nil {
		return out, err
	}
	defer pool.Close()
	if err := pgproj.Migrate(ctx, pool, growthProcesses, serving.Migrations(), opt.Log); err != nil {
		return out, err
	}
	progress("log growth: errata worker --projectors serving as its own process, catching up %d events from offset 0 (RSS sampled)", out.CatchUpEvents)
	worker, err := startChild(opt.Binary, env, "worker", "--projectors", "serving", "--stages=")
	if err != nil {
		return out, err
	}
	workerStopped := false
	defer func() {
		if !workerStopped {
			_ = worker.stop()
		}
	}()
	rss := sampleRSS(worker.pid())
	start := time.Now()
	deadline := start.Add(15 * time.Minute)
	for {
		_, done, err := checkpointProgress(ctx, pool, until)
		if err != nil {
			rss()
			return out, err
		}
		if done {
			break
		}
		select {
		case err := <-worker.exited:
			rss()
			workerStopped = true
			return out, fmt.Errorf("errata worker ended while catching up: %v: %s", err, worker.logTail())
		case <-ctx.Done():
			rss()
			return out, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			rss()
			return out, fmt.Errorf("errata worker did not catch up %d events within 15 minutes", out.CatchUpEvents)
		}
	}
	out.CatchUpSeconds = time.Since(start).Seconds()
	out.WorkerCatchUpRSSMB = rss()
	out.WorkerIdleRSSMB = float64(rssKB("/proc/"+strconv.Itoa(worker.pid())+"/status")) / 1024

	progress("log growth: errata serve as its own process, recordViewAndGetStatus and /health, %d clients, %s each (RSS sampled)", concurrency, opt.APIDuration)
	serve, err := startChild(opt.Binary, env, "serve")
	if err != nil {
		return out, err
	}
	serveStopped := false
	defer func() {
		if !serveStopped {
			_ = serve.stop()
		}
	}()
	baseURL := "http://" + addr
	for ready := false; !ready; {
		if res, err := http.Get(baseURL + "/health"); err == nil { //nolint:noctx // a readiness probe of the child on loopback
			res.Body.Close()
			ready = res.StatusCode == http.StatusOK
		}
		if ready {
			break
		}
		select {
		case err := <-serve.exited:
			serveStopped = true
			return out, fmt.Errorf("errata serve ended at start: %v: %s", err, serve.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(start) > 20*time.Minute {
			return out, errors.New("errata serve did not answer /health")
		}
	}
	workerRSS := sampleRSS(worker.pid())
	out.Serve, err = RunExternal(ctx, baseURL, serve.pid(), concurrency, opt.APIDuration, opt.Words, io.Discard)
	out.WorkerFollowRSSMB = workerRSS()
	if err != nil {
		return out, fmt.Errorf("errata serve load: %w", err)
	}
	serveStopped, workerStopped = true, true
	return out, errors.Join(serve.stop(), worker.stop())
}
