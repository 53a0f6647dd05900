package investigator

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
)

func configured() events.AnalysisConfigurationV1 {
	return events.AnalysisConfigurationV1{Name: "candidate", Model: "gpt-cand", ValidatorModel: "gpt-cand-validator",
		InvestigatorPrompt: "v2", ValidatorPrompt: "v1", Policy: evidence.ValidatorOnlyPolicy().Version(), AuthorContext: true}
}

// The default configuration runs as before configurations existed (the
// worker's model, stage-1 prompt pinned to v1, the newest validator
// prompt); a configuration runs exactly what it names, and one this worker
// cannot honour fails without retry, saying why.
func TestRunSettings(t *testing.T) {
	t.Parallel()
	reg := prompts.Default()
	spec := configured()
	with := func(edit func(c *events.AnalysisConfigurationV1)) *events.AnalysisConfigurationV1 {
		c := configured()
		edit(&c)
		return &c
	}
	for _, tc := range []struct {
		name       string
		spec       *events.AnalysisConfigurationV1
		update     bool
		wantPrompt string
		wantModel  string
		wantAuthor bool
		wantKind   string
		wantMsg    string
	}{
		{name: "default fresh", wantPrompt: "investigator-fresh@v1", wantModel: "worker-model"},
		{name: "default update", update: true, wantPrompt: "investigator-update@v1", wantModel: "worker-model"},
		{name: "configured fresh", spec: &spec, wantPrompt: "investigator-fresh@v2", wantModel: "gpt-cand", wantAuthor: true},
		{name: "configured update", spec: &spec, update: true, wantPrompt: "investigator-update@v2", wantModel: "gpt-cand", wantAuthor: true},
		{name: "the provider it names", spec: with(func(c *events.AnalysisConfigurationV1) { c.Provider = "openai-responses" }),
			wantPrompt: "investigator-fresh@v2", wantModel: "gpt-cand", wantAuthor: true},
		{name: "another provider", spec: with(func(c *events.AnalysisConfigurationV1) { c.Provider = "chat-completions" }),
			wantKind: FailureKindConfigurationProvider, wantMsg: `configuration "candidate" needs provider chat-completions, but this worker runs openai-responses`},
		{name: "unknown investigator prompt", spec: with(func(c *events.AnalysisConfigurationV1) { c.InvestigatorPrompt = "v99" }),
			wantKind: FailureKindConfigurationPrompt, wantMsg: "investigator prompt v99"},
		{name: "unknown validator prompt", spec: with(func(c *events.AnalysisConfigurationV1) { c.ValidatorPrompt = "v42" }),
			wantKind: FailureKindConfigurationPrompt, wantMsg: "validator prompt v42"},
		{name: "unknown policy", spec: with(func(c *events.AnalysisConfigurationV1) { c.Policy = "lenient-v9@0123456789ab" }),
			wantKind: FailureKindConfigurationPolicy, wantMsg: "evidence policy lenient-v9@0123456789ab, which this worker does not know"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := stageOneSettings(tc.spec, reg, "openai-responses", "worker-model", tc.update)
			if tc.wantKind != "" {
				var ae attemptError
				require.True(t, errors.As(err, &ae), "%v", err)
				require.Equal(t, events.FailureNonRetryable, ae.class)
				require.Equal(t, tc.wantKind, ae.kind)
				require.Contains(t, ae.msg, tc.wantMsg)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantPrompt, got.investigator.ID())
			require.Equal(t, tc.wantModel, got.model)
			require.Equal(t, tc.wantAuthor, got.authorContext)
		})
	}
}

func TestValidatorSettings(t *testing.T) {
	t.Parallel()
	reg := prompts.Default()
	p, model, err := validatorSettings(nil, reg, "openai-responses", "worker-validator")
	require.NoError(t, err)
	newest, err := reg.Get(PromptValidator)
	require.NoError(t, err)
	require.Equal(t, newest, p)
	require.Equal(t, "worker-validator", model)

	spec := configured()
	p, model, err = validatorSettings(&spec, reg, "openai-responses", "worker-validator")
	require.NoError(t, err)
	require.Equal(t, "validator@v1", p.ID())
	require.Equal(t, "gpt-cand-validator", model)

	spec.ValidatorModel = ""
	_, model, err = validatorSettings(&spec, reg, "openai-responses", "worker-validator")
	require.NoError(t, err)
	require.Equal(t, "worker-validator", model, "no validator model named: the worker's")

	spec.Provider = "elsewhere"
	_, _, err = validatorSettings(&spec, reg, "openai-responses", "worker-validator")
	require.ErrorContains(t, err, "needs provider elsewhere")
}

func TestPolicyOf(t *testing.T) {
	t.Parallel()
	for _, want := range evidence.Policies() {
		spec := configured()
		spec.Policy = want.Version()
		got, err := policyOf(&spec)
		require.NoError(t, err)
		require.Equal(t, want.Version(), got.Version())
	}
	spec := configured()
	spec.Policy = "strict-v1@000000000000" // a known name with other rules is another policy
	_, err := policyOf(&spec)
	require.ErrorContains(t, err, evidence.DefaultPolicy().Version(), "the reason lists the versions this worker knows")
}
