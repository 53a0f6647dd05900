package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/projections/serving"
)

func TestParseCompareArms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []compareArmSpec
		err  string
	}{
		{in: "default,mini-v2", want: []compareArmSpec{{configuration: "default"}, {configuration: "mini-v2"}}},
		{in: "policy=strict-v1,model=gpt-5,policy=validator-only-v1,model=gpt-5-mini", want: []compareArmSpec{
			{inline: map[string]string{"policy": "strict-v1", "model": "gpt-5"}},
			{inline: map[string]string{"policy": "validator-only-v1", "model": "gpt-5-mini"}}}},
		{in: "policy=strict-v1;policy=strict-v1,model=gpt-5-mini", want: []compareArmSpec{
			{inline: map[string]string{"policy": "strict-v1"}},
			{inline: map[string]string{"policy": "strict-v1", "model": "gpt-5-mini"}}}},
		{in: "default,policy=validator-only-v1", want: []compareArmSpec{
			{configuration: "default"}, {inline: map[string]string{"policy": "validator-only-v1"}}}},
		{in: "default", err: "exactly two arms"},
		{in: "a,b,c", err: "exactly two arms"},
		{in: "default,,b", err: "an empty arm"},
		{in: "default,secret=x", err: `key "secret" is unknown`},
		{in: "default,policy=", err: "policy has no value"},
		{in: "default,Robert'); DROP TABLE", err: "is not a configuration name"},
		{in: "default,../../etc/passwd", err: "is not a configuration name"},
	} {
		got, err := parseCompareArms(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

type fakeLookup map[string]serving.Configuration

func (f fakeLookup) ConfigurationByName(_ context.Context, name string) (serving.Configuration, error) {
	c, ok := f[name]
	if !ok {
		return serving.Configuration{}, serving.ErrNotFound
	}
	return c, nil
}

// TestResolveArm: a declared configuration gives its policy version and
// validator model (else its model); the default gives the worker's
// settings; an undeclared name, a policy version this build lacks and an
// unreachable projection are refused with the reason.
func TestResolveArm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	strict, only := evidence.DefaultPolicy(), evidence.ValidatorOnlyPolicy()
	lookup := fakeLookup{
		"default": {ID: "", Name: "default"},
		"mini-v2": {ID: "c1", Name: "mini-v2", Spec: &events.AnalysisConfigurationV1{Name: "mini-v2", Model: "gpt-5-mini",
			InvestigatorPrompt: "v2", ValidatorPrompt: "v1", Policy: only.Version()}},
		"judge": {ID: "c2", Name: "judge", Spec: &events.AnalysisConfigurationV1{Name: "judge", Model: "gpt-5",
			ValidatorModel: "gpt-5-nano", InvestigatorPrompt: "v1", ValidatorPrompt: "v1", Policy: strict.Version()}},
		"future": {ID: "c3", Name: "future", Spec: &events.AnalysisConfigurationV1{Name: "future", Model: "gpt-5",
			InvestigatorPrompt: "v1", ValidatorPrompt: "v1", Policy: "strict-v9@0123456789ab"}},
	}
	open := func() (configurationLookup, error) { return lookup, nil }
	cfg := config.Config{ValidatorModel: "gpt-5", StanceModel: "gpt-5-mini"}
	for _, tc := range []struct {
		spec compareArmSpec
		want resolvedArm
		err  string
	}{
		{spec: compareArmSpec{configuration: "default"}, want: resolvedArm{name: "default", policy: strict, model: "gpt-5-mini"}},
		{spec: compareArmSpec{configuration: "mini-v2"}, want: resolvedArm{name: "mini-v2", policy: only, model: "gpt-5-mini"}},
		{spec: compareArmSpec{configuration: "judge"}, want: resolvedArm{name: "judge", policy: strict, model: "gpt-5-nano"}},
		{spec: compareArmSpec{inline: map[string]string{"policy": "validator-only-v1"}},
			want: resolvedArm{name: "validator-only-v1", policy: only, model: "gpt-5-mini"}},
		{spec: compareArmSpec{inline: map[string]string{"policy": strict.Version(), "model": "m1", "name": "mine"}},
			want: resolvedArm{name: "mine", policy: strict, model: "m1"}},
		{spec: compareArmSpec{configuration: "nobody"}, err: `configuration "nobody" is not declared`},
		{spec: compareArmSpec{configuration: "future"}, err: `policy "strict-v9@0123456789ab" is not in this build`},
		{spec: compareArmSpec{inline: map[string]string{"policy": "lenient"}}, err: `policy "lenient" is not in this build`},
	} {
		got, err := resolveArm(ctx, tc.spec, open, cfg)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want.name, got.name)
		require.Equal(t, tc.want.policy.Version(), got.policy.Version())
		require.Equal(t, tc.want.model, got.model)
	}
	_, err := resolveArm(ctx, compareArmSpec{configuration: "mini-v2"},
		func() (configurationLookup, error) { return nil, errors.New("connection refused") }, cfg)
	require.ErrorContains(t, err, "serving projection is not reachable (use an inline spec")
}

// TestEvalCompare runs errata eval --compare through the binary: the gold
// lane with inline specs prints the golden table (the same as
// consumers/evidence/eval's, the same seed), the provider lane goes
// through the scripted fake, and bad command lines exit 2 and say why.
func TestEvalCompare(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runEval(t, nil, "--dataset", "climate-fever", "--lane", "gold", "--file", evalTestdata+"climate-fever.hand.jsonl",
		"--compare", "name=strict,policy=strict-v1;name=validator-only,policy=validator-only-v1")
	require.Zero(t, code, stderr)
	want, err := os.ReadFile(filepath.Join(evalTestdata, "compare-gold.golden"))
	require.NoError(t, err)
	require.Equal(t, string(want), strings.ReplaceAll(stdout, evalTestdata, "testdata/"))

	sc, err := fakeopenai.LoadScript(evalTestdata + "stance-script.json")
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "OPENAI_API_KEY=sk-eval-test", "ERRATA_LLM_PROVIDER=chat-completions"}
	stdout, stderr, code = runEval(t, env, "--dataset", "fcb-factuality", "--lane", "provider",
		"--file", evalTestdata+"fcb-factuality.hand.jsonl", "--evidence", evalTestdata+"fcb-stance.hand.jsonl", "--parallel", "2",
		"--compare", "name=strict,policy=strict-v1,model=gpt-5-mini;name=validator-only,policy=validator-only-v1,model=gpt-5-mini")
	require.Zero(t, code, stderr)
	want, err = os.ReadFile(filepath.Join(evalTestdata, "compare-provider.golden"))
	require.NoError(t, err)
	require.Equal(t, string(want), strings.ReplaceAll(stdout, evalTestdata, "testdata/"))
	require.NotContains(t, stdout+stderr, "sk-eval-test")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--compare", "default"}, "exactly two arms"},
		{[]string{"--compare", "policy=strict-v1,policy=nope"}, `policy "nope" is not in this build`},
		{[]string{"--compare", "policy=strict-v1,policy=strict-v1", "--policy", "strict-v1"}, "--policy is part of each arm"},
		{[]string{"--compare", "policy=strict-v1,policy=strict-v1", "--resamples", "0"}, "--resamples must be 1 to 100000"},
		{[]string{"--resamples", "10"}, "--resamples and --seed go with --compare"},
	} {
		_, stderr, code := runEval(t, nil, append([]string{"--dataset", "climate-fever", "--lane", "gold",
			"--file", evalTestdata + "climate-fever.hand.jsonl"}, tc.args...)...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.want, tc.args)
	}
}
