package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/eval"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/projections/replay"
)

// exitError ends errata with its code instead of 1 (main reads it).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }

// usageError is a command line errata eval cannot run: exit code 2.
func usageError(format string, args ...any) error {
	return exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func evalCmd() *cobra.Command {
	var (
		dataset, lane, file, evidenceFile, out, policyName, model, compare string
		limit, assumeTier, parallel, resamples                             int
		seed                                                               uint64
		asJSON                                                             bool
		priceIn, priceOut                                                  float64
	)
	c := &cobra.Command{
		Use:   "eval --dataset D --lane gold|provider --file PATH",
		Short: "Measure the evidence engine on public labelled data: precision, recall, false-positive rate, coverage of inline flags",
		Long: `Runs the evidence engine over a labelled dataset (../shared/datasets/README.md) and reports how
often the claims it would flag inline are incorrect: precision, recall and F1 for "incorrect", the
false-positive rate (claims that are not false but would be flagged), coverage (claims given
SUPPORTED or REFUTED), how disputed claims fare, the confusion matrix, what each publish rule costs
in recall, and tokens and cost.

Lanes:
  gold      no LLM: each passage's gold stance label is its stance, so this measures the policy,
            Gate 4 and the publish rule alone
  provider  each passage's stance comes from the configured OpenAI-compatible provider
            (OPENAI_BASE_URL, OPENAI_API_KEY, ERRATA_LLM_PROVIDER; model ERRATA_STANCE_MODEL, else
            ERRATA_VALIDATOR_MODEL, or --model); tokens are priced with ERRATA_LLM_PRICES or
            --price-in/--price-out; a progress bar on stderr follows the run

Datasets: climate-fever, fcb-stance, fcb-factuality (evidence from the stance file, --evidence),
and fcb-checkworthiness, which measures the verdict analysis's claim triage (FactHarbor's Gate 1)
instead: precision and recall of "check-worthy" and per class (factual, opinion, not a claim) on
Factcheck-Bench's subtask 1 or 2 file. Its gold lane measures the rule-based baseline
verdict.HeuristicTriage (no LLM); its provider lane sends each text through the extraction and
triage prompt (model --model, else ERRATA_ANALYST_MODEL, else ERRATA_INVESTIGATOR_MODEL).
Every assumption the run makes (source tiers, label mappings, the validator approving every
claim) is printed with the table and kept in the JSON.

--compare A,B runs two configurations on the same claims in one run: each is a configuration
name, resolved in the serving projection (its policy version and validator model, else its
model; "default" is this worker's settings), or an inline spec policy=P,model=M[,name=N] for
offline use (arms separated by ';', or by a repeated key). It prints each arm's false-positive
rate, precision, recall, F1 and coverage and B − A with a 95% interval from a paired bootstrap
(--resamples draws of the same claims for both arms, seeded by --seed: reproducible).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataset == "" || file == "" {
				return usageError("--dataset and --file are required")
			}
			if lane != eval.LaneGold && lane != eval.LaneProvider {
				return usageError("--lane %q is unknown (gold or provider)", lane)
			}
			if compare != "" {
				if dataset == eval.FCBCheckworthiness {
					return usageError("--compare measures the evidence engine; fcb-checkworthiness measures triage")
				}
				for _, name := range []string{"policy", "model", "price-in", "price-out"} {
					if cmd.Flags().Changed(name) {
						return usageError("--%s is part of each arm with --compare (policy=...,model=...)", name)
					}
				}
			} else if cmd.Flags().Changed("resamples") || cmd.Flags().Changed("seed") {
				return usageError("--resamples and --seed go with --compare")
			}
			if dataset == eval.FCBCheckworthiness {
				return runTriageEval(cmd, triageEvalArgs{lane: lane, file: file, out: out, model: model, limit: limit,
					parallel: parallel, asJSON: asJSON, priceIn: priceIn, priceOut: priceOut})
			}
			if dataset == eval.ClimateFever && cmd.Flags().Changed("assume-tier") {
				return usageError("--assume-tier is for Factcheck-Bench: each CLIMATE-FEVER article is a tier-2 source (issue 14)")
			}
			if cmd.Flags().Changed("evidence") && dataset != eval.FCBFactuality {
				return usageError("--evidence is for fcb-factuality")
			}
			if cmd.Flags().Changed("price-in") != cmd.Flags().Changed("price-out") {
				return usageError("--price-in and --price-out go together")
			}
			if priceIn < 0 || priceOut < 0 {
				return usageError("prices must not be negative")
			}
			policy := evidence.DefaultPolicy()
			if policyName != "" {
				var err error
				if policy, err = evidence.PolicyByName(policyName); err != nil {
					return usageError("--policy: %w", err)
				}
			}
			set, err := eval.Load(dataset, file, eval.LoadOptions{Limit: limit, AssumedTier: assumeTier, EvidenceFile: evidenceFile})
			if err != nil {
				return err
			}
			if compare != "" {
				return runCompareEval(cmd, set, compareEvalArgs{compare: compare, lane: lane, out: out, parallel: parallel,
					resamples: resamples, seed: seed, asJSON: asJSON})
			}
			opts := eval.Options{Lane: lane, Policy: policy, Parallel: parallel}
			var meter *eval.Meter
			var stanceJudge *stance.Provider
			var cfg config.Config
			finish := func() {}
			if lane == eval.LaneProvider {
				if cfg, err = loadConfig(); err != nil {
					return err
				}
				if model == "" {
					model = cfg.StanceModel
				}
				if model == "" {
					model = cfg.ValidatorModel
				}
				if meter, err = evalMeter(cfg); err != nil {
					return err
				}
				stanceJudge = stance.New(meter, stance.Config{Model: model, ReasoningEffort: cfg.ReasoningEffort})
				opts.Stancer = stanceJudge.Stancer(llm.Credentials{BaseURL: cfg.OpenAIBaseURL, APIKey: logging.Secret(cfg.OpenAIAPIKey)})
				bar := newProgressBar(cmd.ErrOrStderr(), "eval "+dataset)
				bar.unit = "claims"
				start := time.Now()
				opts.Progress = func(done, total int) { bar.update(claimProgress(start, done, total)) }
				finish = bar.finish
			}
			rep, err := eval.Evaluate(cmd.Context(), set, opts)
			finish()
			if err != nil {
				return err
			}
			if meter != nil {
				rep.Model = model
				rep.PromptVersion = stanceJudge.PromptRef().Version
				rep.Tokens = meter.Tokens()
				rep.CostUSD, rep.Price = evalCost(cmd, cfg, model, priceIn, priceOut, rep.Tokens)
			}
			return writeEvalReport(cmd.OutOrStdout(), rep, asJSON, out)
		},
	}
	f := c.Flags()
	f.StringVar(&dataset, "dataset", "", strings.Join(eval.Datasets, ", "))
	f.StringVar(&lane, "lane", eval.LaneGold, "gold (the datasets' stance labels, no LLM) or provider (stance from the configured provider)")
	f.StringVar(&file, "file", "", "the dataset's JSON lines file (e.g. ../shared/datasets/climate-fever.dev.jsonl)")
	f.StringVar(&evidenceFile, "evidence", "", "fcb-factuality: the stance file its evidence comes from (default: beside --file)")
	f.IntVar(&limit, "limit", 0, "evaluate the first N claims only (0: all)")
	f.BoolVar(&asJSON, "json", false, "print one JSON object instead of the table")
	f.StringVar(&out, "out", "", "also write the JSON object to this file (to compare runs across prompt and policy versions)")
	f.StringVar(&policyName, "policy", "", "evidence policy by name (default: "+evidence.DefaultPolicy().Name()+")")
	f.IntVar(&assumeTier, "assume-tier", eval.DefaultAssumedTier, "Factcheck-Bench: the tier of every passage's source (the passages have no URL)")
	f.StringVar(&model, "model", "", "provider lane: the stance model (default ERRATA_STANCE_MODEL, else ERRATA_VALIDATOR_MODEL); "+
		"fcb-checkworthiness: the extraction model (default ERRATA_ANALYST_MODEL, else ERRATA_INVESTIGATOR_MODEL)")
	f.IntVar(&parallel, "parallel", 4, "provider lane: claims judged at once")
	f.Float64Var(&priceIn, "price-in", 0, "provider lane: US dollars per million input tokens (with --price-out; default ERRATA_LLM_PRICES)")
	f.Float64Var(&priceOut, "price-out", 0, "provider lane: US dollars per million output tokens")
	f.StringVar(&compare, "compare", "", "A,B: compare two configurations on the same claims, each a configuration name (from the serving "+
		"projection) or an inline spec policy=P,model=M[,name=N] (arms separated by ';' or by a repeated key); prints each one's "+
		"figures and B − A with 95% paired bootstrap intervals")
	f.IntVar(&resamples, "resamples", eval.DefaultResamples, "--compare: bootstrap resamples")
	f.Uint64Var(&seed, "seed", eval.DefaultSeed, "--compare: the bootstrap's seed (the same seed prints the same intervals)")
	return c
}

// claimProgress is the progress bar's view of a run.
func claimProgress(start time.Time, done, total int) replay.Progress {
	p := replay.Progress{Done: int64(done), Total: int64(total), Elapsed: time.Since(start)}
	if s := p.Elapsed.Seconds(); s > 0 {
		p.Rate = float64(done) / s
	}
	if p.Rate > 0 && total > done {
		p.ETA = time.Duration(float64(total-done) / p.Rate * float64(time.Second))
	}
	return p
}

// evalMeter is the configured provider, metered.
func evalMeter(cfg config.Config) (*eval.Meter, error) {
	if cfg.OpenAIAPIKey == "" && cfg.LLMProvider != llm.ProviderChatCompletions {
		return nil, usageError("the provider lane needs OPENAI_API_KEY (or ERRATA_LLM_PROVIDER=chat-completions for a local server)")
	}
	var p llm.Provider = llm.OpenAIResponses{}
	if cfg.LLMProvider == llm.ProviderChatCompletions {
		p = llm.ChatCompletions{}
	}
	return eval.NewMeter(p), nil
}

// evalCost prices a provider lane's tokens with --price-in/--price-out,
// else ERRATA_LLM_PRICES; nil when the model has no price.
func evalCost(cmd *cobra.Command, cfg config.Config, model string, priceIn, priceOut float64, tokens eval.Tokens) (*float64, *eval.Price) {
	price, ok := eval.Price{}, false
	if cmd.Flags().Changed("price-in") {
		price, ok = eval.Price{Model: model, Input: priceIn, CachedInput: priceIn, Output: priceOut, Source: "--price-in/--price-out"}, true
	} else if p, found := cfg.LLMPrices.Lookup(model); found {
		price, ok = eval.Price{Model: model, Input: p.Input, CachedInput: p.CachedInput, Output: p.Output, Source: "ERRATA_LLM_PRICES"}, true
	}
	if !ok {
		return nil, nil
	}
	cost := eval.Cost(tokens, price)
	return &cost, &price
}

// writeEvalReport prints a report (*eval.Report or *eval.TriageReport) as
// its table or as JSON, and writes the JSON to out when given.
func writeEvalReport(w io.Writer, rep interface{ WriteText(io.Writer) error }, asJSON bool, out string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if out != "" {
		if err := os.WriteFile(out, b, 0o644); err != nil { //nolint:gosec // G306: a report the operator asked for (--out), to be read by others; nothing secret
			return err
		}
	}
	if asJSON {
		_, err := w.Write(b)
		return err
	}
	if err := rep.WriteText(w); err != nil {
		return err
	}
	if out != "" {
		_, err = fmt.Fprintf(w, "written  %s\n", out)
	}
	return err
}

// exitCode is the process exit code for an error of run: its own when it
// carries one, else 1.
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return 1
}
