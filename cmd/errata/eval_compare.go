package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/eval"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/serving"
)

// compareArmSpec is one side of --compare: a configuration name to look
// up in the serving projection, or an inline spec (policy=...,model=...).
type compareArmSpec struct {
	configuration string
	inline        map[string]string
}

// inlineKeys are the keys of an inline arm: the evidence policy (a name
// or a version name@12hex), the stance model, and the arm's label.
var inlineKeys = []string{"name", "policy", "model"}

// parseCompareArms reads --compare: two arms separated by ';', or by ','
// where that is unambiguous: a word without '=' is a configuration name
// and an arm of its own; key=value pairs build an inline arm, and a key
// the current inline arm already has starts the next one.
func parseCompareArms(s string) ([]compareArmSpec, error) {
	var parts []string
	if strings.Contains(s, ";") {
		for _, arm := range strings.Split(s, ";") {
			parts = append(parts, strings.Split(arm, ",")...)
			parts = append(parts, ";")
		}
	} else {
		parts = strings.Split(s, ",")
	}
	var arms []compareArmSpec
	var cur *compareArmSpec
	for _, p := range parts {
		p = strings.TrimSpace(p)
		switch {
		case p == ";":
			cur = nil
		case p == "":
			return nil, fmt.Errorf("--compare %q: an empty arm", s)
		case !strings.Contains(p, "="):
			if !configurationNameRe(p) {
				return nil, fmt.Errorf("--compare: %q is not a configuration name", p)
			}
			arms = append(arms, compareArmSpec{configuration: p})
			cur = nil
		default:
			k, v, _ := strings.Cut(p, "=")
			if !containsString(inlineKeys, k) {
				return nil, fmt.Errorf("--compare: key %q is unknown (known: %s)", k, strings.Join(inlineKeys, ", "))
			}
			if v == "" {
				return nil, fmt.Errorf("--compare: %s has no value", k)
			}
			if cur == nil || cur.inline[k] != "" {
				arms = append(arms, compareArmSpec{inline: map[string]string{}})
				cur = &arms[len(arms)-1]
			}
			cur.inline[k] = v
		}
	}
	if len(arms) != 2 {
		return nil, fmt.Errorf("--compare needs exactly two arms A,B (got %d)", len(arms))
	}
	return arms, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// configurationNameRe accepts what events.AnalysisConfigurationV1 names
// may be, and "default".
func configurationNameRe(name string) bool {
	if name == events.DefaultConfigurationName {
		return true
	}
	return events.AnalysisConfigurationV1{Name: name, Model: "m", InvestigatorPrompt: "v1", ValidatorPrompt: "v1",
		Policy: "p@000000000000"}.Validate() == nil
}

// configurationLookup is the serving projection's side of --compare.
type configurationLookup interface {
	ConfigurationByName(ctx context.Context, name string) (serving.Configuration, error)
}

// policyOf finds a policy of this build by name or by version.
func policyOf(ref string) (evidence.Policy, error) {
	for _, p := range evidence.Policies() {
		if p.Name() == ref || p.Version() == ref {
			return p, nil
		}
	}
	_, err := evidence.PolicyByName(ref)
	return evidence.Policy{}, fmt.Errorf("policy %q is not in this build: %w", ref, err)
}

// resolvedArm is an arm before its stancer: label, policy, stance model.
type resolvedArm struct {
	name   string
	policy evidence.Policy
	model  string
}

// resolveArm turns a spec into an arm: a configuration's policy and stance
// model (its validator model, else its model; the default configuration's
// are the worker's settings), or the inline keys over those defaults.
func resolveArm(ctx context.Context, spec compareArmSpec, lookup func() (configurationLookup, error), cfg config.Config) (resolvedArm, error) {
	defaults := func() (resolvedArm, error) {
		pol := evidence.DefaultPolicy()
		if cfg.EvidencePolicy != "" {
			p, err := policyOf(cfg.EvidencePolicy)
			if err != nil {
				return resolvedArm{}, err
			}
			pol = p
		}
		model := cfg.StanceModel
		if model == "" {
			model = cfg.ValidatorModel
		}
		return resolvedArm{name: events.DefaultConfigurationName, policy: pol, model: model}, nil
	}
	if spec.inline != nil {
		arm, err := defaults()
		if err != nil {
			return arm, err
		}
		arm.name = "inline"
		if v := spec.inline["policy"]; v != "" {
			if arm.policy, err = policyOf(v); err != nil {
				return arm, err
			}
			arm.name = v
		}
		if v := spec.inline["model"]; v != "" {
			arm.model = v
			arm.name += "/" + v
		}
		if v := spec.inline["name"]; v != "" {
			arm.name = v
		}
		return arm, nil
	}
	l, err := lookup()
	if err != nil {
		return resolvedArm{}, fmt.Errorf("configuration %s: the serving projection is not reachable (use an inline spec policy=...,model=... offline): %w",
			spec.configuration, err)
	}
	c, err := l.ConfigurationByName(ctx, spec.configuration)
	if errors.Is(err, serving.ErrNotFound) {
		return resolvedArm{}, fmt.Errorf("configuration %q is not declared", spec.configuration)
	}
	if err != nil {
		return resolvedArm{}, fmt.Errorf("configuration %s: %w", spec.configuration, err)
	}
	if c.Spec == nil {
		return defaults()
	}
	pol, err := policyOf(c.Spec.Policy)
	if err != nil {
		return resolvedArm{}, fmt.Errorf("configuration %s: %w", c.Name, err)
	}
	model := c.Spec.ValidatorModel
	if model == "" {
		model = c.Spec.Model
	}
	return resolvedArm{name: c.Name, policy: pol, model: model}, nil
}

type compareEvalArgs struct {
	compare, lane, out  string
	parallel, resamples int
	seed                uint64
	asJSON              bool
}

// runCompareEval is errata eval --compare A,B on a loaded dataset.
func runCompareEval(cmd *cobra.Command, set *eval.Set, a compareEvalArgs) error {
	specs, err := parseCompareArms(a.compare)
	if err != nil {
		return usageError("%w", err)
	}
	if a.resamples < 1 || a.resamples > 100_000 {
		return usageError("--resamples must be 1 to 100000")
	}
	ctx := cmd.Context()
	cfg, err := loadConfig()
	if err != nil {
		return err
	}
	var closeLookup func()
	defer func() {
		if closeLookup != nil {
			closeLookup()
		}
	}()
	var lookup configurationLookup
	open := func() (configurationLookup, error) {
		if lookup != nil {
			return lookup, nil
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		pool, err := postgres.Connect(cctx, cfg.DatabaseURL, cfg.ServingSchema)
		if err != nil {
			return nil, err
		}
		closeLookup = pool.Close
		lookup = serving.NewReader(pool)
		return lookup, nil
	}
	var arms [2]eval.Arm
	for i, spec := range specs {
		r, err := resolveArm(ctx, spec, open, cfg)
		if err != nil {
			return usageError("%w", err)
		}
		arms[i] = eval.Arm{Name: r.name, Policy: r.policy}
		if a.lane == eval.LaneProvider {
			arms[i].Model = r.model
			meter, err := evalMeter(cfg)
			if err != nil {
				return err
			}
			judge := stance.New(meter, stance.Config{Model: r.model, ReasoningEffort: cfg.ReasoningEffort})
			arms[i].Stancer = judge.Stancer(llm.Credentials{BaseURL: cfg.OpenAIBaseURL, APIKey: logging.Secret(cfg.OpenAIAPIKey)})
		}
	}
	opts := eval.CompareOptions{Lane: a.lane, Resamples: a.resamples, Seed: a.seed, Parallel: a.parallel}
	finish := func() {}
	if a.lane == eval.LaneProvider {
		bar := newProgressBar(cmd.ErrOrStderr(), "eval --compare "+set.Dataset)
		bar.unit = "claims"
		start := time.Now()
		opts.Progress = func(done, total int) { bar.update(claimProgress(start, done, total)) }
		finish = bar.finish
	}
	c, err := eval.Compare(ctx, set, arms[0], arms[1], opts)
	finish()
	if err != nil {
		return err
	}
	return writeEvalReport(cmd.OutOrStdout(), c, a.asJSON, a.out)
}
