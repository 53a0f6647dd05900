package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/consumers/appeals"
	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
)

// migrateAppeals migrates the appeal reviews' run state (OpenState also
// migrates it when the stage starts).
func migrateAppeals(ctx context.Context, e *env) error {
	pool, err := postgres.Connect(ctx, e.cfg.DatabaseURL, appeals.ProjectorName)
	if err != nil {
		return err
	}
	defer pool.Close()
	return pgproj.Migrate(ctx, pool, appeals.ProjectorName, appeals.Migrations(), e.log)
}

// newAppeals wires the appeal review stage: its run state (a fold of the
// investigations topic) and its executor, with the evidence engine's
// registry, default policy and stance model, our own search when one is
// configured, and the SSRF-safe client for the appellants' pages.
func newAppeals(ctx context.Context, e *env, parts *investigatorParts) (*runstate.Group, *runstate.Executor, error) {
	registry, err := sources.Load(e.cfg.SourceRegistry)
	if err != nil {
		return nil, nil, fmt.Errorf("ERRATA_SOURCE_REGISTRY: %w", err)
	}
	policy, err := evidence.PolicyByName(e.cfg.EvidencePolicy)
	if err != nil {
		return nil, nil, fmt.Errorf("ERRATA_EVIDENCE_POLICY: %w", err)
	}
	stanceModel := e.cfg.StanceModel
	if stanceModel == "" {
		stanceModel = e.cfg.ValidatorModel
	}
	client, err := httpsafe.New(httpsafe.WithTimeout(30 * time.Second))
	if err != nil {
		return nil, nil, err
	}
	g, store, err := appeals.OpenState(ctx, runstate.GroupConfig{Name: appeals.ProjectorName, DatabaseURL: e.cfg.DatabaseURL,
		Brokers: e.cfg.KafkaBrokers, Topics: e.topics, Registry: e.registry,
		Kafka: kafka.RunnerConfig{InstanceID: e.cfg.KafkaInstanceID, SessionTimeout: e.cfg.KafkaSessionTimeout,
			Observer: e.batchObserver()}}, e.log)
	if err != nil {
		return nil, nil, err
	}
	provider := e.provider()
	w := appeals.New(appeals.Config{
		Worker: e.workerID(), Provider: provider.Name(), BaseURL: e.cfg.OpenAIBaseURL,
		InstanceKey: logging.Secret(e.cfg.OpenAIAPIKey), AllowNoKey: e.cfg.LLMProvider == llm.ProviderChatCompletions,
		MaxAttempts: e.cfg.MaxAttempts, RetryBase: e.cfg.RetryBase,
	}, appeals.Deps{
		State: store, Appender: parts.log,
		Stance: stance.New(provider, stance.Config{Model: stanceModel, ReasoningEffort: e.cfg.ReasoningEffort}),
		Search: parts.search, Registry: registry, Fetcher: fetchurl.New(client, fetchurl.Options{}),
		Policy: policy, Log: e.log,
	})
	e.log.Info("appeal reviews", "stance_model", stanceModel, "search", parts.search != nil,
		"registry", registry.Version(), "policy", policy.Version())
	ex := runstate.NewExecutor(runstate.ExecutorConfig{Owner: e.workerID(), Concurrency: 2, LeaseTTL: e.cfg.LeaseTTL},
		g.Store, w.List, w.Do, e.log.With("stage", "appeals"), time.Now)
	return g, ex, nil
}

// printAppealTrail prints the trail of one appeal from the log: its
// filing, every review attempt and the decision (exact exchange bodies and
// the requester's keyed hash with --json only).
func printAppealTrail(cmd *cobra.Command, e *env, id string, fromProjection, asJSON bool, timeout time.Duration) error {
	ctx := cmd.Context()
	var trail *audit.AppealTrail
	if fromProjection {
		reader, closeFn, err := e.auditReader(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		trail, err = reader.FullAppealTrail(ctx, id)
		if errors.Is(err, audit.ErrAppealNotFound) {
			return fmt.Errorf("%w (is the audit projector running? `errata worker --projectors audit`)", err)
		}
		if err != nil {
			return err
		}
	} else {
		var err error
		trail, err = audit.ReadAppealLog(ctx, audit.LogSource{Brokers: e.cfg.KafkaBrokers, Topics: e.topics,
			Registry: e.registry, Timeout: timeout}, id)
		if err != nil {
			return err
		}
	}
	if asJSON {
		out, err := audit.AppealJSON(trail)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	pub, err := trail.Public()
	if err != nil {
		return err
	}
	return audit.AppealText(cmd.OutOrStdout(), pub)
}
