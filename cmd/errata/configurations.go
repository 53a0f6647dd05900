package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// controlOpTimeout bounds connecting, reading and appending (not the
// read-your-writes wait, which --wait bounds).
const controlOpTimeout = 30 * time.Second

// controlTools are what the configurations, experiments and reinvestigate
// commands work with: the serving projection (what is declared, active,
// running) and, to decide, the log.
type controlTools struct {
	env       *env
	pool      *pgxpool.Pool
	reader    *serving.Reader
	watermark *pgproj.Watermark
	producer  *kgo.Client         // nil unless opened withKafka
	appender  *producers.Appender // nil unless opened withKafka
	service   *control.Service    // nil unless opened withKafka
}

func (c *controlTools) close() {
	if c.producer != nil {
		c.producer.Close()
	}
	c.pool.Close()
}

// openControlTools connects to the serving projection's active generation
// and, withKafka, to the log. Logs go to stderr at warnings and above: the
// commands' output is for the operator.
func openControlTools(ctx context.Context, stderr io.Writer, withKafka bool) (*controlTools, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	log, err := logging.New(stderr, cfg.LogFormat, "warn")
	if err != nil {
		return nil, err
	}
	e := newEnv(cfg, log)
	ctx, cancel := context.WithTimeout(ctx, controlOpTimeout)
	defer cancel()
	pool, err := e.followingServingPool(ctx)
	if err != nil {
		return nil, err
	}
	c := &controlTools{env: e, pool: pool, reader: serving.NewReader(pool), watermark: pgproj.NewWatermark(pool, serving.ProjectorName)}
	if withKafka {
		if c.producer, err = e.producer(ctx); err != nil {
			c.close()
			return nil, err
		}
		c.appender = producers.NewAppender(c.producer, e.registry, e.topics, nil)
		c.service = control.New(c.reader, c.appender, prompts.Default(), evidence.Policies())
	}
	return c, nil
}

// waitShown waits until the serving projection applied pos (the decision is
// in effect) and says so on w. A timeout is reported, not failed: the event
// is in the log and takes effect once the worker catches up.
func (c *controlTools) waitShown(ctx context.Context, w io.Writer, pos producers.Position, wait time.Duration) bool {
	if wait <= 0 {
		fmt.Fprintln(w, "Not waiting for the serving projection (--wait 0): the decision takes effect once `errata worker` applies it.")
		return false
	}
	err := c.watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, wait)
	switch {
	case err == nil:
		return true
	case errors.Is(err, pgproj.ErrWatermarkTimeout):
		fmt.Fprintf(w, "warning: the serving projection did not apply the decision within %s (is `errata worker` running?); "+
			"it takes effect as soon as the worker catches up.\n", wait)
	default:
		fmt.Fprintf(w, "warning: could not confirm that the serving projection applied the decision: %v\n", err)
	}
	return false
}

// defaultOperator is $USER@hostname, what a decision records unless --operator says otherwise.
func defaultOperator() string {
	name := os.Getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	host, _ := os.Hostname()
	switch {
	case name == "" && host == "":
		return ""
	case host == "":
		return name
	}
	return name + "@" + host
}

// decisionFlags adds --operator and --reason to c.
func decisionFlags(c *cobra.Command, d *control.Decision, wait *time.Duration) {
	c.Flags().StringVar(&d.Operator, "operator", defaultOperator(), "who decides (recorded in the event)")
	c.Flags().StringVar(&d.Reason, "reason", "", "why (required; recorded in the event)")
	c.Flags().DurationVar(wait, "wait", 30*time.Second, "wait at most this long for the serving projection to show the decision (0: do not wait)")
}

func configurationsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "configurations",
		Short: "Analysis configurations: declare, list, promote (which results readers see), rollback, history",
	}
	c.AddCommand(configurationsDeclareCmd(), configurationsListCmd(), configurationsPromoteCmd(),
		configurationsRollbackCmd(), configurationsHistoryCmd())
	return c
}

func configurationsDeclareCmd() *cobra.Command {
	var d control.Declaration
	var wait time.Duration
	c := &cobra.Command{
		Use:   "declare --name N --model M --reason R",
		Short: "Declare a configuration (model, prompt versions, evidence policy, author context); declaring it again changes nothing",
		Long: "Appends configuration.declared.v1. The policy name is recorded as its version (name@hash); prompt versions\n" +
			"must be in the prompt registry. A name already taken by other settings is refused. Declaring does not\n" +
			"change what readers see: promote it, or start an experiment with it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			t, err := openControlTools(ctx, cmd.ErrOrStderr(), true)
			if err != nil {
				return err
			}
			defer t.close()
			actx, cancel := context.WithTimeout(ctx, controlOpTimeout)
			out, err := t.service.Declare(actx, d)
			cancel()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out.Unchanged {
				fmt.Fprintf(w, "Configuration %q is declared already (%s); nothing appended.\n", d.Name, out.ID)
			} else if !t.waitShown(ctx, cmd.ErrOrStderr(), out.Position, wait) {
				fmt.Fprintf(w, "Declared configuration %q (%s).\n", d.Name, out.ID)
				return nil
			}
			return printConfigurations(ctx, w, t.reader)
		},
	}
	f := c.Flags()
	f.StringVar(&d.Name, "name", "", "the configuration's name ([a-z0-9._-], not \"default\")")
	f.StringVar(&d.Model, "model", "", "the investigator (stage 1) model")
	f.StringVar(&d.ValidatorModel, "validator-model", "", "the validator (stage 2) model (default: the worker's)")
	f.StringVar(&d.Provider, "provider", "", "the LLM provider the configuration needs (openai-responses, chat-completions; default: any)")
	f.StringVar(&d.InvestigatorPrompt, "investigator-prompt", "v1", "version of the investigator prompts (investigator-fresh, investigator-update)")
	f.StringVar(&d.ValidatorPrompt, "validator-prompt", "v1", "version of the validator prompt")
	f.StringVar(&d.Policy, "policy", evidence.DefaultPolicy().Name(), "evidence policy name (or its version name@hash)")
	f.BoolVar(&d.AuthorContext, "author-context", false, "offer the investigator the author-context tool")
	decisionFlags(c, &d.Decision, &wait)
	return c
}

func configurationsListCmd() *cobra.Command {
	return controlListCmd("list", "The declared configurations; * marks the active one, RANK orders promotions (- never promoted)",
		printConfigurations)
}

// controlListCmd is a command that prints what the serving projection
// knows of the control events with show.
func controlListCmd(use, short string, show func(context.Context, io.Writer, *serving.Reader) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			t, err := openControlTools(ctx, cmd.ErrOrStderr(), false)
			if err != nil {
				return err
			}
			defer t.close()
			return show(ctx, cmd.OutOrStdout(), t.reader)
		},
	}
}

func printConfigurations(ctx context.Context, w io.Writer, r *serving.Reader) error {
	all, err := r.Configurations(ctx)
	if err != nil {
		return err
	}
	exp, err := r.RunningExperiment(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tNAME\tRANK\tID\tMODEL\tVALIDATOR\tPROMPTS\tPOLICY\tAUTHOR CONTEXT\tDECLARED\tOPERATOR\tREASON")
	for _, c := range all {
		mark, rank := "", "-"
		if c.Active {
			mark = "*"
		}
		if c.PromotionRank != nil {
			rank = fmt.Sprint(*c.PromotionRank)
		}
		id, model, validator, prompts, policy, authorCtx := "(default)", "(worker)", "(worker)", "(newest)", "(worker)", "no"
		if c.Spec != nil {
			id, model, validator = c.ID, c.Spec.Model, orDash(c.Spec.ValidatorModel)
			prompts = "investigator " + c.Spec.InvestigatorPrompt + ", validator " + c.Spec.ValidatorPrompt
			policy = c.Spec.Policy
			if c.Spec.AuthorContext {
				authorCtx = "yes"
			}
		}
		declared := "-"
		if !c.DeclaredAt.IsZero() {
			declared = c.DeclaredAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", mark, clean(c.Name), rank, id, clean(model),
			clean(validator), prompts, clean(policy), authorCtx, declared, clean(orDash(c.Operator)), clean(truncateRunes(orDash(c.Reason), 60)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if exp != nil {
		fmt.Fprintf(w, "Experiment %q is running: %s of new investigations go to the candidate (errata experiments list).\n",
			clean(exp.Name), sharePercent(exp.CandidateShareBP))
	}
	return nil
}

func configurationsPromoteCmd() *cobra.Command {
	var d control.Decision
	var wait time.Duration
	c := &cobra.Command{
		Use:   "promote NAME --reason R",
		Short: "Make a configuration the active one: readers see its results wherever it has them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd, wait, func(ctx context.Context, s *control.Service) (control.Outcome, error) {
				return s.Promote(ctx, args[0], d)
			}, printActive)
		},
	}
	decisionFlags(c, &d, &wait)
	return c
}

func configurationsRollbackCmd() *cobra.Command {
	var d control.Decision
	var wait time.Duration
	c := &cobra.Command{
		Use:   "rollback --reason R",
		Short: "Promote again the configuration that was active before the latest promotion (recorded as a rollback)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return decide(cmd, wait, func(ctx context.Context, s *control.Service) (control.Outcome, error) {
				return s.Rollback(ctx, d)
			}, printActive)
		},
	}
	decisionFlags(c, &d, &wait)
	return c
}

// decide runs one decision, waits for the projection and prints its effect.
func decide(cmd *cobra.Command, wait time.Duration, do func(context.Context, *control.Service) (control.Outcome, error),
	show func(context.Context, io.Writer, *serving.Reader) error) error {
	ctx := cmd.Context()
	t, err := openControlTools(ctx, cmd.ErrOrStderr(), true)
	if err != nil {
		return err
	}
	defer t.close()
	actx, cancel := context.WithTimeout(ctx, controlOpTimeout)
	out, err := do(actx, t.service)
	cancel()
	if err != nil {
		return err
	}
	if !t.waitShown(ctx, cmd.ErrOrStderr(), out.Position, wait) {
		fmt.Fprintf(cmd.OutOrStdout(), "Appended at %s/%d/%d.\n", out.Position.Topic, out.Position.Partition, out.Position.Offset)
		return nil
	}
	return show(ctx, cmd.OutOrStdout(), t.reader)
}

func printActive(ctx context.Context, w io.Writer, r *serving.Reader) error {
	c, err := r.ActiveConfiguration(ctx)
	if err != nil {
		return err
	}
	id := c.ID
	if id == events.DefaultConfigurationID {
		id = "the default configuration"
	}
	fmt.Fprintf(w, "Active configuration: %s (%s).\n", clean(c.Name), id)
	return nil
}

func configurationsHistoryCmd() *cobra.Command {
	return controlListCmd("history", "Every promotion and rollback, oldest first", printPromotions)
}

// printPromotions prints every promotion and rollback, oldest first.
func printPromotions(ctx context.Context, w io.Writer, r *serving.Reader) error {
	all, err := r.Configurations(ctx)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, c := range all {
		names[c.ID] = c.Name
	}
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return clean(n)
		}
		return id
	}
	history, err := r.Promotions(ctx)
	if err != nil {
		return err
	}
	if len(history) == 0 {
		fmt.Fprintln(w, "No promotions: the default configuration is active.")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tTIME\tKIND\tACTIVE\tBEFORE\tOPERATOR\tREASON")
	for _, p := range history {
		kind := "promote"
		if p.Rollback {
			kind = "rollback"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Rank, p.At.UTC().Format(time.RFC3339), kind,
			name(p.ConfigurationID), name(p.PreviousConfigurationID), clean(p.Operator), clean(truncateRunes(p.Reason, 80)))
	}
	return tw.Flush()
}

// sharePercent renders basis points as a percentage ("20%", "12.5%").
func sharePercent(bp int) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%02d", bp/100, bp%100), "0"), ".") + "%"
}
