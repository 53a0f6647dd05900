package main

import (
	"context"
	"fmt"
	"time"

	"github.com/errata-dev/errata/consumers/analyst"
	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
)

// migrateAnalyst migrates the analyst's run state (OpenState also
// migrates it when the stage starts).
func migrateAnalyst(ctx context.Context, e *env) error {
	pool, err := postgres.Connect(ctx, e.cfg.DatabaseURL, analyst.ProjectorName)
	if err != nil {
		return err
	}
	defer pool.Close()
	return pgproj.Migrate(ctx, pool, analyst.ProjectorName, analyst.Migrations(), e.log)
}

// newAnalyst wires the verdict analysis stage: its run state (a fold of the
// analyses topic) and its executor, on the investigator's provider
// settings (ERRATA_ANALYST_MODEL, else ERRATA_INVESTIGATOR_MODEL), the
// evidence engine's registry, policy and stance model, and our own search
// when one is configured.
func newAnalyst(ctx context.Context, e *env, parts *investigatorParts) (*runstate.Group, *runstate.Executor, error) {
	registry, err := sources.Load(e.cfg.SourceRegistry)
	if err != nil {
		return nil, nil, fmt.Errorf("ERRATA_SOURCE_REGISTRY: %w", err)
	}
	policy, err := evidence.PolicyByName(e.cfg.EvidencePolicy)
	if err != nil {
		return nil, nil, fmt.Errorf("ERRATA_EVIDENCE_POLICY: %w", err)
	}
	model := e.cfg.AnalystModel
	if model == "" {
		model = e.cfg.InvestigatorModel
	}
	stanceModel := e.cfg.StanceModel
	if stanceModel == "" {
		stanceModel = e.cfg.ValidatorModel
	}
	g, store, err := analyst.OpenState(ctx, runstate.GroupConfig{Name: analyst.ProjectorName, DatabaseURL: e.cfg.DatabaseURL,
		Brokers: e.cfg.KafkaBrokers, Topics: e.topics, Registry: e.registry,
		Kafka: kafka.RunnerConfig{InstanceID: e.cfg.KafkaInstanceID, SessionTimeout: e.cfg.KafkaSessionTimeout,
			Observer: e.batchObserver()}}, e.log)
	if err != nil {
		return nil, nil, err
	}
	rubric := verdict.DefaultRubric()
	w := analyst.New(analyst.Config{
		Worker: e.workerID(), Model: model, BaseURL: e.cfg.OpenAIBaseURL, InstanceKey: logging.Secret(e.cfg.OpenAIAPIKey),
		AllowNoKey: e.cfg.LLMProvider == llm.ProviderChatCompletions, MaxAttempts: e.cfg.MaxAttempts,
		RetryBase: e.cfg.RetryBase, ReasoningEffort: e.cfg.ReasoningEffort,
	}, analyst.Deps{
		Store: store, Appender: parts.log, Provider: e.provider(),
		Stance: stance.New(e.provider(), stance.Config{Model: stanceModel, ReasoningEffort: e.cfg.ReasoningEffort}),
		Search: parts.search, Registry: registry, Policy: policy, Rubric: rubric, Log: e.log,
	})
	e.log.Info("verdict analyses", "model", model, "stance_model", stanceModel, "search", parts.search != nil,
		"registry", registry.Version(), "policy", policy.Version(), "rubric", rubric.Version())
	ex := runstate.NewExecutor(runstate.ExecutorConfig{Owner: e.workerID(), Concurrency: e.cfg.AnalystConcurrency,
		LeaseTTL: e.cfg.LeaseTTL}, g.Store, w.List, w.Do, e.log.With("stage", "analyst"), time.Now)
	return g, ex, nil
}
