package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/consumers/evidence/eval"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/logging"
)

// triageEvalArgs are the errata eval flags fcb-checkworthiness reads.
type triageEvalArgs struct {
	lane, file, out, model string
	limit, parallel        int
	asJSON                 bool
	priceIn, priceOut      float64
}

// runTriageEval measures Gate-1 triage on a Factcheck-Bench
// check-worthiness file: the rule-based baseline (gold lane) or the
// extraction prompt through the configured provider (provider lane).
func runTriageEval(cmd *cobra.Command, a triageEvalArgs) error {
	for _, flag := range []string{"policy", "assume-tier", "evidence"} {
		if cmd.Flags().Changed(flag) {
			return usageError("--%s is not for fcb-checkworthiness, which measures triage, not the evidence engine", flag)
		}
	}
	if cmd.Flags().Changed("price-in") != cmd.Flags().Changed("price-out") {
		return usageError("--price-in and --price-out go together")
	}
	if a.priceIn < 0 || a.priceOut < 0 {
		return usageError("prices must not be negative")
	}
	set, err := eval.LoadTriage(a.file, a.limit)
	if err != nil {
		return err
	}
	opts := eval.TriageOptions{Lane: a.lane, Rubric: verdict.DefaultRubric(), Parallel: a.parallel, Triager: eval.HeuristicTriager{}}
	var meter *eval.Meter
	var cfg config.Config
	finish := func() {}
	if a.lane == eval.LaneProvider {
		if cfg, err = loadConfig(); err != nil {
			return err
		}
		if a.model == "" {
			a.model = cfg.AnalystModel
		}
		if a.model == "" {
			a.model = cfg.InvestigatorModel
		}
		if meter, err = evalMeter(cfg); err != nil {
			return err
		}
		opts.Triager = eval.ProviderTriager{LLM: meter, Model: a.model, ReasoningEffort: cfg.ReasoningEffort,
			Cred: llm.Credentials{BaseURL: cfg.OpenAIBaseURL, APIKey: logging.Secret(cfg.OpenAIAPIKey)}}
		bar := newProgressBar(cmd.ErrOrStderr(), "eval "+eval.FCBCheckworthiness)
		bar.unit = "texts"
		start := time.Now()
		opts.Progress = func(done, total int) { bar.update(claimProgress(start, done, total)) }
		finish = bar.finish
	}
	rep, err := eval.EvaluateTriage(cmd.Context(), set, opts)
	finish()
	if err != nil {
		return err
	}
	if meter != nil {
		p, err := prompts.Default().Get(prompts.NameVerdictExtract)
		if err != nil {
			return err
		}
		rep.Model, rep.PromptVersion = a.model, p.ID()
		rep.Tokens = meter.Tokens()
		rep.CostUSD, rep.Price = evalCost(cmd, cfg, a.model, a.priceIn, a.priceOut, rep.Tokens)
	}
	return writeEvalReport(cmd.OutOrStdout(), rep, a.asJSON, a.out)
}
