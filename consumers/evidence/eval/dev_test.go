package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// devDatasets is ../shared/datasets beside the repository root.
var devDatasets = filepath.Join("..", "..", "..", "..", "shared", "datasets")

// TestGoldLaneDevelopmentFiles runs the gold-evidence lane over the public
// development files and holds the target: a false-positive rate of
// at most 2% on CLIMATE-FEVER and Factcheck-Bench factuality.
func TestGoldLaneDevelopmentFiles(t *testing.T) {
	if _, err := os.Stat(devDatasets); err != nil {
		t.Skipf("the development datasets are not at %s: %v", devDatasets, err)
	}
	for _, tc := range []struct {
		dataset, file string
		maxFPR        float64
	}{
		{ClimateFever, "climate-fever.dev.jsonl", 0.02},
		{FCBFactuality, "factcheck-bench.subtask4_claim_factuality.dev.jsonl", 0.02},
		{FCBStance, "factcheck-bench.subtask3_claim_evidence_stance.dev.jsonl", 1},
	} {
		t.Run(tc.dataset, func(t *testing.T) {
			r := gold(t, tc.dataset, filepath.Join(devDatasets, tc.file), LoadOptions{})
			var b strings.Builder
			require.NoError(t, r.WriteText(&b))
			t.Log("\n" + b.String())
			require.Positive(t, r.Evaluated)
			require.Equal(t, r.Evaluated, r.Counts.TP+r.Counts.FP+r.Counts.FN+r.Counts.TN)
			require.LessOrEqual(t, r.FalsePositiveRate, tc.maxFPR)
			require.Zero(t, r.Disputed.Flagged, "a disputed claim must never be flagged")
		})
	}
}
