package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

const evalTestdata = "../../consumers/evidence/eval/testdata/"

// runEval runs the errata binary and returns stdout, stderr and the exit
// code.
func runEval(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"eval"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%v", err)
		code = exit.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// fcb-checkworthiness measures triage: the gold lane the rule-based
// baseline (saying so), the provider lane the extraction prompt through the
// scripted fake.
func TestEvalCheckworthiness(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runEval(t, nil, "--dataset", "fcb-checkworthiness", "--lane", "gold",
		"--file", evalTestdata+"fcb-checkworthiness-sentences.hand.jsonl")
	require.Zero(t, code, stderr)
	require.Empty(t, stderr)
	for _, want := range []string{
		"errata eval: fcb-checkworthiness, gold lane: the rule-based baseline verdict.HeuristicTriage (no LLM)\n",
		"NOT the model's triage (run --lane provider for that)",
		"check-worthy (Gate 1 passes)     1.0000  0.5000  0.6667",
		"not check-worthy     0.7500  1.0000  0.8571",
	} {
		require.Contains(t, stdout, want)
	}

	sc, err := fakeopenai.LoadScript(evalTestdata + "triage-script.json")
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=sk-eval-test", "ERRATA_LLM_PROVIDER=openai-responses",
		"ERRATA_ANALYST_MODEL=gpt-5-nano"}
	stdout, stderr, code = runEval(t, env, "--dataset", "fcb-checkworthiness", "--lane", "provider",
		"--file", evalTestdata+"fcb-checkworthiness.hand.jsonl", "--json", "--price-in", "1", "--price-out", "10")
	require.Zero(t, code, stderr)
	require.Contains(t, stderr, "eval fcb-checkworthiness [####################] 100%  8/8 texts")
	var rep struct {
		Lane        string `json:"lane"`
		Model       string `json:"model"`
		Prompt      string `json:"prompt_version"`
		CheckWorthy struct {
			Precision float64 `json:"precision"`
			Recall    float64 `json:"recall"`
		} `json:"check_worthy"`
		Tokens struct {
			Calls int `json:"calls"`
		} `json:"tokens"`
		Cost *float64 `json:"cost_usd"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Equal(t, "provider", rep.Lane)
	require.Equal(t, "gpt-5-nano", rep.Model)
	require.Equal(t, "verdict-extract@v1", rep.Prompt)
	require.Equal(t, 2.0/3, rep.CheckWorthy.Precision)
	require.Equal(t, 0.4, rep.CheckWorthy.Recall)
	require.Equal(t, 8, rep.Tokens.Calls)
	require.NotNil(t, rep.Cost)
	require.Len(t, fake.RequestsTo(fakeopenai.Responses), 8)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy", "strict-v1"}, "errata: --policy is not for fcb-checkworthiness, which measures triage, not the evidence engine\n"},
		{[]string{"--assume-tier", "1"}, "errata: --assume-tier is not for fcb-checkworthiness, which measures triage, not the evidence engine\n"},
	} {
		_, stderr, code := runEval(t, nil, append([]string{"--dataset", "fcb-checkworthiness", "--file", evalTestdata + "fcb-checkworthiness.hand.jsonl"}, tc.args...)...)
		require.Equal(t, 2, code)
		require.Equal(t, tc.want, stderr)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--dataset", "climate-fever"}, "errata: --dataset and --file are required\n", 2},
		{[]string{"--dataset", "climate-fever", "--file", "f", "--lane", "oracle"}, "errata: --lane \"oracle\" is unknown (gold or provider)\n", 2},
		{[]string{"--dataset", "climate-fever", "--file", "f", "--assume-tier", "1"},
			"errata: --assume-tier is for Factcheck-Bench: each CLIMATE-FEVER article is a tier-2 source (issue 14)\n", 2},
		{[]string{"--dataset", "fcb-stance", "--file", "f", "--price-in", "1"}, "errata: --price-in and --price-out go together\n", 2},
		{[]string{"--dataset", "fcb-stance", "--file", "f", "--policy", "lenient"},
			"errata: --policy: evidence policy \"lenient\" is unknown (known: [strict-v1 validator-only-v1])\n", 2},
		{[]string{"--dataset", "fever", "--file", "f"},
			"errata: dataset \"fever\" is unknown (known: climate-fever, fcb-stance, fcb-factuality, fcb-checkworthiness)\n", 1},
	} {
		_, stderr, code := runEval(t, nil, tc.args...)
		require.Equal(t, tc.want, stderr, "%v", tc.args)
		require.Equal(t, tc.code, code, "%v", tc.args)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte("{\"claim_id\":\"1\"\n"), 0o600))
	_, stderr, code := runEval(t, nil, "--dataset", "climate-fever", "--file", bad)
	require.Equal(t, 1, code)
	require.Equal(t, "errata: "+bad+":1: not a JSON record: unexpected end of JSON input\n", stderr)
}

// The gold lane prints the table, or one JSON object; --out writes the
// same object.
func TestEvalGoldLane(t *testing.T) {
	t.Parallel()
	file := evalTestdata + "climate-fever.hand.jsonl"
	stdout, stderr, code := runEval(t, nil, "--dataset", "climate-fever", "--lane", "gold", "--file", file)
	require.Zero(t, code, stderr)
	require.Empty(t, stderr, "the gold lane is instant: no progress bar")
	for _, want := range []string{
		"errata eval: climate-fever, gold-evidence lane (no LLM)\n",
		"each distinct article counts as an independent tier-2 source",
		"the validator is assumed to approve every claim",
		"precision            0.6667  (2 of 3 flagged claims are incorrect)\n",
		"recall               0.4000  (2 of 5 incorrect claims flagged)\n",
		"false-positive rate  0.1667  (1 of 6 not-false claims flagged; target ≤ 0.02)\n",
		"coverage             0.6364  (7 of 11 claims SUPPORTED or REFUTED)\n",
		"DISPUTED claims (should come out CONTESTED, never flagged): 2; SUPPORTED 1, REFUTED 0, CONTESTED 1, NOT_ENOUGH_EVIDENCE 0, flagged 0\n",
		"withheld by exactly these rules: no_authoritative_contradiction+gate4_below_minimum 2\n",
		"cost      $0.0000\n",
	} {
		require.Contains(t, stdout, want)
	}

	out := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, code = runEval(t, nil, "--dataset", "climate-fever", "--file", file, "--json", "--out", out)
	require.Zero(t, code, stderr)
	written, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, stdout, string(written))
	var rep map[string]any
	require.NoError(t, json.Unmarshal(written, &rep))
	require.Equal(t, "climate-fever", rep["dataset"])
	require.Equal(t, "gold", rep["lane"])
	require.Equal(t, 11.0, rep["records"])
	require.Equal(t, 2.0/3.0, rep["precision"])
	require.Equal(t, 1.0/6.0, rep["false_positive_rate"])
	require.Regexp(t, `^strict-v1@[0-9a-f]{12}$`, rep["policy_version"])
	require.Equal(t, map[string]any{"REFUTES": 2.0, "SUPPORTS": 1.0, "NOT_ENOUGH_INFO": 0.0, "DISPUTED": 0.0}, rep["flagged_by_label"])
	require.Equal(t, 0.0, rep["cost_usd"])
}

// The provider lane against the scripted fake (never a real address):
// stance from the provider, tokens from its usage, priced by the flags,
// progress on stderr.
func TestEvalProviderLane(t *testing.T) {
	t.Parallel()
	sc, err := fakeopenai.LoadScript(evalTestdata + "stance-script.json")
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=sk-eval-test", "ERRATA_LLM_PROVIDER=openai-responses",
		"ERRATA_STANCE_MODEL=gpt-5-nano"}
	stdout, stderr, code := runEval(t, env, "--dataset", "fcb-factuality", "--lane", "provider",
		"--file", evalTestdata+"fcb-factuality.hand.jsonl", "--evidence", evalTestdata+"fcb-stance.hand.jsonl",
		"--json", "--price-in", "1", "--price-out", "10", "--parallel", "2")
	require.Zero(t, code, stderr)
	require.Contains(t, stderr, "eval fcb-factuality [####################] 100%  6/6 claims")
	var rep struct {
		Lane      string  `json:"lane"`
		Model     string  `json:"model"`
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		FPR       float64 `json:"false_positive_rate"`
		Prompt    string  `json:"prompt_version"`
		Tokens    struct {
			Calls  int   `json:"calls"`
			Input  int64 `json:"input"`
			Output int64 `json:"output"`
		} `json:"tokens"`
		Cost  *float64 `json:"cost_usd"`
		Price struct {
			Source string `json:"source"`
		} `json:"price"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep))
	require.Equal(t, "provider", rep.Lane)
	require.Equal(t, "gpt-5-nano", rep.Model)
	require.NotEmpty(t, rep.Prompt)
	require.Equal(t, 1.0, rep.Precision)
	require.Equal(t, 2.0/3.0, rep.Recall)
	require.Equal(t, 0.0, rep.FPR)
	reqs := fake.RequestsTo(fakeopenai.Responses)
	require.Len(t, reqs, 6)
	require.Equal(t, 6, rep.Tokens.Calls)
	var input int64
	for _, q := range reqs {
		require.Equal(t, "gpt-5-nano", q.JSON()["model"])
		input += int64(len(q.Body)/4 + 1)
	}
	require.Equal(t, input, rep.Tokens.Input)
	require.NotNil(t, rep.Cost)
	require.InDelta(t, (float64(input)*1+float64(rep.Tokens.Output)*10)/1e6, *rep.Cost, 1e-12)
	require.Equal(t, "--price-in/--price-out", rep.Price.Source)

	// A model without a price: the cost is unknown (null), never made up.
	stdout, stderr, code = runEval(t, append(env, "ERRATA_LLM_PRICES=gpt-5=1.25:10"), "--dataset", "fcb-stance", "--lane", "provider",
		"--file", evalTestdata+"fcb-stance.hand.jsonl", "--limit", "2")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, `cost      unknown: model "gpt-5-nano" has no price`)
	require.True(t, strings.HasPrefix(stdout, "errata eval: fcb-stance, provider lane\n"), stdout)
}
