package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/projections/audit"
)

// migrateAudit migrates the audit projection's first generation.
func migrateAudit(ctx context.Context, e *env) error {
	store := e.auditStore()
	pool, err := store.Connect(ctx, 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	return store.Migrate(ctx, pool, 1)
}

// auditCmd prints the trail of one investigation.
func auditCmd() *cobra.Command {
	var asJSON, fromProjection, analysis, appeal bool
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
			if appeal {
				return printAppealTrail(cmd, e, args[0], fromProjection, asJSON, timeout)
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
	c.Flags().BoolVar(&appeal, "appeal", false, "the id is an appeal's: the filing, each review (fetches, searches, exchanges, assessment) and the decision")
	c.MarkFlagsMutuallyExclusive("analysis", "appeal")
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
	pool, err := e.followingPool(ctx, audit.ProjectorName, audit.Schema, nil)
	if err != nil {
		return nil, nil, err
	}
	return audit.NewReader(pool, e.registry), pool.Close, nil
}
