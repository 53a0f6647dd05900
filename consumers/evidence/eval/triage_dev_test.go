package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/verdict"
)

// TestTriageGoldLaneDevelopmentFiles measures the rule-based Gate-1
// baseline on both public check-worthiness files (the tables are in the
// log, go test -v) and pins its counts.
func TestTriageGoldLaneDevelopmentFiles(t *testing.T) {
	if _, err := os.Stat(devDatasets); err != nil {
		t.Skipf("the development datasets are not at %s: %v", devDatasets, err)
	}
	for _, tc := range []struct {
		file    string
		subtask string
		records int
		want    [4]int // TP, FP, FN, TN of check-worthy: the baseline is deterministic
	}{
		{"factcheck-bench.subtask2_claim_checkworthiness.dev.jsonl", SubtaskClaim, 553, [4]int{511, 4, 28, 10}},
		{"factcheck-bench.subtask1_sentence_checkworthiness.dev.jsonl", SubtaskSentence, 243, [4]int{190, 10, 29, 14}},
	} {
		t.Run(tc.subtask, func(t *testing.T) {
			set, err := LoadTriage(filepath.Join(devDatasets, tc.file), 0)
			require.NoError(t, err)
			require.Equal(t, tc.subtask, set.Subtask)
			r, err := EvaluateTriage(context.Background(), set, TriageOptions{Lane: LaneGold, Triager: HeuristicTriager{},
				Rubric: verdict.DefaultRubric()})
			require.NoError(t, err)
			var b strings.Builder
			require.NoError(t, r.WriteText(&b))
			t.Log("\n" + b.String())
			require.Equal(t, tc.records, r.Evaluated)
			c := r.CheckWorthy
			require.Equal(t, tc.records, c.TP+c.FP+c.FN+c.TN)
			require.Equal(t, tc.want, [4]int{c.TP, c.FP, c.FN, c.TN}, "a change of the baseline changes these on purpose")
		})
	}
}
