package eval

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/internal/logging"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestPercentile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		q      float64
		want   float64
	}{
		{"one value", []float64{0.3}, 0.975, 0.3},
		{"lowest", []float64{1, 2, 3, 4, 5}, 0, 1},
		{"highest", []float64{1, 2, 3, 4, 5}, 1, 5},
		{"median", []float64{1, 2, 3, 4, 5}, 0.5, 3},
		{"between ranks", []float64{0, 10}, 0.25, 2.5},
		{"2.5th of 0..100", func() []float64 {
			v := make([]float64, 101)
			for i := range v {
				v[i] = float64(i)
			}
			return v
		}(), 0.025, 2.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, percentile(tc.values, tc.q), 1e-12)
		})
	}
	require.True(t, percentile(nil, 0.5) != percentile(nil, 0.5), "no values: NaN")
}

func items(spec ...string) []pairedItem {
	out := make([]pairedItem, len(spec))
	for i, s := range spec {
		// p: positive, f: flagged (published), d: definite verdict
		out[i] = pairedItem{positive: bytes.ContainsRune([]byte(s), 'p'), publish: bytes.ContainsRune([]byte(s), 'f'),
			definite: bytes.ContainsRune([]byte(s), 'd')}
	}
	return out
}

// TestPairedBootstrapKnownCases: the intervals of cases whose every
// resample gives the same difference are that difference; identical arms
// differ by nothing; the same seed gives the same intervals, and the
// interval of a real difference contains it.
func TestPairedBootstrapKnownCases(t *testing.T) {
	t.Run("identical arms", func(t *testing.T) {
		a := items("pfd", "p", "fd", "", "pd", "pfd")
		low, high := pairedBootstrap(a, a, 500, 1)
		require.Equal(t, [5]float64{}, low)
		require.Equal(t, [5]float64{}, high)
	})
	t.Run("B flags every positive, A none", func(t *testing.T) {
		a := items("pd", "pd", "pd", "pd")
		b := items("pfd", "pfd", "pfd", "pfd")
		low, high := pairedBootstrap(a, b, 300, 7)
		// fpr 0 → 0, precision 0 → 1, recall 0 → 1, F1 0 → 1, coverage 1 → 1, in every resample
		require.Equal(t, [5]float64{0, 1, 1, 1, 0}, low)
		require.Equal(t, [5]float64{0, 1, 1, 1, 0}, high)
	})
	t.Run("coverage only", func(t *testing.T) {
		a := items("", "", "")
		b := items("d", "d", "d")
		low, high := pairedBootstrap(a, b, 100, 3)
		require.Equal(t, [5]float64{0, 0, 0, 0, 1}, low)
		require.Equal(t, [5]float64{0, 0, 0, 0, 1}, high)
	})
	t.Run("no items", func(t *testing.T) {
		low, high := pairedBootstrap(nil, nil, 100, 3)
		require.Equal(t, [5]float64{}, low)
		require.Equal(t, [5]float64{}, high)
	})
	t.Run("a real difference", func(t *testing.T) {
		// 40 claims, half incorrect: A flags 10 incorrect and 4 correct, B
		// flags 16 incorrect and 2 correct.
		var a, b []pairedItem
		for i := range 40 {
			pos := i < 20
			a = append(a, pairedItem{positive: pos, publish: (pos && i < 10) || (!pos && i < 24), definite: true})
			b = append(b, pairedItem{positive: pos, publish: (pos && i < 16) || (!pos && i < 22), definite: true})
		}
		low, high := pairedBootstrap(a, b, 1000, DefaultSeed)
		low2, high2 := pairedBootstrap(a, b, 1000, DefaultSeed)
		require.Equal(t, low, low2, "the same seed draws the same resamples")
		require.Equal(t, high, high2)
		other, _ := pairedBootstrap(a, b, 1000, DefaultSeed+1)
		require.NotEqual(t, low, other, "another seed draws others")
		ca, _ := countItems(a, nil)
		cb, _ := countItems(b, nil)
		ma, mb := metricsOf(ca, 40, 40), metricsOf(cb, 40, 40)
		require.InDelta(t, 0.3, mb[2]-ma[2], 1e-12, "recall 0.5 → 0.8")
		require.InDelta(t, -0.1, mb[0]-ma[0], 1e-12, "false-positive rate 0.2 → 0.1")
		for i := range 4 {
			require.LessOrEqual(t, low[i], mb[i]-ma[i], "metric %s", compareMetrics[i])
			require.GreaterOrEqual(t, high[i], mb[i]-ma[i], "metric %s", compareMetrics[i])
		}
		// Each recall resample is a difference of 6 claims among about 20
		// positives, always positive: the interval excludes 0.
		require.Greater(t, low[2], 0.0)
		require.Equal(t, [2]float64{0, 0}, [2]float64{low[4], high[4]}, "both arms cover every claim")
	})
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

// TestCompareGoldLane compares the strict policy (A) with validator-only
// (B) on the hand-labelled CLIMATE-FEVER file: the table is golden
// (testdata/compare-gold.golden; go test -update rewrites it), and each
// arm's figures equal Evaluate's on the same file.
func TestCompareGoldLane(t *testing.T) {
	set, err := Load(ClimateFever, "testdata/climate-fever.hand.jsonl", LoadOptions{})
	require.NoError(t, err)
	strict, only := evidence.DefaultPolicy(), evidence.ValidatorOnlyPolicy()
	c, err := Compare(context.Background(), set, Arm{Name: "strict", Policy: strict}, Arm{Name: "validator-only", Policy: only},
		CompareOptions{Lane: LaneGold, Seed: DefaultSeed})
	require.NoError(t, err)
	for _, arm := range []struct {
		s ArmSummary
		p evidence.Policy
	}{{c.A, strict}, {c.B, only}} {
		r, err := Evaluate(context.Background(), set, Options{Lane: LaneGold, Policy: arm.p})
		require.NoError(t, err)
		require.Equal(t, r.Precision, arm.s.Metrics["precision"])
		require.Equal(t, r.Recall, arm.s.Metrics["recall"])
		require.Equal(t, r.F1, arm.s.Metrics["f1"])
		require.Equal(t, r.FalsePositiveRate, arm.s.Metrics["false_positive_rate"])
		require.Equal(t, r.Coverage, arm.s.Metrics["coverage"])
	}
	require.Equal(t, DefaultResamples, c.Resamples)
	var b bytes.Buffer
	require.NoError(t, c.WriteText(&b))
	compareGolden(t, "compare-gold.golden", b.Bytes())
}

// TestCompareProviderLane runs both arms through the scripted fake
// provider (testdata/stance-script.json): the same model under the strict
// policy (A) and validator-only (B), on the same claims in one run.
func TestCompareProviderLane(t *testing.T) {
	fake := scriptedFake(t)
	set, err := Load(FCBFactuality, "testdata/fcb-factuality.hand.jsonl", LoadOptions{EvidenceFile: "testdata/fcb-stance.hand.jsonl"})
	require.NoError(t, err)
	judge := stance.New(NewMeter(llm.ChatCompletions{}), stance.Config{Model: "gpt-5-mini"})
	st := judge.Stancer(llm.Credentials{BaseURL: fake.URL, APIKey: logging.Secret("sk-test")})
	var last [2]int
	c, err := Compare(context.Background(), set,
		Arm{Name: "strict", Policy: evidence.DefaultPolicy(), Model: "gpt-5-mini", Stancer: st},
		Arm{Name: "validator-only", Policy: evidence.ValidatorOnlyPolicy(), Model: "gpt-5-mini", Stancer: st},
		CompareOptions{Lane: LaneProvider, Seed: DefaultSeed, Parallel: 2, Progress: func(done, total int) { last = [2]int{done, total} }})
	require.NoError(t, err)
	require.Equal(t, [2]int{12, 12}, last, "six claims per arm")
	require.Equal(t, 6, c.Paired)
	// TestProviderLane's figures for the strict arm.
	require.Equal(t, Counts{TP: 2, FN: 1, TN: 3, Positives: 3, Negatives: 3, Flagged: 2, Definite: 4}, c.A.Counts)
	var b bytes.Buffer
	require.NoError(t, c.WriteText(&b))
	compareGolden(t, "compare-provider.golden", b.Bytes())
}
