package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// binary is the errata binary built once for the tests that run it as a
// separate process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "errata-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "errata")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build errata: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type process struct {
	cmd     *exec.Cmd
	log     *os.File
	logPath string
}

func startErrata(t *testing.T, env []string, logPath string, args ...string) *process {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	require.NoError(t, cmd.Start())
	return &process{cmd: cmd, log: f, logPath: logPath}
}

func (p *process) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	_ = p.cmd.Wait()
	p.log.Close()
}

func (p *process) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	err := p.cmd.Wait()
	p.log.Close()
	if err != nil {
		logs, _ := os.ReadFile(p.logPath)
		t.Fatalf("worker did not exit cleanly on SIGTERM: %v; log:\n%s", err, logs)
	}
}

// TestWorkerKill9LosesAndDuplicatesNothing appends 20,000 post events, runs
// the serving projector as a separate `errata worker` process, kills it with
// SIGKILL at random points at least three times, restarts it, and checks the
// projection against an independent model of the events: exactly the
// expected rows and counts, nothing lost, nothing doubled.
func TestWorkerKill9LosesAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	const ipCap = 3
	w := workload.Generate(workload.Spec{
		Seed: 20261122, Posts: 400, ViewsPerPost: 49, Viewers: 40, IPRanges: 6, Days: 3,
		IPRangeDailyCap: ipCap, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	total := len(w.Events)
	require.Equal(t, 20_040, total) // 400 registrations + 40 repeats + 19,600 views

	rig := newWorkerRig(t, ctx, ipCap, "ERRATA_KAFKA_INSTANCE_ID=crash-test-worker", "ERRATA_LOG_LEVEL=info")
	require.NoError(t, rig.append(ctx, w.Events, 2000))
	env, applied := rig.env, func() int { return rig.applied(t) }

	logPath := filepath.Join(t.TempDir(), "worker.log")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	// Kill points spread over the run, each at a random position in its slice.
	var killedAt []int
	for k := 0; k < 4; k++ {
		lo := total * k / 5
		threshold := lo + 1 + rng.IntN(total/5)
		p := startErrata(t, env, logPath, "worker", "--projectors", "serving", "--stages=")
		deadline := time.Now().Add(60 * time.Second)
		for applied() < threshold && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		got := applied()
		p.kill9(t)
		require.Less(t, got, total, "the worker finished before it could be killed; workload too small")
		killedAt = append(killedAt, got)
	}
	t.Logf("killed the worker with SIGKILL after %v of %d events were applied", killedAt, total)

	p := startErrata(t, env, logPath, "worker", "--projectors", "serving", "--stages=")
	deadline := time.Now().Add(2 * time.Minute)
	for applied() < total && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p.stop(t)
	if applied() != total {
		logs, _ := os.ReadFile(logPath)
		t.Fatalf("applied %d of %d events; worker log:\n%s", applied(), total, logs)
	}
	require.NoError(t, workload.Verify(ctx, rig.pool, w.Expect))
}

// workerRig is what the process-level projector tests share: private
// topics, a database migrated by the binary, an appender, and the number of
// events the serving projector has applied (its checkpoints' sum: topics
// start at offset 0).
type workerRig struct {
	env      []string
	appender *producers.Appender
	pool     *pgxpool.Pool
}

func newWorkerRig(t *testing.T, ctx context.Context, ipCap int, extraEnv ...string) *workerRig {
	t.Helper()
	brokers, topics := testenv.Kafka(t, 3)
	dbURL := testenv.Postgres(t)
	env := append([]string{
		"ERRATA_KAFKA_BROKERS=" + strings.Join(brokers, ","),
		"ERRATA_KAFKA_TOPIC_PREFIX=" + topics.Prefix,
		"ERRATA_DATABASE_URL=" + dbURL,
		// The default worker runs every projector: each test gets its own
		// search indices and ClickHouse databases, removed when it ends.
		"ERRATA_SEARCH_INDEX_PREFIX=" + testenv.SearchIndexPrefix(t),
		"ERRATA_CLICKHOUSE_DATABASE=" + testenv.ClickHouseDatabaseName(t),
		"ERRATA_WORKER_HTTP_ADDR=127.0.0.1:0",
		"ERRATA_KAFKA_SESSION_TIMEOUT=6s",
		fmt.Sprintf("ERRATA_VIEW_IP_RANGE_DAILY_CAP=%d", ipCap),
		// These tests load the API from one loopback client and poll it;
		// the limits have their own test (ratelimit_test.go).
		"ERRATA_RATE_LIMIT=off",
	}, extraEnv...)
	for _, sub := range []string{"config", "migrate"} {
		cmd := exec.CommandContext(ctx, binary, sub)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	pool, err := postgres.Connect(ctx, dbURL, "serving")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return &workerRig{env: env, appender: producers.NewAppender(producer, events.NewCatalogRegistry(), topics, nil), pool: pool}
}

// append appends evs in chunks of n.
func (r *workerRig) append(ctx context.Context, evs []events.Event, n int) error {
	for start := 0; start < len(evs); start += n {
		if _, err := r.appender.Append(ctx, evs[start:min(start+n, len(evs))]...); err != nil {
			return err
		}
	}
	return nil
}

func (r *workerRig) applied(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, r.pool.QueryRow(context.Background(),
		`SELECT COALESCE(sum(next_offset), 0)::int FROM projection_checkpoints WHERE projector = 'serving'`).Scan(&n))
	return n
}
