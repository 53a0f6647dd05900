package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/projections/audit"
)

// usageSampleSize is how many of the latest completed investigations the
// dry run's cost estimate averages.
const usageSampleSize = 200

type reinvestigateFlags struct {
	configuration     string
	platforms         []string
	since, until      string
	promptVersions    []string
	policyVersions    []string
	authors           []string
	idsFile           string
	budget            int
	dryRun            bool
	priceIn, priceOut float64
	wait              time.Duration
	pageSize          int
}

func reinvestigateCmd() *cobra.Command {
	var f reinvestigateFlags
	c := &cobra.Command{
		Use: "reinvestigate --configuration NAME (--platform P | --since/--until | --prompt-version V | --policy-version V | --author ID | --ids FILE) [--budget N] [--dry-run]",
		Short: "Request new investigations of a set of post versions under a declared configuration, within a daily budget; " +
			"each supersedes the version's visible investigation, which is never changed",
		Long: "Selects the versions whose visible investigation has ended and matches every filter given, leaves out those\n" +
			"already investigated under the configuration, and appends one investigation.requested (source REPROCESS) per\n" +
			"version, at most the day's remaining budget. The budget counts the REPROCESS investigations under the\n" +
			"configuration that the serving projection has with a request time in the current UTC day, so two runs on\n" +
			"one day share it (runs take turns under a lock). Investigation ids derive from (version, configuration): a\n" +
			"repeated run requests nothing twice. Readers see the new results only once the configuration is promoted.\n" +
			"--dry-run prints the count and the estimated cost (the mean tokens per stage of the latest completed\n" +
			"investigations in the audit projection, priced with --price-in/--price-out or ERRATA_LLM_PRICES) and appends nothing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runReinvestigate(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.configuration, "configuration", "", "the declared configuration to investigate under (required)")
	fl.StringSliceVar(&f.platforms, "platform", nil, "platforms (repeat or comma-separate): LESSWRONG, X, SUBSTACK, WIKIPEDIA, BLUESKY, THREADS")
	fl.StringVar(&f.since, "since", "", "visible investigation requested at or after (RFC 3339 or YYYY-MM-DD, UTC)")
	fl.StringVar(&f.until, "until", "", "visible investigation requested before (RFC 3339 or YYYY-MM-DD, UTC)")
	fl.StringSliceVar(&f.promptVersions, "prompt-version", nil, "the visible investigation's investigator prompt version (v1, ...)")
	fl.StringSliceVar(&f.policyVersions, "policy-version", nil, "an evidence policy version (name@hash) of its claims' assessments")
	fl.StringSliceVar(&f.authors, "author", nil, "author ids")
	fl.StringVar(&f.idsFile, "ids", "", "a file of post version ids, one per line (# starts a comment)")
	fl.IntVar(&f.budget, "budget", 0, "investigations per UTC day under this configuration (default ERRATA_REPROCESS_DAILY_BUDGET)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the count and the estimated cost; append nothing")
	fl.Float64Var(&f.priceIn, "price-in", 0, "US dollars per million input tokens, every model (with --price-out; default ERRATA_LLM_PRICES)")
	fl.Float64Var(&f.priceOut, "price-out", 0, "US dollars per million output tokens, every model (with --price-in)")
	fl.DurationVar(&f.wait, "wait", 30*time.Second, "wait at most this long, after each page, for the serving projection to show the requests")
	fl.IntVar(&f.pageSize, "page-size", 200, "versions read and requested at a time (1..1000)")
	return c
}

func runReinvestigate(cmd *cobra.Command, f reinvestigateFlags) error {
	filter, err := f.filter()
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("price-in") != cmd.Flags().Changed("price-out") {
		return usageError("--price-in and --price-out go together")
	}
	if f.priceIn < 0 || f.priceOut < 0 {
		return usageError("prices must not be negative")
	}
	if f.pageSize < 1 || f.pageSize > 1000 {
		return usageError("--page-size must be 1..1000")
	}
	if f.wait <= 0 {
		return usageError("--wait must be positive: the budget of the next run counts what the projection shows")
	}
	ctx := cmd.Context()
	t, err := openControlTools(ctx, cmd.ErrOrStderr(), !f.dryRun)
	if err != nil {
		return err
	}
	defer t.close()
	budget := f.budget
	if !cmd.Flags().Changed("budget") {
		budget = t.env.cfg.ReprocessDailyBudget
	} else if budget < 0 {
		return usageError("--budget must not be negative")
	}
	counter := control.NewServingBudget(t.pool)
	if !f.dryRun {
		unlock, locked, err := counter.Lock(ctx)
		if err != nil {
			return err
		}
		if !locked {
			return errors.New("another `errata reinvestigate` is running; try again when it ends")
		}
		defer unlock()
	}
	w := cmd.OutOrStdout()
	var bar *progressBar
	start := time.Now()
	plan := control.ReprocessPlan{Configuration: f.configuration, Filter: filter, DailyBudget: budget, DryRun: f.dryRun,
		PageSize: f.pageSize, WaitTimeout: f.wait}
	if !f.dryRun {
		bar = newProgressBar(cmd.ErrOrStderr(), "reinvestigate "+f.configuration)
		bar.unit = "requests"
		plan.Progress = func(done, total int) { bar.update(claimProgress(start, done, total)) }
	}
	var appender control.EventAppender
	if t.appender != nil {
		appender = t.appender
	}
	rp := control.NewReprocessor(t.reader, t.reader, counter, appender, t.watermark, nil)
	res, err := rp.Run(ctx, plan)
	if bar != nil && res.Requested > 0 {
		bar.finish()
	}
	if errors.Is(err, control.ErrBudgetSpent) {
		fmt.Fprintf(w, "The budget of %d re-processing requests per UTC day under %q is spent (%d today); nothing requested.\n",
			budget, f.configuration, res.UsedToday)
		return nil
	}
	if err != nil {
		if res.Requested > 0 {
			fmt.Fprintf(w, "Requested %d investigations before the error; run again to continue (nothing is requested twice).\n", res.Requested)
		}
		return err
	}
	if f.dryRun {
		return printDryRun(ctx, w, t, f, res)
	}
	fmt.Fprintf(w, "Requested %d investigations under %q (%s); budget %d per UTC day, %d used before this run.\n",
		res.Requested, f.configuration, res.ConfigurationID, budget, res.UsedToday)
	if res.Requested == res.Remaining {
		fmt.Fprintln(w, "The day's budget is spent; more versions may match: run again tomorrow.")
	}
	fmt.Fprintf(w, "Readers see the new results once it is promoted: errata configurations promote %s --reason ...\n", f.configuration)
	return nil
}

// filter turns the flags into the selection; at least one is required, so
// a bare command never selects everything.
func (f reinvestigateFlags) filter() (control.ReprocessFilter, error) {
	var out control.ReprocessFilter
	if f.configuration == "" {
		return out, usageError("--configuration is required")
	}
	for _, p := range f.platforms {
		p = strings.ToUpper(strings.TrimSpace(p))
		if !events.ValidPlatform(p) {
			return out, usageError("--platform %q is not a platform", truncateRunes(p, 40))
		}
		out.Platforms = append(out.Platforms, p)
	}
	var err error
	if out.Since, err = parseDay(f.since); err != nil {
		return out, usageError("--since: %w", err)
	}
	if out.Until, err = parseDay(f.until); err != nil {
		return out, usageError("--until: %w", err)
	}
	if !out.Since.IsZero() && !out.Until.IsZero() && !out.Since.Before(out.Until) {
		return out, usageError("--since must be before --until")
	}
	out.PromptVersions, out.PolicyVersions = f.promptVersions, f.policyVersions
	if out.AuthorIDs, err = uuids("--author", f.authors); err != nil {
		return out, err
	}
	if f.idsFile != "" {
		ids, err := readIDs(f.idsFile)
		if err != nil {
			return out, err
		}
		if len(ids) == 0 {
			return out, usageError("--ids %s lists no post version ids", f.idsFile)
		}
		out.PostVersionIDs = ids
	}
	if len(out.Platforms)+len(out.PromptVersions)+len(out.PolicyVersions)+len(out.AuthorIDs)+len(out.PostVersionIDs) == 0 &&
		out.Since.IsZero() && out.Until.IsZero() {
		return out, usageError("select the versions: --platform, --since/--until, --prompt-version, --policy-version, --author or --ids")
	}
	return out, nil
}

func parseDay(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 nor YYYY-MM-DD", truncateRunes(s, 80))
	}
	return t, nil
}

// uuids checks and lowercases ids given on the command line.
func uuids(flag string, ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		id = strings.ToLower(strings.TrimSpace(id))
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return nil, usageError("%s %q is not an id", flag, truncateRunes(id, 80))
		}
		out = append(out, id)
	}
	return out, nil
}

// maxIDs bounds --ids: one run's selection, not a database dump.
const maxIDs = 100000

func readIDs(path string) ([]string, error) {
	fh, err := os.Open(path) //nolint:gosec // G304: the operator names the file
	if err != nil {
		return nil, usageError("--ids: %w", err)
	}
	defer fh.Close()
	return parseIDs(fh)
}

// parseIDs reads one id a line; blank lines and # comments are skipped.
func parseIDs(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	var raw []string
	seen := map[string]bool{}
	for line := 1; sc.Scan(); line++ {
		s, _, _ := strings.Cut(sc.Text(), "#")
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		ids, err := uuids(fmt.Sprintf("--ids line %d:", line), []string{s})
		if err != nil {
			return nil, err
		}
		if !seen[ids[0]] {
			seen[ids[0]] = true
			raw = append(raw, ids[0])
		}
		if len(raw) > maxIDs {
			return nil, usageError("--ids lists more than %d ids", maxIDs)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, usageError("--ids: %w", err)
	}
	return raw, nil
}

// printDryRun prints what a run would request and what it would cost.
func printDryRun(ctx context.Context, w io.Writer, t *controlTools, f reinvestigateFlags, res control.ReprocessResult) error {
	would := min(res.Selected, res.Remaining)
	fmt.Fprintf(w, "Dry run: %d post versions match and have no investigation under %q (%s).\n", res.Selected, f.configuration, res.ConfigurationID)
	fmt.Fprintf(w, "Budget: %d per UTC day, %d used today (REPROCESS investigations under it in the serving projection), "+
		"%d remaining: a run now would request %d.\n", res.DailyBudget, res.UsedToday, res.Remaining, would)
	target, err := t.reader.ConfigurationByID(ctx, res.ConfigurationID)
	if err != nil {
		return err
	}
	reader, release, err := t.env.auditReader(ctx)
	if err != nil {
		return err
	}
	defer release()
	sample, err := reader.MeanUsage(ctx, usageSampleSize)
	if err != nil {
		return err
	}
	models := map[string]string{events.StageInvestigator: target.Spec.Model}
	validator := target.Spec.ValidatorModel
	if validator == "" {
		validator = t.env.cfg.ValidatorModel
	}
	perInvestigation, source, ok := estimateCost(sample, models, validator, t.env.cfg.LLMPrices, f)
	switch {
	case sample.Investigations == 0:
		fmt.Fprintln(w, "Estimated cost: unknown (no completed investigation in the audit projection to take token counts from).")
	case !ok:
		fmt.Fprintf(w, "Estimated cost: unknown (%s).\n", source)
	default:
		fmt.Fprintf(w, "Estimated cost: $%.2f for %d investigations ($%.4f each: the mean tokens per stage of the latest %d "+
			"completed investigations in the audit projection, priced with %s).\n",
			perInvestigation*float64(would), would, perInvestigation, sample.Investigations, source)
	}
	fmt.Fprintln(w, "Nothing was appended.")
	return nil
}

// estimateCost prices the mean usage of one investigation: the investigator
// stage at the configuration's model, the others (validator, assessor) at
// its validator model.
func estimateCost(sample audit.UsageSample, models map[string]string, validator string, prices config.LLMPrices,
	f reinvestigateFlags) (float64, string, bool) {
	flags := f.priceIn > 0 || f.priceOut > 0
	total := 0.0
	for _, s := range sample.Stages {
		model, ok := models[s.Stage]
		if !ok {
			model = validator
		}
		p := config.LLMPrice{Input: f.priceIn, CachedInput: f.priceIn, Output: f.priceOut}
		if !flags {
			if p, ok = prices.Lookup(model); !ok {
				return 0, fmt.Sprintf("model %q has no price: set ERRATA_LLM_PRICES or --price-in and --price-out", model), false
			}
		}
		total += ((s.Input-s.CachedInput)*p.Input + s.CachedInput*p.CachedInput + s.Output*p.Output) / 1e6
	}
	if flags {
		return total, "--price-in/--price-out", true
	}
	return total, "ERRATA_LLM_PRICES", true
}
