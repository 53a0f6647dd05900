// Package eval measures the evidence engine on public labelled data
// (errata eval): it feeds each claim's evidence through the engine, with
// the dataset's gold stance labels (the gold-evidence lane: no LLM, the
// policy, gates and publish rule alone) or a provider's stance (the
// provider lane), and reports how often the claims the publish rule would
// flag inline are really incorrect.
//
// "Flagged" is the engine's Decision.Publish for a claim the validator
// approved; the validator is assumed to approve every claim, so the
// publish rule alone decides. The positive class is the dataset's
// "incorrect" label. Every division by zero is 0, with its counts beside
// it.
//
// Factcheck-Bench's check-worthiness files measure the verdict analysis's
// Gate-1 triage instead (triage.go: LoadTriage, EvaluateTriage): the gold
// lane runs the rule-based baseline verdict.HeuristicTriage, the provider
// lane the extraction prompt, and the report gives precision and recall
// of "check-worthy" and per class.
package eval

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/internal/retry"
)

// Lanes.
const (
	LaneGold     = "gold"
	LaneProvider = "provider"
)

// Options of a run.
type Options struct {
	Lane   string
	Policy evidence.Policy
	// Stancer judges passages in the provider lane.
	Stancer evidence.Stancer
	// Parallel is how many claims are judged at once in the provider lane
	// (0: 4).
	Parallel int
	// Attempts per claim when the stancer fails (0: 2, since the stance
	// provider retries transient failures itself); the waits between them
	// grow from Backoff (0: 2s) to 30s, or follow the provider's
	// Retry-After, 30s at most.
	Attempts int
	Backoff  time.Duration
	// Progress, when set, is called after each claim with the number done,
	// by one goroutine at a time.
	Progress func(done, total int)
}

// outcome is the engine's judgement of one claim.
type outcome struct {
	label   string
	verdict string
	publish bool
	failed  []string
	// judged is false when the provider could not judge the claim.
	judged bool
	// notes counts passages the stancer answered neutral with a note.
	notes int
}

// Evaluate runs the engine over every claim of set.
func Evaluate(ctx context.Context, set *Set, opts Options) (*Report, error) {
	if err := opts.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	pol := opts.Policy
	outcomes := make([]outcome, len(set.Items))
	var done int
	var mu sync.Mutex
	tick := func() { // Progress is called by one goroutine at a time
		mu.Lock()
		defer mu.Unlock()
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(set.Items))
		}
	}
	switch opts.Lane {
	case LaneGold:
		for i, it := range set.Items {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			stances := make([]evidence.Stance, len(it.Evidence))
			for j, g := range it.Evidence {
				stances[j] = g.Stance
			}
			outcomes[i] = judge(&pol, it, stances)
			tick()
		}
	case LaneProvider:
		if opts.Stancer == nil {
			return nil, errors.New("provider lane: no stancer")
		}
		if err := runProvider(ctx, set, &pol, opts, outcomes, tick); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("lane %q is unknown (known: %s, %s)", opts.Lane, LaneGold, LaneProvider)
	}
	return summarize(set, &pol, opts.Lane, outcomes), nil
}

// judge assesses one claim whose passages have the given stances.
func judge(pol *evidence.Policy, it Item, stances []evidence.Stance) outcome {
	ps := make([]evidence.Passage, len(it.Evidence))
	for j, g := range it.Evidence {
		ps[j] = evidence.Passage{URL: g.URL, Domain: g.Domain, Tier: g.Tier, Rule: g.Rule, Origin: evidence.OriginGold,
			Stance: stances[j], Recency: pol.UnknownRecency()}
	}
	a := pol.Assess(true, ps)
	return outcome{label: it.Label, verdict: a.Verdict, publish: a.Decision.Publish, failed: a.Decision.Failed, judged: true}
}

// runProvider judges claims Parallel at a time. A claim the stancer still
// cannot judge after every attempt is counted (stance_errors) and left out
// of the metrics; an error the provider calls permanent (a refused key, an
// unknown model) ends the run, as does every claim failing.
func runProvider(ctx context.Context, set *Set, pol *evidence.Policy, opts Options, outcomes []outcome, tick func()) error {
	parallel := opts.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	attempts := opts.Attempts
	if attempts <= 0 {
		attempts = 2
	}
	backoff := opts.Backoff
	if backoff <= 0 {
		backoff = 2 * time.Second
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lastErr error
	for range parallel {
		wg.Go(func() {
			for i := range work {
				o, err := stanceClaim(ctx, pol, set.Items[i], opts.Stancer, attempts, backoff)
				if err != nil {
					mu.Lock()
					lastErr = err
					mu.Unlock()
					var le *llm.Error
					if errors.As(err, &le) && !le.Retryable() {
						cancel(fmt.Errorf("provider lane: claim %s: %w", set.Items[i].ID, err))
					}
				}
				outcomes[i] = o
				tick()
			}
		})
	}
feed:
	for i := range set.Items {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	judged := 0
	for _, o := range outcomes {
		if o.judged {
			judged++
		}
	}
	if judged == 0 && len(outcomes) > 0 {
		return fmt.Errorf("provider lane: no claim could be judged: %w", lastErr)
	}
	return nil
}

// stanceClaim asks the stancer about one claim's passages, with retries.
func stanceClaim(ctx context.Context, pol *evidence.Policy, it Item, st evidence.Stancer, attempts int, backoff time.Duration) (outcome, error) {
	texts := make([]string, len(it.Evidence))
	for j, g := range it.Evidence {
		texts[j] = g.Text
	}
	var err error
	for n := 1; ; n++ {
		var res []evidence.StanceResult
		res, err = st.Stance(ctx, it.Text, texts)
		if err == nil && len(res) != len(texts) {
			err = fmt.Errorf("stancer answered %d results for %d passages", len(res), len(texts))
		}
		if err == nil {
			stances := make([]evidence.Stance, len(res))
			notes := 0
			for j, r := range res {
				stances[j] = r.Stance
				if r.Note != "" || r.Stance.Validate() != nil { // Assess counts an invalid stance neutral
					notes++
				}
			}
			o := judge(pol, it, stances)
			o.notes = notes
			return o, nil
		}
		var le *llm.Error
		if n >= attempts || ctx.Err() != nil || (errors.As(err, &le) && !le.Retryable()) {
			return outcome{label: it.Label}, err
		}
		if retry.Sleep(ctx, pause(backoff, n, le)) != nil {
			return outcome{label: it.Label}, err
		}
	}
}

// maxPause caps the waits between attempts, a provider's Retry-After
// included.
const maxPause = 30 * time.Second

// pause is the wait after the n-th failed attempt: backoff doubling to
// maxPause, jittered by ±10%, or the provider's longer Retry-After (le may
// be nil), at most maxPause.
func pause(backoff time.Duration, n int, le *llm.Error) time.Duration {
	var asked time.Duration
	if le != nil {
		asked = le.RetryAfter
	}
	return retry.Exponential{Base: backoff, Max: maxPause, Jitter: 0.1}.Wait(n, asked)
}

// ratio is n/d, and 0 when d is 0 (the counts are reported beside it).
func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// verdicts in table order.
var verdicts = []string{evidence.VerdictSupported, evidence.VerdictRefuted, evidence.VerdictContested, evidence.VerdictNotEnough}

// publishRules are the rules that can withhold a claim the engine found
// Refuted, in the order the publish rule checks them.
var publishRules = []string{evidence.ReasonNoAuthority, evidence.ReasonReliableSupport, evidence.ReasonGateBelowMinimum}

func summarize(set *Set, pol *evidence.Policy, lane string, outcomes []outcome) *Report {
	r := &Report{
		Dataset:         set.Dataset,
		Lane:            lane,
		File:            set.File,
		EvidenceFile:    set.EvidenceFile,
		Lines:           set.Lines,
		Labels:          set.Labels,
		PositiveLabel:   set.Positive,
		PolicyName:      pol.Name(),
		PolicyVersion:   pol.Version(),
		AssumedTier:     set.AssumedTier,
		Confusion:       map[string]map[string]int{},
		FlaggedByLabel:  map[string]int{},
		NotCoveredBy:    map[string]int{},
		Disputed:        Disputed{Label: set.Disputed, Verdicts: map[string]int{}},
		WithheldByRules: map[string]int{},
	}
	for _, l := range set.Labels {
		r.Confusion[l] = map[string]int{}
		for _, v := range verdicts {
			r.Confusion[l][v] = 0
		}
		r.FlaggedByLabel[l] = 0
		if n := set.NotCovered[l]; n > 0 {
			r.NotCoveredBy[l] = n
			r.NotCovered += n
		}
	}
	if set.Disputed != "" {
		for _, v := range verdicts {
			r.Disputed.Verdicts[v] = 0
		}
	}
	r.Records = len(set.Items) + r.NotCovered
	var zero float64
	r.CostUSD = &zero // the gold lane calls nothing; the provider lane's caller prices its tokens
	c := &r.Counts
	alone := map[string]int{}
	others := map[string]int{}
	definite := 0
	r.FalsePositives = []string{}
	for i, o := range outcomes {
		if !o.judged {
			r.StanceErrors++
			continue
		}
		r.Evaluated++
		r.StanceNotes += o.notes
		r.Confusion[o.label][o.verdict]++
		if o.verdict == evidence.VerdictSupported || o.verdict == evidence.VerdictRefuted {
			definite++
		}
		positive := o.label == set.Positive
		if o.publish {
			r.FlaggedByLabel[o.label]++
			c.Flagged++
		}
		switch {
		case positive && o.publish:
			c.TP++
		case positive:
			c.FN++
		case o.publish:
			c.FP++
			r.FalsePositives = append(r.FalsePositives, set.Items[i].ID)
		default:
			c.TN++
		}
		if positive && o.verdict == evidence.VerdictRefuted {
			c.RefutedPositives++
			if !o.publish {
				r.WithheldByRules[strings.Join(o.failed, "+")]++
				for _, rule := range o.failed {
					if len(o.failed) == 1 {
						alone[rule]++
					} else {
						others[rule]++
					}
				}
			}
		}
		if o.label == set.Disputed && set.Disputed != "" {
			r.Disputed.Claims++
			r.Disputed.Verdicts[o.verdict]++
			if o.publish {
				r.Disputed.Flagged++
			}
		}
	}
	c.Positives = c.TP + c.FN
	c.Negatives = c.FP + c.TN
	c.Definite = definite
	r.Precision = ratio(c.TP, c.TP+c.FP)
	r.Recall = ratio(c.TP, c.Positives)
	r.F1 = ratio(2*c.TP, 2*c.TP+c.FP+c.FN) // = 2PR/(P+R), exact in counts
	r.FalsePositiveRate = ratio(c.FP, c.Negatives)
	r.Coverage = ratio(definite, r.Evaluated)
	r.RecallCeiling = ratio(c.RefutedPositives, c.Positives)
	rules := slices.Clone(publishRules)
	for rule := range others {
		if !slices.Contains(rules, rule) {
			rules = append(rules, rule)
		}
	}
	for rule := range alone {
		if !slices.Contains(rules, rule) {
			rules = append(rules, rule)
		}
	}
	slices.Sort(rules[len(publishRules):])
	for _, rule := range rules {
		r.RuleCosts = append(r.RuleCosts, RuleCost{Rule: rule, Alone: alone[rule], WithOthers: others[rule],
			RecallIfDropped: ratio(c.TP+alone[rule], c.Positives)})
	}
	r.Assumptions = assumptions(set, pol, lane)
	return r
}

func assumptions(set *Set, pol *evidence.Policy, lane string) []string {
	var out []string
	switch lane {
	case LaneGold:
		out = append(out, "gold-evidence lane: no LLM is called; each passage's gold label is its stance, so this measures the policy, "+
			"Gate 4 and the publish rule alone")
		if set.Dataset == ClimateFever {
			out = append(out, "gold labels as stance: SUPPORTS → entail 1, REFUTES → contradict 1, NOT_ENOUGH_INFO → neutral 1")
		} else {
			out = append(out, "gold labels as stance: completely-support → entail 1; partially-support → entail 0.6, neutral 0.4 "+
				"(agrees and blocks a flag, but below the 0.7 that Supported and Contested need: part of a claim backed is not "+
				"the claim established); refute → contradict 1; irrelevant → neutral 1")
		}
	case LaneProvider:
		out = append(out, "provider lane: each passage's stance comes from the configured provider; gold stance labels are unused "+
			"(except to derive fcb-stance's claim labels)")
		if set.Dataset == ClimateFever {
			out = append(out, "a CLIMATE-FEVER passage is sent to the provider as \"<article title>: <sentence>\", the title giving the sentence its subject")
		}
	}
	out = append(out, set.Assumptions...)
	if set.NULPassages > 0 {
		out = append(out, fmt.Sprintf("%d passages contained NUL (U+0000), a scraping artifact: removed", set.NULPassages))
	}
	out = append(out,
		"the validator is assumed to approve every claim: the engine's publish rule alone decides what is flagged inline",
		fmt.Sprintf("passages have no publication date: recency is the policy's unknown-recency weight (%g)", pol.UnknownRecency()),
		"flagged = the engine's publish decision; coverage = share of evaluated claims whose verdict is SUPPORTED or REFUTED",
		"rule costs: gold-incorrect claims the engine found REFUTED but withheld, by the rule that withheld them alone or among others; "+
			"recall if dropped = recall had that rule alone been dropped",
	)
	return out
}
