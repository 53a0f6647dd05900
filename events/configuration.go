package events

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"unicode/utf8"
)

// Analysis configurations, their promotion and prompt experiments: the
// operator's decisions about how investigations run and which results
// readers see. They are events like every other judgement, so the log says
// which configuration was active when, and a rollback is one more event.
//
// The default configuration (id "") is the one every investigation ran
// under before configurations existed: the worker's own settings (its
// model, the newest prompt versions, the default evidence policy). Its
// investigations keep the id InvestigationID(postVersionID), so the log
// written before configurations needs no rewrite.

// Event types of analysis control (one aggregate, one partition key, so
// declarations, promotions and experiments have one total order).
const (
	TypeConfigurationDeclaredV1 = "configuration.declared.v1"
	TypeConfigurationPromotedV1 = "configuration.promoted.v1"
	TypeExperimentStartedV1     = "experiment.started.v1"
	TypeExperimentStoppedV1     = "experiment.stopped.v1"
)

// ControlSubject is the partition key of every control event.
const ControlSubject = "analysis-control"

// DefaultConfigurationID names the default configuration.
const DefaultConfigurationID = ""

// DefaultConfigurationName is how people name the default configuration
// (CLI arguments, GraphQL, ClickHouse rows).
const DefaultConfigurationName = "default"

// Experiment arms.
const (
	ArmControl   = "CONTROL"
	ArmCandidate = "CANDIDATE"
)

// RequestSourceReprocess marks an investigation requested by
// `errata reinvestigate` (re-processing under another configuration).
const RequestSourceReprocess = "REPROCESS"

var (
	configurationName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	promptVersionRe   = regexp.MustCompile(`^v[1-9][0-9]{0,5}$`)
	policyVersionRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}@[0-9a-f]{12}$`)
	modelNameRe       = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)
)

// AnalysisConfigurationV1 pins everything that decides an investigation's
// result. It is immutable: a change is a new configuration.
type AnalysisConfigurationV1 struct {
	// Name labels the configuration for people (lowercase, [a-z0-9._-]).
	Name string `json:"name"`
	// Provider, when set, is the provider the configuration needs
	// (llm.Provider.Name()); a worker running another refuses the run.
	Provider string `json:"provider,omitempty"`
	// Model is the stage-1 (investigator) model.
	Model string `json:"model"`
	// ValidatorModel is the stage-2 model ("" the worker's).
	ValidatorModel string `json:"validator_model,omitempty"`
	// InvestigatorPrompt and ValidatorPrompt are prompt versions ("v1")
	// of investigator-fresh/investigator-update and of validator.
	InvestigatorPrompt string `json:"investigator_prompt"`
	ValidatorPrompt    string `json:"validator_prompt"`
	// Policy is the evidence policy version (evidence.Policy.Version(),
	// "<name>@<12 hex>").
	Policy string `json:"policy"`
	// AuthorContext offers the investigator the author-context tool.
	AuthorContext bool `json:"author_context"`
}

// Validate checks the configuration's fields.
func (c AnalysisConfigurationV1) Validate() error {
	var errs []error
	if !configurationName.MatchString(c.Name) || c.Name == DefaultConfigurationName {
		errs = append(errs, fmt.Errorf("configuration name %q must match %s and not be %q", c.Name, configurationName, DefaultConfigurationName))
	}
	if c.Provider != "" && !modelNameRe.MatchString(c.Provider) {
		errs = append(errs, fmt.Errorf("provider %q is malformed", c.Provider))
	}
	if !modelNameRe.MatchString(c.Model) {
		errs = append(errs, fmt.Errorf("model %q is malformed", c.Model))
	}
	if c.ValidatorModel != "" && !modelNameRe.MatchString(c.ValidatorModel) {
		errs = append(errs, fmt.Errorf("validator_model %q is malformed", c.ValidatorModel))
	}
	if !promptVersionRe.MatchString(c.InvestigatorPrompt) || !promptVersionRe.MatchString(c.ValidatorPrompt) {
		errs = append(errs, errors.New("investigator_prompt and validator_prompt must be prompt versions (v1, v2, ...)"))
	}
	if !policyVersionRe.MatchString(c.Policy) {
		errs = append(errs, fmt.Errorf("policy %q is not an evidence policy version (<name>@<12 hex>)", c.Policy))
	}
	return errors.Join(errs...)
}

// ConfigurationID is the identity of a configuration: its name and every
// field, so one id always means the same settings.
func ConfigurationID(c AnalysisConfigurationV1) string {
	return derive("configuration", c.Name, c.Provider, c.Model, c.ValidatorModel, c.InvestigatorPrompt,
		c.ValidatorPrompt, c.Policy, strconv.FormatBool(c.AuthorContext))
}

// InvestigationIDFor is the one investigation of a post version under a
// configuration. The default configuration keeps InvestigationID.
func InvestigationIDFor(postVersionID, configurationID string) string {
	if configurationID == DefaultConfigurationID {
		return InvestigationID(postVersionID)
	}
	return derive("investigation", postVersionID, configurationID)
}

// ExperimentID is the identity of the experiment named name.
func ExperimentID(name string) string { return derive("experiment", name) }

// MaxShareBasisPoints is a share of 100%.
const MaxShareBasisPoints = 10000

// ExperimentArm assigns a post version to an arm of an experiment: the
// same version always lands in the same arm, so a retried or repeated
// request does too. candidateShareBP is the candidate's share in basis
// points (1/100 of a percent).
func ExperimentArm(experimentID, postVersionID string, candidateShareBP int) string {
	sum := sha256.Sum256([]byte(experimentID + "\x00" + postVersionID))
	if int(binary.BigEndian.Uint64(sum[:8])%MaxShareBasisPoints) < candidateShareBP {
		return ArmCandidate
	}
	return ArmControl
}

// validConfigurationRef accepts the default configuration ("") or a UUID.
func validConfigurationRef(id string) bool { return id == DefaultConfigurationID || validUUID(id) }

// validateDecision checks the operator and reason every control event carries.
func validateDecision(operator, reason string) error {
	var errs []error
	if operator == "" || utf8.RuneCountInString(operator) > 100 || Clean(operator) != operator {
		errs = append(errs, errors.New("operator is required: at most 100 characters without control characters"))
	}
	if reason == "" || utf8.RuneCountInString(reason) > 2000 || Clean(reason) != reason {
		errs = append(errs, errors.New("reason is required: at most 2000 characters without control characters"))
	}
	return errors.Join(errs...)
}

// ConfigurationDeclaredV1 makes a configuration known by name. Declaring
// it again changes nothing; a second configuration under a name already
// taken is refused by the command and ignored by every projection.
type ConfigurationDeclaredV1 struct {
	ConfigurationID string                  `json:"configuration_id"`
	Configuration   AnalysisConfigurationV1 `json:"configuration"`
	Operator        string                  `json:"operator"`
	Reason          string                  `json:"reason"`
}

// EventType implements Payload.
func (ConfigurationDeclaredV1) EventType() string { return TypeConfigurationDeclaredV1 }

// Validate implements Payload.
func (p ConfigurationDeclaredV1) Validate() error {
	errs := []error{p.Configuration.Validate(), validateDecision(p.Operator, p.Reason)}
	if p.ConfigurationID != ConfigurationID(p.Configuration) {
		errs = append(errs, errors.New("configuration_id does not derive from the configuration"))
	}
	return errors.Join(errs...)
}

// ConfigurationPromotedV1 makes a configuration the active one: readers
// see its results wherever it has one. A rollback is a promotion of the
// configuration that was active before (Rollback marks it as such).
type ConfigurationPromotedV1 struct {
	ConfigurationID string `json:"configuration_id"`
	// PreviousConfigurationID was active when the operator decided.
	PreviousConfigurationID string `json:"previous_configuration_id"`
	Rollback                bool   `json:"rollback,omitempty"`
	Operator                string `json:"operator"`
	Reason                  string `json:"reason"`
}

// EventType implements Payload.
func (ConfigurationPromotedV1) EventType() string { return TypeConfigurationPromotedV1 }

// Validate implements Payload.
func (p ConfigurationPromotedV1) Validate() error {
	errs := []error{validateDecision(p.Operator, p.Reason)}
	if !validConfigurationRef(p.ConfigurationID) || !validConfigurationRef(p.PreviousConfigurationID) {
		errs = append(errs, errors.New("configuration ids must be UUIDs or empty (the default configuration)"))
	}
	return errors.Join(errs...)
}

// ExperimentStartedV1 sends a share of new investigations to a candidate
// configuration; the rest run under the control configuration. Which
// version goes where is ExperimentArm, recorded on each request. At most
// one experiment runs at a time: a start while another runs is refused by
// the command and ignored by projections.
type ExperimentStartedV1 struct {
	ExperimentID             string `json:"experiment_id"`
	Name                     string `json:"name"`
	ControlConfigurationID   string `json:"control_configuration_id"`
	CandidateConfigurationID string `json:"candidate_configuration_id"`
	// CandidateShareBP is the candidate's share in basis points (1..9999).
	CandidateShareBP int    `json:"candidate_share_bp"`
	Operator         string `json:"operator"`
	Reason           string `json:"reason"`
}

// EventType implements Payload.
func (ExperimentStartedV1) EventType() string { return TypeExperimentStartedV1 }

// Validate implements Payload.
func (p ExperimentStartedV1) Validate() error {
	errs := []error{validateDecision(p.Operator, p.Reason)}
	if !configurationName.MatchString(p.Name) || p.ExperimentID != ExperimentID(p.Name) {
		errs = append(errs, errors.New("experiment name must be [a-z0-9._-] and experiment_id derive from it"))
	}
	if !validConfigurationRef(p.ControlConfigurationID) || !validUUID(p.CandidateConfigurationID) {
		errs = append(errs, errors.New("control_configuration_id must be a UUID or empty (default); candidate_configuration_id a UUID"))
	}
	if p.ControlConfigurationID == p.CandidateConfigurationID {
		errs = append(errs, errors.New("control and candidate are the same configuration"))
	}
	if p.CandidateShareBP < 1 || p.CandidateShareBP >= MaxShareBasisPoints {
		errs = append(errs, fmt.Errorf("candidate_share_bp %d is outside 1..%d", p.CandidateShareBP, MaxShareBasisPoints-1))
	}
	return errors.Join(errs...)
}

// ExperimentStoppedV1 ends an experiment: new investigations run under the
// active configuration again, and the candidate's results are no longer
// shown to readers unless it is promoted.
type ExperimentStoppedV1 struct {
	ExperimentID string `json:"experiment_id"`
	Operator     string `json:"operator"`
	Reason       string `json:"reason"`
}

// EventType implements Payload.
func (ExperimentStoppedV1) EventType() string { return TypeExperimentStoppedV1 }

// Validate implements Payload.
func (p ExperimentStoppedV1) Validate() error {
	errs := []error{validateDecision(p.Operator, p.Reason)}
	if !validUUID(p.ExperimentID) {
		errs = append(errs, errors.New("experiment_id must be a UUID"))
	}
	return errors.Join(errs...)
}
