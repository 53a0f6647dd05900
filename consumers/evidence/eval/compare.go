package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/errata-dev/errata/consumers/evidence"
)

// Arm is one side of a comparison: a configuration's name, the evidence
// policy it publishes with and, in the provider lane, the stancer of its
// model.
type Arm struct {
	Name   string
	Policy evidence.Policy
	// Model names the stance model (provider lane; informational).
	Model   string
	Stancer evidence.Stancer
}

// CompareOptions are a comparison's lane, bootstrap and provider settings.
type CompareOptions struct {
	Lane string
	// Resamples of the paired bootstrap (0: DefaultResamples) drawn from a
	// generator seeded with Seed, so the same run prints the same
	// intervals.
	Resamples int
	Seed      uint64
	// Parallel, Attempts and Backoff are the provider lane's (Options).
	Parallel, Attempts int
	// Progress, when set, is called after each claim of each arm.
	Progress func(done, total int)
}

// DefaultResamples and DefaultSeed are the bootstrap's defaults.
const (
	DefaultResamples = 1000
	DefaultSeed      = 18
)

// Metrics of a comparison, in table order.
var compareMetrics = []string{"false_positive_rate", "precision", "recall", "f1", "coverage"}

// Comparison is the report of errata eval --compare.
type Comparison struct {
	Dataset string `json:"dataset"`
	Lane    string `json:"lane"`
	File    string `json:"file"`
	// Records are the claims read; Paired those both arms judged (the
	// items every figure and resample is computed on).
	Records   int         `json:"records"`
	Paired    int         `json:"paired"`
	Unjudged  int         `json:"unjudged"`
	Resamples int         `json:"resamples"`
	Seed      uint64      `json:"seed"`
	A         ArmSummary  `json:"a"`
	B         ArmSummary  `json:"b"`
	Diffs     []MetricCmp `json:"differences"`
	Note      string      `json:"note"`
}

// ArmSummary is one arm's figures on the paired items.
type ArmSummary struct {
	Name          string             `json:"name"`
	PolicyVersion string             `json:"policy_version"`
	Model         string             `json:"model,omitempty"`
	Counts        Counts             `json:"counts"`
	Metrics       map[string]float64 `json:"metrics"`
}

// MetricCmp is one metric of both arms, B − A and its 95% interval.
type MetricCmp struct {
	Metric string  `json:"metric"`
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Delta  float64 `json:"delta"`
	Low    float64 `json:"ci95_low"`
	High   float64 `json:"ci95_high"`
}

// pairedItem is what the metrics need of one claim in one arm.
type pairedItem struct {
	positive, publish, definite bool
}

// Compare runs arms a and b over the same claims of set and reports each
// arm's false-positive rate, precision, recall, F1 and coverage and B − A
// with a 95% paired bootstrap interval: every resample draws claims with
// replacement and scores both arms on the same draw, so the interval
// reflects the difference, not two independent noises.
func Compare(ctx context.Context, set *Set, a, b Arm, opts CompareOptions) (*Comparison, error) {
	if opts.Resamples < 0 {
		return nil, errors.New("resamples must not be negative")
	}
	if opts.Resamples == 0 {
		opts.Resamples = DefaultResamples
	}
	total := 2 * len(set.Items)
	done := 0
	run := func(arm Arm) ([]outcome, error) {
		if err := arm.Policy.Validate(); err != nil {
			return nil, fmt.Errorf("arm %s: policy: %w", arm.Name, err)
		}
		pol := arm.Policy
		outcomes := make([]outcome, len(set.Items))
		tick := func() {
			done++
			if opts.Progress != nil {
				opts.Progress(done, total)
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
			if arm.Stancer == nil {
				return nil, fmt.Errorf("arm %s: provider lane: no stancer", arm.Name)
			}
			o := Options{Lane: LaneProvider, Policy: pol, Stancer: arm.Stancer, Parallel: opts.Parallel, Attempts: opts.Attempts}
			var mu sync.Mutex
			if err := runProvider(ctx, set, &pol, o, outcomes, func() { mu.Lock(); defer mu.Unlock(); tick() }); err != nil {
				return nil, fmt.Errorf("arm %s: %w", arm.Name, err)
			}
		default:
			return nil, fmt.Errorf("lane %q is unknown (known: %s, %s)", opts.Lane, LaneGold, LaneProvider)
		}
		return outcomes, nil
	}
	oa, err := run(a)
	if err != nil {
		return nil, err
	}
	ob, err := run(b)
	if err != nil {
		return nil, err
	}
	var pa, pb []pairedItem
	unjudged := 0
	for i := range set.Items {
		if !oa[i].judged || !ob[i].judged {
			unjudged++
			continue
		}
		pa = append(pa, toPaired(set, oa[i]))
		pb = append(pb, toPaired(set, ob[i]))
	}
	c := &Comparison{Dataset: set.Dataset, Lane: opts.Lane, File: set.File, Records: len(set.Items), Paired: len(pa),
		Unjudged: unjudged, Resamples: opts.Resamples, Seed: opts.Seed,
		A: summarizeArm(a, pa), B: summarizeArm(b, pb),
		Note: "B − A on the same claims; 95% intervals from a paired bootstrap (percentiles of the resampled differences)"}
	lows, highs := pairedBootstrap(pa, pb, opts.Resamples, opts.Seed)
	for i, m := range compareMetrics {
		c.Diffs = append(c.Diffs, MetricCmp{Metric: m, A: c.A.Metrics[m], B: c.B.Metrics[m],
			Delta: c.B.Metrics[m] - c.A.Metrics[m], Low: lows[i], High: highs[i]})
	}
	return c, nil
}

func toPaired(set *Set, o outcome) pairedItem {
	return pairedItem{positive: o.label == set.Positive, publish: o.publish,
		definite: o.verdict == evidence.VerdictSupported || o.verdict == evidence.VerdictRefuted}
}

func summarizeArm(arm Arm, items []pairedItem) ArmSummary {
	s := ArmSummary{Name: arm.Name, PolicyVersion: arm.Policy.Version(), Model: arm.Model, Metrics: map[string]float64{}}
	c, definite := countItems(items, nil)
	s.Counts = c
	s.Counts.Definite = definite
	for i, v := range metricsOf(c, definite, len(items)) {
		s.Metrics[compareMetrics[i]] = v
	}
	return s
}

// countItems counts items (or items[idx[k]] for each k when idx is set).
func countItems(items []pairedItem, idx []int) (Counts, int) {
	var c Counts
	definite := 0
	n := len(items)
	if idx != nil {
		n = len(idx)
	}
	for k := range n {
		it := items[k]
		if idx != nil {
			it = items[idx[k]]
		}
		if it.definite {
			definite++
		}
		if it.publish {
			c.Flagged++
		}
		switch {
		case it.positive && it.publish:
			c.TP++
		case it.positive:
			c.FN++
		case it.publish:
			c.FP++
		default:
			c.TN++
		}
	}
	c.Positives, c.Negatives = c.TP+c.FN, c.FP+c.TN
	return c, definite
}

// metricsOf are the metrics in compareMetrics order (a division by zero
// is 0, as in Report).
func metricsOf(c Counts, definite, n int) [5]float64 {
	return [5]float64{ratio(c.FP, c.Negatives), ratio(c.TP, c.TP+c.FP), ratio(c.TP, c.Positives),
		ratio(2*c.TP, 2*c.TP+c.FP+c.FN), ratio(definite, n)}
}

// pairedBootstrap returns, per metric (compareMetrics order), the 2.5th
// and 97.5th percentiles of B − A over resamples draws of len(a) item
// indices with replacement, the same indices for both arms. The
// generator is PCG seeded with seed, so the result depends on nothing
// else. No items give zero intervals.
func pairedBootstrap(a, b []pairedItem, resamples int, seed uint64) (low, high [5]float64) {
	n := len(a)
	if n == 0 || resamples <= 0 {
		return low, high
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) //nolint:gosec // G404: a seeded, reproducible resampling, nothing secret
	diffs := make([][]float64, len(compareMetrics))
	for i := range diffs {
		diffs[i] = make([]float64, resamples)
	}
	idx := make([]int, n)
	for r := range resamples {
		for k := range idx {
			idx[k] = rng.IntN(n)
		}
		ca, da := countItems(a, idx)
		cb, db := countItems(b, idx)
		ma, mb := metricsOf(ca, da, n), metricsOf(cb, db, n)
		for i := range diffs {
			diffs[i][r] = mb[i] - ma[i]
		}
	}
	for i, d := range diffs {
		slices.Sort(d)
		low[i], high[i] = percentile(d, 0.025), percentile(d, 0.975)
	}
	return low, high
}

// percentile is the q-quantile (0..1) of sorted values, interpolating
// linearly between the two nearest ranks (NaN for no values).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// WriteText prints the comparison as a table.
func (c *Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "errata eval --compare: %s, %s\n", c.Dataset, laneNames[c.Lane])
	fmt.Fprintf(&b, "file      %s\n", c.File)
	for _, arm := range []struct {
		label string
		s     ArmSummary
	}{{"A", c.A}, {"B", c.B}} {
		fmt.Fprintf(&b, "%s         %s: policy %s", arm.label, arm.s.Name, arm.s.PolicyVersion)
		if arm.s.Model != "" {
			fmt.Fprintf(&b, ", model %s", arm.s.Model)
		}
		fmt.Fprintf(&b, " (flagged %d: TP %d, FP %d)\n", arm.s.Counts.Flagged, arm.s.Counts.TP, arm.s.Counts.FP)
	}
	fmt.Fprintf(&b, "claims    %d read, %d judged by both arms", c.Records, c.Paired)
	if c.Unjudged > 0 {
		fmt.Fprintf(&b, ", %d left out (not judged by an arm)", c.Unjudged)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-20s %8s %8s %8s   %s\n", "metric", "A", "B", "B − A", "95% CI (paired bootstrap)")
	for _, d := range c.Diffs {
		fmt.Fprintf(&b, "%-20s %8.4f %8.4f %+8.4f   [%+.4f, %+.4f]\n", d.Metric, d.A, d.B, d.Delta, d.Low, d.High)
	}
	fmt.Fprintf(&b, "\n%d resamples of the %d paired claims, seed %d: an interval that excludes 0 is a difference\n"+
		"this dataset supports at the 95%% level.\n", c.Resamples, c.Paired, c.Seed)
	_, err := io.WriteString(w, b.String())
	return err
}
