package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// The analysts' metrics projection in ClickHouse: its projector, its
// migration and the reader behind publicMetrics.
func init() {
	projectorFactories[analytics.ProjectorName] = newMetricsRunner
	migrators[analytics.ProjectorName] = func(ctx context.Context, e *env) error {
		conn, err := e.metricsConn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return analytics.Migrate(ctx, conn, e.log)
	}
	rebuildables[analytics.ProjectorName] = metricsRebuild{}
}

// metricsDatabase is the ClickHouse database of the projection's current
// generation: ERRATA_CLICKHOUSE_DATABASE, or <it>_g<N> for a rebuild.
func (e *env) metricsDatabase(ctx context.Context) string {
	return targets.Name(e.cfg.ClickHouseDatabase, generationOf(ctx))
}

// metricsConn opens (creating if missing) the projection's database.
func (e *env) metricsConn(ctx context.Context) (driver.Conn, error) {
	return analytics.Open(ctx, e.cfg.ClickHouseURL, e.metricsDatabase(ctx))
}

// metricsReader opens the metrics reader on the projection's active
// generation and moves it when `errata replay` switches generations
// (publicMetrics resolves through its Incidence method). The caller calls
// the release function.
func (e *env) metricsReader(ctx context.Context) (*analytics.Reader, func(), error) {
	control, err := e.controlPool(ctx)
	if err != nil {
		return nil, nil, err
	}
	store := targets.New(control)
	active, err := store.Active(ctx, analytics.ProjectorName)
	if err != nil {
		control.Close()
		return nil, nil, err
	}
	conn, err := e.metricsReadConn(active.Generation)
	if err != nil {
		control.Close()
		return nil, nil, err
	}
	r := analytics.NewReader(conn)
	watchCtx, stop := context.WithCancel(ctx)
	gen := active.Generation // read and written by the watch goroutine only
	done := make(chan struct{})
	go func() {
		defer close(done)
		store.Watch(watchCtx, analytics.ProjectorName, targetPollInterval, e.log, func(t targets.Target) {
			if t.Generation == gen {
				return
			}
			next, err := e.metricsReadConn(t.Generation)
			if err != nil {
				e.log.Warn("metrics projection switched but its database cannot be opened; readers stay", "generation", t.Generation, "err", err)
				return
			}
			old := r.Swap(next)
			gen = t.Generation
			e.log.Info("projection switched: readers move", "projection", analytics.ProjectorName, "generation", t.Generation)
			// Queries in flight on the old database finish first.
			time.AfterFunc(30*time.Second, func() { _ = old.Close() })
		})
	}()
	return r, func() {
		stop()
		<-done // no swap can happen after this
		control.Close()
		_ = r.Swap(nil).Close()
	}, nil
}

// metricsReadConn connects to generation gen's database for reading. It
// neither creates the database nor dials: `errata serve` starts while
// ClickHouse is down (readiness reports it) and reads once it is up.
func (e *env) metricsReadConn(gen int64) (driver.Conn, error) {
	return e.clickhouseConn(targets.Name(e.cfg.ClickHouseDatabase, gen))
}

// clickhouseConn connects with database as the default (none when empty)
// without creating it; clickhouse-go dials on first use.
func (e *env) clickhouseConn(database string) (driver.Conn, error) {
	opts, err := analytics.Options(e.cfg.ClickHouseURL, database)
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return conn, nil
}

// metricsConnAt opens generation gen's database (creating it if missing).
func (e *env) metricsConnAt(ctx context.Context, gen int64) (driver.Conn, error) {
	return analytics.Open(ctx, e.cfg.ClickHouseURL, targets.Name(e.cfg.ClickHouseDatabase, gen))
}

// newMetricsRunner migrates the projection's database and wires its
// projector to a consumer-group runner whose positions are the projector's
// _positions table. Fetches wait up to ERRATA_METRICS_LINGER for
// ERRATA_METRICS_FETCH_MIN_BYTES, so inserts carry many rows each.
func newMetricsRunner(ctx context.Context, e *env) (*kafka.Runner, func(), error) {
	conn, err := e.metricsConn(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := analytics.Migrate(ctx, conn, e.log); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	group := e.cfg.TopicPrefix + "projector." + analytics.ProjectorName
	dl := kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log)
	proj := analytics.NewProjector(conn, e.registry, e.topics, dl, e.cfg.MetricsInsertRows, e.log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         metricsTopics(e),
		Positions:      proj,
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
		Observer:       e.batchObserver(),
		ExtraOpts: []kgo.Opt{
			kgo.FetchMaxWait(max(e.cfg.MetricsLinger, 10*time.Millisecond)), // the broker needs a positive wait
			kgo.FetchMinBytes(int32(min(e.cfg.MetricsFetchMinBytes, 1<<30))),
		},
	}, proj, e.log)
	if err != nil {
		producer.Close()
		_ = conn.Close()
		return nil, nil, err
	}
	return r, func() { producer.Close(); _ = conn.Close() }, nil
}

// metricsTopics are the topics the metrics projection reads.
func metricsTopics(e *env) []string {
	return []string{e.topics.Name(events.TopicPosts), e.topics.Name(events.TopicInvestigations), e.topics.Name(events.TopicAnalyses)}
}

// metricsRebuild rebuilds the metrics projection: generation N is the
// ClickHouse database targets.Name(ERRATA_CLICKHOUSE_DATABASE, N).
type metricsRebuild struct{}

func (metricsRebuild) topics(e *env) []string { return metricsTopics(e) }

func (metricsRebuild) open(ctx context.Context, e *env, gen int64) (kafka.Handler, kafka.PositionStore, func(), error) {
	conn, err := e.metricsConnAt(ctx, gen)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := analytics.Migrate(ctx, conn, e.log); err != nil {
		_ = conn.Close()
		return nil, nil, nil, err
	}
	proj := analytics.NewProjector(conn, e.registry, e.topics, noDeadLetters{e.log}, e.cfg.MetricsInsertRows, e.log)
	return proj, proj, func() { _ = conn.Close() }, nil
}

func (metricsRebuild) generations(ctx context.Context, e *env) ([]int64, error) {
	conn, err := e.clickhouseConn("")
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	base := e.cfg.ClickHouseDatabase
	rows, err := conn.Query(ctx, "SELECT name FROM system.databases WHERE name = {base:String} OR startsWith(name, {prefix:String})",
		clickhouse.Named("base", base), clickhouse.Named("prefix", base+"_g"))
	if err != nil {
		return nil, fmt.Errorf("list metrics databases: %w", err)
	}
	defer rows.Close()
	return generationsIn(rows, base)
}

func (metricsRebuild) activate(context.Context, *env, int64) error { return nil }

func (metricsRebuild) drop(ctx context.Context, e *env, gen int64) error {
	name := targets.Name(e.cfg.ClickHouseDatabase, gen)
	if err := analytics.ValidDatabase(name); err != nil {
		return err
	}
	conn, err := e.clickhouseConn("")
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" SYNC"); err != nil {
		return fmt.Errorf("drop metrics database %s: %w", name, err)
	}
	return nil
}

func (metricsRebuild) positions(ctx context.Context, e *env, gen int64) (replay.Offsets, error) {
	conn, err := e.metricsConnAt(ctx, gen)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	at, err := analytics.NewProjector(conn, e.registry, e.topics, noDeadLetters{e.log}, e.cfg.MetricsInsertRows, e.log).Positions(ctx, metricsTopics(e))
	return replay.Offsets(at), err
}

// checksum dumps the tables at the positions the projector has recorded:
// ClickHouse has no transactions, so rows of a batch still in flight
// (inserted, position not yet stored) are left out by their log position.
func (metricsRebuild) checksum(ctx context.Context, e *env, gen int64, w io.Writer) ([]tableSum, replay.Offsets, error) {
	conn, err := e.metricsConnAt(ctx, gen)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	proj := analytics.NewProjector(conn, e.registry, e.topics, noDeadLetters{e.log}, e.cfg.MetricsInsertRows, e.log)
	topics := metricsTopics(e)
	at, err := proj.Positions(ctx, topics)
	if err != nil {
		return nil, nil, err
	}
	below := map[events.Topic]map[int32]int64{}
	for _, tp := range []events.Topic{events.TopicPosts, events.TopicInvestigations, events.TopicAnalyses} {
		below[tp] = at[e.topics.Name(tp)]
	}
	dump, err := analytics.DumpBelow(ctx, conn, targets.Name(e.cfg.ClickHouseDatabase, gen), below)
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Write(dump); err != nil {
		return nil, nil, err
	}
	return metricsTableSums(dump), replay.Offsets(at), nil
}

// metricsTableSums splits a canonical dump ("# table (...) N rows" headers,
// then the rows) into per-table checksums.
func metricsTableSums(dump []byte) []tableSum {
	var out []tableSum
	var h hash.Hash
	flush := func() {
		if h != nil {
			out[len(out)-1].SHA256 = hex.EncodeToString(h.Sum(nil))
		}
	}
	for line := range strings.Lines(string(dump)) {
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			flush()
			table, _, _ := strings.Cut(rest, " ")
			out = append(out, tableSum{Table: "clickhouse " + table})
			h = sha256.New()
			continue
		}
		if h == nil {
			continue
		}
		h.Write([]byte(line))
		out[len(out)-1].Rows++
	}
	flush()
	return out
}
