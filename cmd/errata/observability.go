package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// readinessTimeout bounds each dependency check of /readyz.
const readinessTimeout = 2 * time.Second

// processMetrics are this process's metrics: one registry, shared by the
// runners, the investigation stages and the HTTP surface.
type processMetrics struct {
	reg      *prometheus.Registry
	http     *metrics.HTTP
	consumer *metrics.Consumer
	llm      *metrics.LLM
}

// newProcessMetrics builds the metrics of a process on a registry of its own.
func newProcessMetrics(cfg config.Config, log *slog.Logger) *processMetrics {
	reg := metrics.NewRegistry()
	return &processMetrics{reg: reg, http: metrics.NewHTTP(reg), consumer: metrics.NewConsumer(reg),
		llm: metrics.NewLLM(reg, cfg.LLMPrices, log)}
}

// batchObserver counts what runners make durable (RunnerConfig.Observer).
func (e *env) batchObserver() kafka.BatchObserver { return e.metrics.consumer }

// exchangeObserver counts the tokens and cost of every exchange the
// investigation stages record.
func (e *env) exchangeObserver() investigator.ExchangeObserver {
	m := e.metrics.llm
	return func(ex *events.InvestigationExchangeRecordedV1) {
		m.Record(ex.Provider, ex.Model, ex.Stage, metrics.Usage{Input: ex.Usage.InputTokens,
			Cached: ex.Usage.CachedInputTokens, Output: ex.Usage.OutputTokens, Reasoning: ex.Usage.ReasoningTokens})
	}
}

// consumerGroups are the Kafka consumer groups of Errata's projectors and
// investigation stages, as the worker names them.
func consumerGroups(e *env, projectors, stages []string) []string {
	var out []string
	for _, p := range projectors {
		out = append(out, projectorGroup(e, p))
	}
	for _, s := range stages {
		out = append(out, e.cfg.TopicPrefix+s)
	}
	return out
}

// storeChecks are the readiness checks of the search and metrics stores,
// for processes that use them.
func storeChecks(e *env, search, analytics bool) []ops.Check {
	var out []ops.Check
	if search {
		out = append(out, ops.HTTPCheck("elasticsearch", e.cfg.ElasticsearchURL, "/_cluster/health"))
	}
	if analytics {
		out = append(out, ops.HTTPCheck("clickhouse", e.cfg.ClickHouseURL, "/ping"))
	}
	return out
}

// newAdminClient opens a Kafka client for readiness and lag; it does not
// dial until used, so the API starts even while Kafka is down (readyz says so).
func newAdminClient(e *env) (*kgo.Client, error) {
	return kafka.NewClient(e.cfg.KafkaBrokers, kgo.RetryTimeout(readinessTimeout))
}

// newAPIObservability mounts /livez, /readyz and the request log on the
// API, and serves its /metrics on the operator's ERRATA_API_METRICS_ADDR
// (never on the public listener). Its /metrics adds the lag of every
// Errata consumer group and investigations by state.
func newAPIObservability(_ context.Context, e *env, pool *pgxpool.Pool) (api.Option, func(), error) {
	m := e.metrics
	projectors, err := projectorGroups(e)
	if err != nil {
		return nil, nil, err
	}
	cl, err := newAdminClient(e)
	if err != nil {
		return nil, nil, err
	}
	groups := consumerGroups(e, projectorNames(), stageNames())
	// A stopped or lagging projector degrades the API (it serves stale
	// reads) without making it unready.
	projections := ops.NewProjections(kadm.NewClient(cl), projectors, int64(e.cfg.ProjectionLagDegraded))
	m.reg.MustRegister(
		metrics.NewLagCollector(kadm.NewClient(cl), func() []string { return groups }, metrics.LagOptions{}, e.log),
		metrics.NewInvestigationsCollector(serving.NewReader(pool).InvestigationsByStatus, metrics.LagOptions{}, e.log),
		projections.Collector(),
	)
	// The public GraphQL surface reads the search index and the metrics store.
	checks := append([]ops.Check{ops.KafkaCheck(cl), ops.PostgresCheck(pool), projections.Check()}, storeChecks(e, true, true)...)
	ready := ops.NewReadiness(checks, readinessTimeout, e.log)
	stopMetrics, err := serveAPIMetrics(e, m.reg)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	access := ops.WithAccessLog(ops.AccessLog{Every: e.cfg.AccessLogEvery, Slow: e.cfg.AccessLogSlow})
	mount := api.WithRoutes(func(app *fiber.App) { ops.Mount(app, m.http, ready, e.log, access) })
	lines := api.WithListener(ops.RequestLines)
	return func(s *api.Server) { mount(s); lines(s) }, func() { stopMetrics(); cl.Close() }, nil
}

// serveWorkerHealth serves the worker's /health, /livez, /readyz (Kafka,
// Postgres, the stores of the projectors it runs, and each projector and
// stage: see workerHealth) and /metrics (throughput, lag of its own
// groups, model tokens and cost).
func serveWorkerHealth(ctx context.Context, e *env, projectors, stages []string, health *workerHealth) error {
	m := e.metrics
	cl, err := newAdminClient(e)
	if err != nil {
		return err
	}
	defer cl.Close()
	// A lazy pool: Postgres being down at start-up fails the readiness
	// check, not the worker.
	pcfg, err := postgres.PoolConfig(e.cfg.DatabaseURL, e.cfg.ServingSchema)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("postgres pool: %w", err)
	}
	defer pool.Close()
	groups := consumerGroups(e, projectors, stages)
	m.reg.MustRegister(metrics.NewLagCollector(kadm.NewClient(cl), func() []string { return groups }, metrics.LagOptions{}, e.log))
	checks := append([]ops.Check{ops.KafkaCheck(cl), ops.PostgresCheck(pool)},
		storeChecks(e, slices.Contains(projectors, search.ProjectorName), slices.Contains(projectors, analytics.ProjectorName))...)
	// Each projector and stage: unready while stopped, or retrying a
	// failure for longer than stuckAfter.
	checks = append(checks, health.checks()...)
	srv := &http.Server{Addr: e.cfg.WorkerHTTPAddr, Handler: ops.Mux(m.reg, ops.NewReadiness(checks, readinessTimeout, e.log), e.log),
		ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("worker health endpoint: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	}
}
