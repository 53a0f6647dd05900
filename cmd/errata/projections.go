package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// The read models `errata worker` projects and `errata replay`, `verify`
// and `projections` rebuild. Each is wired here once, from the settings:
// its storage by generation, and its live projector on one generation.

// projectorNames are the read models, in the order the commands list them.
func projectorNames() []string {
	return []string{audit.ProjectorName, analytics.ProjectorName, search.ProjectorName, serving.ProjectorName}
}

// projectorFactory starts a projector's consumer-group runner on
// generation gen, and returns it with a function releasing its resources.
type projectorFactory func(ctx context.Context, gen int64) (*kafka.Runner, func(), error)

// projection is one read model as the commands wire it.
type projection struct {
	// store is its storage by generation.
	store replay.Rebuildable
	// start runs its projector on a generation.
	start projectorFactory
}

// projectionOf wires read model name. Nothing connects until used.
func projectionOf(e *env, name string) (projection, error) {
	switch name {
	case audit.ProjectorName:
		return auditProjection(e), nil
	case analytics.ProjectorName:
		return analyticsProjection(e), nil
	case search.ProjectorName:
		return searchProjection(e)
	case serving.ProjectorName:
		return servingProjection(e), nil
	}
	return projection{}, fmt.Errorf("unknown projector %q (known: %s)", name, strings.Join(projectorNames(), ", "))
}

// servingTopics are the event topics the serving projection reads: all.
func servingTopics(e *env) []string {
	var out []string
	for _, tp := range e.registry.Topics() {
		out = append(out, e.topics.Name(tp))
	}
	return out
}

// servingStore is the serving projection's storage: generation N in
// schema targets.Name(ERRATA_SERVING_SCHEMA, N).
func (e *env) servingStore() *replay.Postgres {
	return replay.NewPostgres(replay.PostgresConfig{DatabaseURL: e.cfg.DatabaseURL, Schema: e.cfg.ServingSchema,
		Projector: serving.ProjectorName, Topics: servingTopics(e), Migrations: serving.Migrations(),
		Applier:  func() pgproj.Applier { return serving.NewApplier(e.cfg.ViewIPRangeDailyCap) },
		Registry: e.registry, Log: e.log})
}

// servingProjection runs on a schema that `errata migrate` (generation 1)
// or the replay that built it has migrated.
func servingProjection(e *env) projection {
	store := e.servingStore()
	return projection{store: store, start: func(ctx context.Context, gen int64) (*kafka.Runner, func(), error) {
		pool, err := store.Connect(ctx, gen)
		if err != nil {
			return nil, nil, err
		}
		return e.projectorRunner(ctx, serving.ProjectorName, store.Topics(), pool.Close,
			func(dl *kafka.DeadLetter) replay.Projector { return store.Projector(pool, dl) })
	}}
}

// auditStore is the audit projection's storage: generation N in schema
// targets.Name("audit", N). It reads the investigations, posts and
// analyses topics.
func (e *env) auditStore() *replay.Postgres {
	return replay.NewPostgres(replay.PostgresConfig{DatabaseURL: e.cfg.DatabaseURL, Schema: audit.Schema,
		Projector: audit.ProjectorName,
		Topics: []string{e.topics.Name(events.TopicInvestigations), e.topics.Name(events.TopicPosts),
			e.topics.Name(events.TopicAnalyses)},
		Migrations: audit.Migrations(), Applier: func() pgproj.Applier { return audit.NewApplier(e.registry) },
		Registry: e.registry, Log: e.log})
}

// auditProjection migrates the schema it runs on.
func auditProjection(e *env) projection {
	store := e.auditStore()
	return projection{store: store, start: func(ctx context.Context, gen int64) (*kafka.Runner, func(), error) {
		pool, err := store.Connect(ctx, gen)
		if err != nil {
			return nil, nil, err
		}
		if err := store.Migrate(ctx, pool, gen); err != nil {
			pool.Close()
			return nil, nil, err
		}
		return e.projectorRunner(ctx, audit.ProjectorName, store.Topics(), pool.Close,
			func(dl *kafka.DeadLetter) replay.Projector { return store.Projector(pool, dl) })
	}}
}

// searchStore is the corpus search's storage: its Postgres fold and its
// Elasticsearch indices under ERRATA_SEARCH_INDEX_PREFIX. It reads every
// topic.
func (e *env) searchStore() (*replay.Search, error) {
	es, err := e.elasticsearch()
	if err != nil {
		return nil, err
	}
	return replay.NewSearch(replay.SearchConfig{DatabaseURL: e.cfg.DatabaseURL, ES: es, IndexPrefix: e.cfg.SearchIndexPrefix,
		Topics: servingTopics(e), Registry: e.registry, Log: e.log}), nil
}

// searchProjection prepares the generation it runs on: its fold's schema,
// its indices, and the aliases when they do not exist yet.
func searchProjection(e *env) (projection, error) {
	store, err := e.searchStore()
	if err != nil {
		return projection{}, err
	}
	return projection{store: store, start: func(ctx context.Context, gen int64) (*kafka.Runner, func(), error) {
		if err := store.Prepare(ctx, gen, true); err != nil {
			return nil, nil, err
		}
		pool, err := store.Connect(ctx, gen)
		if err != nil {
			return nil, nil, err
		}
		return e.projectorRunner(ctx, search.ProjectorName, store.Topics(), pool.Close,
			func(dl *kafka.DeadLetter) replay.Projector { return store.Projector(pool, gen, dl) })
	}}, nil
}

// analyticsStore is the analysts' metrics storage: generation N is the
// ClickHouse database targets.Name(ERRATA_CLICKHOUSE_DATABASE, N).
func (e *env) analyticsStore() *replay.Analytics {
	return replay.NewAnalytics(replay.AnalyticsConfig{URL: e.cfg.ClickHouseURL, Database: e.cfg.ClickHouseDatabase,
		Topics: e.topics, Registry: e.registry, InsertRows: e.cfg.MetricsInsertRows, Log: e.log})
}

// analyticsProjection migrates the database it runs on (creating it if
// missing). Its fetches wait up to ERRATA_METRICS_LINGER for
// ERRATA_METRICS_FETCH_MIN_BYTES, so inserts carry many rows each.
func analyticsProjection(e *env) projection {
	store := e.analyticsStore()
	return projection{store: store, start: func(ctx context.Context, gen int64) (*kafka.Runner, func(), error) {
		conn, err := store.Conn(ctx, gen)
		if err != nil {
			return nil, nil, err
		}
		if err := analytics.Migrate(ctx, conn, e.log); err != nil {
			_ = conn.Close()
			return nil, nil, err
		}
		minBytes := int32(min(e.cfg.MetricsFetchMinBytes, 1<<30)) //nolint:gosec // G115: positive by config, at most 1<<30 here
		return e.projectorRunner(ctx, analytics.ProjectorName, store.Topics(), func() { _ = conn.Close() },
			func(dl *kafka.DeadLetter) replay.Projector { return store.Projector(conn, dl) },
			kgo.FetchMaxWait(max(e.cfg.MetricsLinger, 10*time.Millisecond)), // the broker needs a positive wait
			kgo.FetchMinBytes(minBytes))
	}}
}

// projectorGroup is projector name's Kafka consumer group.
func projectorGroup(e *env, name string) string { return e.cfg.TopicPrefix + "projector." + name }

// projectorRunner wires a projector to a consumer-group runner on topics
// whose positions are the projector's own checkpoints; what the projector
// parks is copied to the dead-letter topic under its group. release frees
// the stores the projector writes; the runner's release function frees
// them and the dead-letter producer, and on an error they are freed here.
func (e *env) projectorRunner(ctx context.Context, name string, topics []string, release func(),
	projector func(dl *kafka.DeadLetter) replay.Projector, opts ...kgo.Opt) (*kafka.Runner, func(), error) {
	producer, err := e.producer(ctx)
	if err != nil {
		release()
		return nil, nil, err
	}
	group := projectorGroup(e, name)
	proj := projector(kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log))
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         topics,
		Positions:      proj,
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
		Observer:       e.batchObserver(),
		ExtraOpts:      opts,
	}, proj, e.log)
	if err != nil {
		producer.Close()
		release()
		return nil, nil, err
	}
	return r, func() { producer.Close(); release() }, nil
}

// projectorGroups are the projectors `errata worker` runs, as Kafka knows
// them: consumer group and topics.
func projectorGroups(e *env) ([]ops.ProjectorGroup, error) {
	var out []ops.ProjectorGroup
	for _, name := range projectorNames() {
		p, err := projectionOf(e, name)
		if err != nil {
			return nil, err
		}
		out = append(out, ops.ProjectorGroup{Name: name, Group: projectorGroup(e, name), Topics: p.store.Topics()})
	}
	return out, nil
}
