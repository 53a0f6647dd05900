package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// The audit trail: `errata audit`, the audit projector and its migration.
func init() {
	projectorFactories[audit.ProjectorName] = newAuditRunner
	migrators[audit.ProjectorName] = func(ctx context.Context, e *env) error {
		pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, audit.Schema)
		if err != nil {
			return err
		}
		defer pool.Close()
		return pgproj.Migrate(ctx, pool, audit.Schema, audit.Migrations(), e.log)
	}
	rebuildables[audit.ProjectorName] = auditRebuild{}
}

// auditSchema is the Postgres schema of the audit projection's generation gen.
func auditSchema(gen int64) string { return targets.Name(audit.Schema, gen) }

// auditCmd prints the trail of one investigation.
func auditCmd() *cobra.Command {
	var asJSON, fromProjection, analysis bool
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "audit <investigationId> | audit --analysis <analysisId>",
		Short: "Print the complete trail of one investigation or verdict analysis from the log (text, or --json)",
		Long: "Reads every event of the investigation from the investigations topic (the partition its id\n" +
			"maps to, from the start to the end offset at the time of the call) and the registrations of its\n" +
			"post version from the posts topic, and prints the post version and its hashes, the requests,\n" +
			"the input snapshot, every attempt (prompt version and sha256, model, tools, exchanges with tool\n" +
			"calls, searches, citations, tool results, tokens; exact request and response bodies with --json),\n" +
			"every submitted claim with the validator's decision, and the result. --from-projection reads the\n" +
			"audit projection in Postgres instead (same trail, as far as the projector has applied the log).\n" +
			"With --analysis, the id is a verdict analysis's: its events on the analyses topic give the requests\n" +
			"with the exact text, every attempt (prompts with sha256, model, registry, policy and rubric versions),\n" +
			"every model exchange (exact bodies with --json), every claim with its triage, queries and results,\n" +
			"sources with tier and stance, its verdict with the confidence caps applied, the post verdict, and how\n" +
			"each attempt ended.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("audit")
			if err != nil {
				return err
			}
			if analysis {
				return printAnalysisTrail(cmd, e, args[0], fromProjection, asJSON, timeout)
			}
			var trail *audit.Trail
			if fromProjection {
				reader, closeFn, err := e.auditReader(ctx)
				if err != nil {
					return err
				}
				defer closeFn()
				trail, err = reader.FullTrail(ctx, args[0])
				if errors.Is(err, audit.ErrNotFound) {
					return fmt.Errorf("%w (is the audit projector running? `errata worker --projectors audit`)", err)
				}
				if err != nil {
					return err
				}
			} else {
				trail, err = audit.ReadLog(ctx, audit.LogSource{Brokers: e.cfg.KafkaBrokers, Topics: e.topics,
					Registry: e.registry, Timeout: timeout}, args[0])
				if err != nil {
					return err
				}
			}
			if asJSON {
				out, err := audit.JSON(trail)
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			return audit.Text(cmd.OutOrStdout(), trail)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the trail as JSON, with the exact request and response bodies")
	c.Flags().BoolVar(&fromProjection, "from-projection", false, "read the audit projection in Postgres instead of the log")
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "bound on reading the log")
	c.Flags().BoolVar(&analysis, "analysis", false, "the id is a verdict analysis's (analyses topic)")
	return c
}

// printAnalysisTrail prints the trail of one verdict analysis, from the
// log or the audit projection.
func printAnalysisTrail(cmd *cobra.Command, e *env, id string, fromProjection, asJSON bool, timeout time.Duration) error {
	ctx := cmd.Context()
	var trail *audit.AnalysisTrail
	if fromProjection {
		reader, closeFn, err := e.auditReader(ctx)
		if err != nil {
			return err
		}
		defer closeFn()
		trail, err = reader.FullAnalysisTrail(ctx, id)
		if errors.Is(err, audit.ErrAnalysisNotFound) {
			return fmt.Errorf("%w (is the audit projector running? `errata worker --projectors audit`)", err)
		}
		if err != nil {
			return err
		}
	} else {
		var err error
		trail, err = audit.ReadAnalysisLog(ctx, audit.LogSource{Brokers: e.cfg.KafkaBrokers, Topics: e.topics,
			Registry: e.registry, Timeout: timeout}, id)
		if err != nil {
			return err
		}
	}
	if asJSON {
		out, err := audit.AnalysisJSON(trail)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(out)
		return err
	}
	return audit.AnalysisText(cmd.OutOrStdout(), trail)
}

// auditReader opens the audit projection's reader on its active generation
// (following `errata replay` switches); the GraphQL field resolves through
// its Trail method. The caller calls the release function.
func (e *env) auditReader(ctx context.Context) (*audit.Reader, func(), error) {
	pool, err := e.followingPool(ctx, audit.ProjectorName, audit.Schema)
	if err != nil {
		return nil, nil, err
	}
	return audit.NewReader(pool, e.registry), pool.Close, nil
}

// newAuditRunner wires the audit projector (investigations, posts and
// analyses topics) to a consumer-group runner whose positions are its checkpoints.
func newAuditRunner(ctx context.Context, e *env) (*kafka.Runner, func(), error) {
	schema := auditSchema(generationOf(ctx))
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, nil, err
	}
	if err := pgproj.Migrate(ctx, pool, schema, audit.Migrations(), e.log); err != nil {
		pool.Close()
		return nil, nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	group := e.cfg.TopicPrefix + "projector." + audit.ProjectorName
	dl := kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log)
	proj := pgproj.NewProjector(audit.ProjectorName, pool, e.registry, audit.NewApplier(e.registry), dl, e.log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         auditTopics(e),
		Positions:      proj,
		Observer:       e.batchObserver(),
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
	}, proj, e.log)
	if err != nil {
		producer.Close()
		pool.Close()
		return nil, nil, err
	}
	return r, func() { producer.Close(); pool.Close() }, nil
}

// auditTopics are the topics the audit projection reads.
func auditTopics(e *env) []string {
	return []string{e.topics.Name(events.TopicInvestigations), e.topics.Name(events.TopicPosts), e.topics.Name(events.TopicAnalyses)}
}

// auditRebuild rebuilds the audit projection: generation N lives in schema
// targets.Name("audit", N).
type auditRebuild struct{}

func (auditRebuild) topics(e *env) []string { return auditTopics(e) }

func (auditRebuild) open(ctx context.Context, e *env, gen int64) (kafka.Handler, kafka.PositionStore, func(), error) {
	schema := auditSchema(gen)
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, schema)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := pgproj.Migrate(ctx, pool, schema, audit.Migrations(), e.log); err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	proj := pgproj.NewProjector(audit.ProjectorName, pool, e.registry, audit.NewApplier(e.registry), noDeadLetters{e.log}, e.log)
	return proj, proj, pool.Close, nil
}

func (auditRebuild) generations(ctx context.Context, e *env) ([]int64, error) {
	return schemaGenerations(ctx, e, audit.Schema)
}

func (auditRebuild) activate(context.Context, *env, int64) error { return nil }

func (auditRebuild) drop(ctx context.Context, e *env, gen int64) error {
	return dropSchema(ctx, e, auditSchema(gen))
}

func (auditRebuild) positions(ctx context.Context, e *env, gen int64) (replay.Offsets, error) {
	return postgresPositions(ctx, e, auditSchema(gen), audit.ProjectorName)
}

func (auditRebuild) checksum(ctx context.Context, e *env, gen int64, w io.Writer) ([]tableSum, replay.Offsets, error) {
	return dumpPostgresSchema(ctx, e, auditSchema(gen), audit.ProjectorName, w)
}
