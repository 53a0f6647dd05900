// Package bench measures Errata's performance on the local services and
// reports every figure next to a raw baseline measured in the same run on
// the same machine, as a ratio: API requests/s and latency against a
// trivial fiber handler under the same load generator, end-to-end
// freshness against a raw Kafka round trip, the serving projector against
// pgx CopyFrom and a raw Kafka consume, and a replay from offset 0 against
// a raw consume of the same topics. `errata bench` prints it; tests run it
// with tiny sizes and check the counts, never the speed.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// Options shape a run. Defaults() gives sizes that finish in one to two
// minutes on a small machine.
type Options struct {
	Brokers          []string
	AdminDatabaseURL string // a database on the server the bench creates its own next to
	HashSecret       string
	Partitions       int32

	APIDuration       time.Duration
	Concurrency       int
	Words             int
	FreshnessSamples  int
	FreshnessInterval time.Duration
	ProjectionPosts   int
	ViewsPerPost      int
	IPRangeDailyCap   int
	// ReadYourWritesTimeout of the API under test.
	ReadYourWritesTimeout time.Duration

	// ViewConcurrency > 0 adds the view-path phase: recordViewAndGetStatus
	// of one registered version with this many clients, beside a bare
	// produce+select handler and fiber echo (0: skipped).
	ViewConcurrency int
	// ProfileDir, when set, keeps the view path's raw CPU profiles.
	ProfileDir string

	// RegistrationSamples new versions registered one at a time, and as
	// many for the breakdown; RegistrationConcurrency clients re-register
	// one known version (registration phase).
	RegistrationSamples     int
	RegistrationConcurrency int

	// ElasticsearchURL, when set, adds the search projection phase:
	// SearchRounds rounds of registrations and completions (searchbench)
	// beside a raw _bulk of the same documents.
	ElasticsearchURL string
	SearchRounds     int
	// ClickHouseURL, when set, adds the metrics projection phase:
	// MetricsRounds rounds over a workload (analyticsbench) beside raw
	// inserts of the same rows.
	ClickHouseURL string
	MetricsRounds int

	// GrowthSizes, when set, adds the log-growth phase: one log grown to
	// each size in turn, the view path and the serving projector (over
	// GrowthSlice more events) measured at each beside their raw
	// baselines, and the process's RSS. GrowthOnly runs that phase alone.
	GrowthSizes []int
	GrowthSlice int
	GrowthOnly  bool
	// Binary, when set, is the errata executable: the growth phase then
	// also runs `errata worker` and `errata serve` on its log as processes
	// of their own and samples their RSS.
	Binary string

	// Progress receives one line per phase (nil: none).
	Progress io.Writer
	// Log receives the components' logs (nil: none).
	Log *slog.Logger
	// APIOptions: see StackConfig.APIOptions. It is told the bench's topics.
	APIOptions func(ctx context.Context, topics events.Topics, databaseURL string, pool *pgxpool.Pool) ([]api.Option, func(), error)
}

// Defaults fills unset sizes.
func (o *Options) Defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.Concurrency, 8)
	def(&o.Words, 300)
	def(&o.FreshnessSamples, 200)
	def(&o.ProjectionPosts, 200)
	def(&o.ViewsPerPost, 49)
	def(&o.IPRangeDailyCap, 10)
	def(&o.RegistrationSamples, 100)
	def(&o.RegistrationConcurrency, 16)
	def(&o.SearchRounds, 10)
	def(&o.MetricsRounds, 3)
	def(&o.GrowthSlice, 100_000)
	if o.Partitions <= 0 {
		o.Partitions = 3
	}
	if o.APIDuration <= 0 {
		o.APIDuration = 20 * time.Second
	}
	if o.FreshnessInterval <= 0 {
		o.FreshnessInterval = 25 * time.Millisecond
	}
	if o.ReadYourWritesTimeout <= 0 {
		o.ReadYourWritesTimeout = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
}

// Result is everything a run measured and checked.
type Result struct {
	Rows   []Row   `json:"rows"`
	Checks []Check `json:"checks"`
	// Flagged: some check failed (errors, counts off); the figures are suspect.
	Flagged bool `json:"flagged"`

	API          LoadResult      `json:"api"`
	Echo         LoadResult      `json:"echo_baseline"`
	Freshness    FreshnessResult `json:"freshness"`
	KafkaRound   Latency         `json:"kafka_round_trip_baseline"`
	Projection   ProjectorStats  `json:"projection"`
	CopyFrom     Throughput      `json:"copyfrom_baseline"`
	ProjConsume  Throughput      `json:"projection_consume_baseline"`
	Replay       ProjectorStats  `json:"replay"`
	ReplayRaw    Throughput      `json:"replay_consume_baseline"`
	Database     string          `json:"database"`
	TopicPrefix  string          `json:"topic_prefix"`
	TotalSeconds float64         `json:"total_seconds"`

	Registration RegistrationResult `json:"registration"`
	// ViewPath is the view-path phase (nil when skipped).
	ViewPath *ViewPathResult `json:"view_path,omitempty"`
	// Search is the search projection phase (nil when skipped).
	Search *SearchResult `json:"search,omitempty"`
	// Metrics is the metrics projection phase (nil when skipped).
	Metrics *MetricsResult `json:"metrics,omitempty"`
	// Growth is the log-growth phase (nil when skipped).
	Growth *GrowthResult `json:"growth,omitempty"`
	// Profiles summarise the CPU profile of each measured path, in the
	// order they ran (the view path's is in ViewPath).
	Profiles []PathProfile `json:"profiles,omitempty"`
}

// Throughput is a count over a time.
type Throughput struct {
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
	PerSec  float64 `json:"per_sec"`
}

func throughput(n int, d time.Duration) Throughput {
	t := Throughput{Count: n, Seconds: d.Seconds()}
	if d > 0 {
		t.PerSec = float64(n) / d.Seconds()
	}
	return t
}

// Check is one exact expectation of the run.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

func (r *Result) check(name string, ok bool, format string, args ...any) {
	r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	if !ok {
		r.Flagged = true
	}
}

// Run measures everything in its own database and topics, removed at the
// end whatever happens.
func Run(ctx context.Context, opt Options) (res Result, err error) {
	opt.Defaults()
	began := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(opt.Progress, "bench: "+format+"\n", args...)
	}
	rs, err := NewResources(ctx, opt.Brokers, opt.AdminDatabaseURL)
	if err != nil {
		return res, err
	}
	res.Database, res.TopicPrefix = rs.Database(), rs.Prefix
	progress("own database %s, topics %s*", rs.Database(), rs.Prefix)
	defer func() {
		if cerr := rs.Close(ctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("clean up: %w", cerr))
		} else {
			progress("dropped %s and topics %s*", rs.Database(), rs.Prefix)
		}
	}()

	if opt.GrowthOnly {
		err := runGrowth(ctx, opt, rs, &res, progress)
		res.Rows = growthRows(res.Growth)
		res.TotalSeconds = time.Since(began).Seconds()
		return res, err
	}
	if err := runAPI(ctx, opt, rs, &res, progress); err != nil {
		return res, err
	}
	if opt.ViewConcurrency > 0 {
		if err := runViewPath(ctx, opt, rs, &res, progress); err != nil {
			return res, err
		}
	}
	if err := runRegistration(ctx, opt, rs, &res, progress); err != nil {
		return res, err
	}
	if err := runProjection(ctx, opt, rs, &res, progress); err != nil {
		return res, err
	}
	if opt.ElasticsearchURL != "" {
		if err := runSearch(ctx, opt, rs, &res, progress); err != nil {
			return res, err
		}
	}
	if opt.ClickHouseURL != "" {
		if err := runMetrics(ctx, opt, rs, &res, progress); err != nil {
			return res, err
		}
	}
	if len(opt.GrowthSizes) > 0 {
		if err := runGrowth(ctx, opt, rs, &res, progress); err != nil {
			return res, err
		}
	}
	res.Rows = rows(&res, opt)
	res.TotalSeconds = time.Since(began).Seconds()
	return res, nil
}

// runAPI: load against the API and the echo baseline, freshness and its
// Kafka baseline, then the replay of everything the API appended.
func runAPI(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) error {
	topics, err := rs.Topics(ctx, "api", opt.Partitions)
	if err != nil {
		return err
	}
	progress("starting the API and the serving projector in-process")
	batches := newBatchLog()
	cfg := opt.apiStack(rs, "serving", topics)
	cfg.Observer = batches
	stack, err := StartStack(ctx, cfg)
	if err != nil {
		return fmt.Errorf("start API: %w", err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = stack.Close()
		}
	}()
	load := LoadOptions{Duration: opt.APIDuration, Concurrency: opt.Concurrency, Words: opt.Words, FirstWorker: 1}
	progress("API load: %d clients, register+view of %d-word posts, for %s", opt.Concurrency, opt.Words, opt.APIDuration)
	if err := res.profilePath("API register+view (server, projector and load generator)", func() (err error) {
		res.API, err = RunLoad(ctx, LoadTarget{Name: "api", RegisterURL: stack.URL + "/trpc/post.registerObservedVersion",
			ViewURL: stack.URL + "/trpc/post.recordViewAndGetStatus"}, load)
		return err
	}); err != nil {
		return err
	}
	regServed, serverErrs := stack.Served("/trpc/post.registerObservedVersion")
	viewServed, _ := stack.Served("/trpc/post.recordViewAndGetStatus")
	res.check("api load without errors", res.API.Errors == 0, "%d errors of %d requests %s", res.API.Errors, res.API.Requests, res.API.FirstError)
	res.check("server answered every register", regServed == res.API.Registers, "server %d, load generator %d", regServed, res.API.Registers)
	res.check("server answered every view", viewServed == res.API.Views, "server %d, load generator %d", viewServed, res.API.Views)
	res.check("server answered without errors", serverErrs == 0, "%d error statuses", serverErrs)

	echoURL, stopEcho, err := StartEcho()
	if err != nil {
		return err
	}
	progress("baseline load: the same generator against a fiber echo handler")
	res.Echo, err = RunLoad(ctx, LoadTarget{Name: "echo", RegisterURL: echoURL + "/echo/register", ViewURL: echoURL + "/echo/view", Echo: true}, load)
	err = errors.Join(err, stopEcho())
	if err != nil {
		return err
	}
	res.check("echo load without errors", res.Echo.Errors == 0, "%d errors of %d requests %s", res.Echo.Errors, res.Echo.Requests, res.Echo.FirstError)

	progress("freshness: %d investigation requests appended, polled through getInvestigation", opt.FreshnessSamples)
	if err := res.profilePath("freshness (append, projector, getInvestigation polls)", func() (err error) {
		res.Freshness, err = MeasureFreshness(ctx, stack, batches, opt.FreshnessSamples, opt.FreshnessInterval)
		return err
	}); err != nil {
		return err
	}
	res.check("freshness samples", res.Freshness.Latency.Count == opt.FreshnessSamples, "%d of %d", res.Freshness.Latency.Count, opt.FreshnessSamples)
	roundTopic, err := rs.Topic(ctx, "roundtrip", 1)
	if err != nil {
		return err
	}
	progress("freshness baseline: %d raw Kafka produce->consume round trips", opt.FreshnessSamples)
	if res.KafkaRound, err = MeasureKafkaRoundTrip(ctx, opt.Brokers, roundTopic, opt.FreshnessSamples, opt.FreshnessInterval); err != nil {
		return err
	}

	// The live projection must hold exactly what was appended.
	if err := checkLiveServing(ctx, stack, opt, res); err != nil {
		return err
	}
	closed = true
	if err := stack.Close(); err != nil {
		return err
	}

	until, err := EndOffsets(ctx, opt.Brokers, stack.ServingTops)
	if err != nil {
		return err
	}
	progress("replay: rebuilding the serving projection from offset 0 (%d events) into a fresh schema", until.Total())
	if err := res.profilePath("replay (errata replay's catch-up of the serving projection)", func() (err error) {
		res.Replay, err = (ReplayRun{Brokers: opt.Brokers, DatabaseURL: rs.DatabaseURL, Schema: "replay",
			Until: until, IPRangeDailyCap: opt.IPRangeDailyCap, Log: opt.Log}).Run(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	res.check("replay applied every event once", res.Replay.Applied == until.Total(), "applied %d, log holds %d", res.Replay.Applied, until.Total())
	res.check("replay dead letters", res.Replay.DeadLetters == 0, "%d", res.Replay.DeadLetters)
	diff, err := compareSchemas(ctx, rs.DatabaseURL, "serving", "replay")
	if err != nil {
		return err
	}
	res.check("replay identical to the live projection", diff == "", "%s", or(diff, "every table equal"))
	progress("replay baseline: raw Kafka consume of the same topics from offset 0")
	took, got, err := ConsumeBaseline(ctx, opt.Brokers, until)
	if err != nil {
		return err
	}
	res.ReplayRaw = throughput(got, took)
	res.check("raw consume read every record", got == until.Total(), "%d of %d", got, until.Total())
	return nil
}

// checkLiveServing compares the API's projection with what the run appended.
func checkLiveServing(ctx context.Context, s *Stack, opt Options, res *Result) error {
	// Everything appended is applied before counting.
	until, err := EndOffsets(ctx, opt.Brokers, s.ServingTops)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, caughtUp, err := checkpointProgress(ctx, s.Pool, until)
		if err != nil {
			return err
		}
		if caughtUp {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("live serving projection did not catch up within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var versions, views, investigations int
	if err := s.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM post_versions), (SELECT COALESCE(sum(view_count), 0) FROM posts),
		(SELECT count(*) FROM investigations)`).Scan(&versions, &views, &investigations); err != nil {
		return fmt.Errorf("count live projection: %w", err)
	}
	// One warm-up post, the load's posts, the freshness posts (and warm-up).
	wantVersions := 1 + len(res.API.Registered) + opt.FreshnessSamples + 1
	res.check("live projection holds every registered version", versions == wantVersions, "%d versions, want %d", versions, wantVersions)
	res.check("live projection counted every view", views == res.API.Views, "%d views, want %d", views, res.API.Views)
	res.check("live projection holds every investigation request", investigations == opt.FreshnessSamples+1, "%d, want %d", investigations, opt.FreshnessSamples+1)
	return nil
}

// runProjection: the serving projector over a generated workload beside
// pgx CopyFrom of as many rows and a raw consume of the same records.
func runProjection(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) error {
	topics, err := rs.Topics(ctx, "proj", opt.Partitions)
	if err != nil {
		return err
	}
	w := workload.Generate(workload.Spec{
		Seed: 7, Posts: opt.ProjectionPosts, ViewsPerPost: opt.ViewsPerPost, Viewers: 500, IPRanges: 50, Days: 2,
		IPRangeDailyCap: opt.IPRangeDailyCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	progress("serving projection: appending a workload of %d events", len(w.Events))
	if err := AppendWorkload(ctx, opt.Brokers, topics, w.Events); err != nil {
		return err
	}
	postsTopic := topics.Name(events.TopicPosts)
	until, err := EndOffsets(ctx, opt.Brokers, []string{postsTopic})
	if err != nil {
		return err
	}
	progress("serving projection: exactly-once projector from offset 0")
	if err := res.profilePath("serving projection", func() (err error) {
		res.Projection, err = (ProjectorRun{Brokers: opt.Brokers, DatabaseURL: rs.DatabaseURL, Schema: "projection", Group: topics.Prefix + "bench.projection",
			Topics: []string{postsTopic}, Until: until, IPRangeDailyCap: opt.IPRangeDailyCap, Log: opt.Log}).Run(ctx)
		return err
	}); err != nil {
		return fmt.Errorf("serving projection: %w", err)
	}
	res.check("projector applied exactly the events appended", res.Projection.Applied == len(w.Events) && until.Total() == len(w.Events),
		"applied %d, appended %d, log holds %d", res.Projection.Applied, len(w.Events), until.Total())
	res.check("projection dead letters", res.Projection.DeadLetters == 0, "%d", res.Projection.DeadLetters)
	pool, err := postgres.Connect(ctx, rs.DatabaseURL, "projection")
	if err != nil {
		return err
	}
	verr := workload.Verify(ctx, pool, w.Expect)
	pool.Close()
	res.check("projection matches the workload's model", verr == nil, "%v", or(fmt.Sprint(verr), "exact"))
	progress("serving projection baselines: pgx CopyFrom of %d rows, raw consume of %d records", len(w.Events), len(w.Events))
	took, err := CopyFromBaseline(ctx, rs.DatabaseURL, "projection", len(w.Events))
	if err != nil {
		return err
	}
	res.CopyFrom = throughput(len(w.Events), took)
	took, got, err := ConsumeBaseline(ctx, opt.Brokers, until)
	if err != nil {
		return err
	}
	res.ProjConsume = throughput(got, took)
	res.check("raw consume read every workload record", got == len(w.Events), "%d of %d", got, len(w.Events))
	return nil
}

// AppendWorkload appends events in chunks through the producers' Appender.
func AppendWorkload(ctx context.Context, brokers []string, topics events.Topics, evs []events.Event) error {
	cl, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	if err != nil {
		return err
	}
	defer cl.Close()
	appender := producers.NewAppender(cl, events.NewCatalogRegistry(), topics, nil)
	for start := 0; start < len(evs); start += 2000 {
		if _, err := appender.Append(ctx, evs[start:min(start+2000, len(evs))]...); err != nil {
			return fmt.Errorf("append workload: %w", err)
		}
	}
	return nil
}

func or(s, otherwise string) string {
	if s == "" || s == "<nil>" {
		return otherwise
	}
	return s
}
