package investigator

import (
	"fmt"
	"sort"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
)

// DefaultInvestigatorPromptVersion is the stage-1 prompt version of the
// default configuration. The default ran the newest version when v1 was
// the only one; it stays pinned to v1 so that default investigations run
// exactly as before. Newer versions run under a configuration that names
// them (and can be compared with an experiment before a promotion).
const DefaultInvestigatorPromptVersion = "v1"

// Failure kinds of a configuration a worker cannot run. They are not
// retryable: every attempt would meet them again.
const (
	FailureKindConfigurationProvider = "configuration_provider"
	FailureKindConfigurationPrompt   = "configuration_prompt"
	FailureKindConfigurationPolicy   = "configuration_policy"
)

// settings is how one run is carried out: its configuration resolved
// against what this worker has.
type settings struct {
	// model is the stage-1 model.
	model string
	// investigator is the stage-1 prompt (fresh or update).
	investigator prompts.Prompt
	// authorContext offers the author_context tool.
	authorContext bool
}

// stageOneSettings resolves run's configuration for stage 1: the
// default (spec nil) is the worker's model and the pinned prompt version;
// a configuration names its model, prompt versions and policy, and the
// worker checks up front that it can honour all of them (the provider
// too), so a configuration it cannot run fails at once with its reason
// instead of after stage 1 spent tokens.
func stageOneSettings(spec *events.AnalysisConfigurationV1, reg *prompts.Registry, providerName, workerModel string, update bool) (settings, error) {
	name := PromptFresh
	if update {
		name = PromptUpdate
	}
	if spec == nil {
		p, err := reg.Lookup(name, DefaultInvestigatorPromptVersion)
		if err != nil {
			return settings{}, attemptError{class: events.FailureNonRetryable, kind: "prompt", msg: err.Error()}
		}
		return settings{model: workerModel, investigator: p}, nil
	}
	if err := checkProvider(spec, providerName); err != nil {
		return settings{}, err
	}
	p, err := reg.Lookup(name, spec.InvestigatorPrompt)
	if err != nil {
		return settings{}, attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationPrompt,
			msg: fmt.Sprintf("configuration %q names investigator prompt %s, which this worker does not have: %v", spec.Name, spec.InvestigatorPrompt, err)}
	}
	if _, err := reg.Lookup(PromptValidator, spec.ValidatorPrompt); err != nil {
		return settings{}, attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationPrompt,
			msg: fmt.Sprintf("configuration %q names validator prompt %s, which this worker does not have: %v", spec.Name, spec.ValidatorPrompt, err)}
	}
	if _, err := policyOf(spec); err != nil {
		return settings{}, err
	}
	return settings{model: spec.Model, investigator: p, authorContext: spec.AuthorContext}, nil
}

// checkProvider refuses a configuration that needs another provider.
func checkProvider(spec *events.AnalysisConfigurationV1, providerName string) error {
	if spec.Provider != "" && spec.Provider != providerName {
		return attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationProvider,
			msg: fmt.Sprintf("configuration %q needs provider %s, but this worker runs %s", spec.Name, spec.Provider, providerName)}
	}
	return nil
}

// policyOf is the evidence policy whose version the configuration names.
func policyOf(spec *events.AnalysisConfigurationV1) (evidence.Policy, error) {
	known := evidence.Policies()
	versions := make([]string, 0, len(known))
	for _, p := range known {
		if p.Version() == spec.Policy {
			return p, nil
		}
		versions = append(versions, p.Version())
	}
	sort.Strings(versions)
	return evidence.Policy{}, attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationPolicy,
		msg: fmt.Sprintf("configuration %q names evidence policy %s, which this worker does not know (known: %v)", spec.Name, spec.Policy, versions)}
}

// validatorSettings resolves the stage-2 prompt and model of a run: the
// default is the newest validator prompt and the validator's own model.
func validatorSettings(spec *events.AnalysisConfigurationV1, reg *prompts.Registry, providerName, workerModel string) (prompts.Prompt, string, error) {
	if spec == nil {
		p, err := reg.Get(PromptValidator)
		return p, workerModel, err
	}
	if err := checkProvider(spec, providerName); err != nil {
		return prompts.Prompt{}, "", err
	}
	p, err := reg.Lookup(PromptValidator, spec.ValidatorPrompt)
	if err != nil {
		return prompts.Prompt{}, "", attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationPrompt,
			msg: fmt.Sprintf("configuration %q names validator prompt %s, which this worker does not have: %v", spec.Name, spec.ValidatorPrompt, err)}
	}
	model := workerModel
	if spec.ValidatorModel != "" {
		model = spec.ValidatorModel
	}
	return p, model, nil
}
