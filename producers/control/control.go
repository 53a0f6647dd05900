// Package control appends the operator's decisions about analysis
// configurations: declarations, promotions and rollbacks, and prompt
// experiments. Each decision is checked against the serving projection
// first, so a command that cannot take effect is refused before anything
// is appended (the projections ignore such events too, but an operator
// should hear why).
package control

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/serving"
)

// ErrRefused marks a decision refused before anything was appended.
var ErrRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Appender appends events (producers.Appender).
type Appender interface {
	NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// Prompt names whose versions a configuration pins.
const (
	promptInvestigatorFresh  = "investigator-fresh"
	promptInvestigatorUpdate = "investigator-update"
	promptValidator          = "validator"
)

// Service validates and appends control events.
type Service struct {
	reader   Reader
	appender Appender
	prompts  *prompts.Registry
	policies map[string]evidence.Policy
}

// New returns a service checking prompt versions against reg and policies
// against policies (evidence.Policies()).
func New(r Reader, a Appender, reg *prompts.Registry, policies map[string]evidence.Policy) *Service {
	return &Service{reader: r, appender: a, prompts: reg, policies: policies}
}

// Decision is who decided and why; every control event records both.
type Decision struct {
	Operator, Reason string
}

func (d Decision) check() error {
	if strings.TrimSpace(d.Reason) == "" {
		return refuse("a reason is required")
	}
	if strings.TrimSpace(d.Operator) == "" {
		return refuse("an operator is required")
	}
	if hasControl(d.Reason) || hasControl(d.Operator) {
		return refuse("operator and reason must be valid UTF-8 without control characters")
	}
	return nil
}

// Declaration is what `configurations declare` asks for.
type Declaration struct {
	Name, Provider, Model, ValidatorModel string
	InvestigatorPrompt, ValidatorPrompt   string
	// Policy is an evidence policy name (strict-v1) or version (strict-v1@<12 hex>).
	Policy        string
	AuthorContext bool
	Decision
}

// Outcome reports an appended decision.
type Outcome struct {
	Position producers.Position
	// ConfigurationID or ExperimentID the decision is about.
	ID string
	// Unchanged is true when the decision was already in effect and
	// nothing was appended (a repeated declaration).
	Unchanged bool
}

// Spec resolves a declaration to the configuration it declares: the
// policy name to its version, each prompt version checked against the
// registry. Nothing is read or appended.
func (s *Service) Spec(d Declaration) (events.AnalysisConfigurationV1, error) {
	spec := events.AnalysisConfigurationV1{
		Name: d.Name, Provider: d.Provider, Model: d.Model, ValidatorModel: d.ValidatorModel,
		InvestigatorPrompt: d.InvestigatorPrompt, ValidatorPrompt: d.ValidatorPrompt, AuthorContext: d.AuthorContext,
	}
	policy, err := s.policyVersion(d.Policy)
	if err != nil {
		return spec, err
	}
	spec.Policy = policy
	if err := spec.Validate(); err != nil {
		return spec, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	for _, p := range []struct{ name, version string }{
		{promptInvestigatorFresh, spec.InvestigatorPrompt},
		{promptInvestigatorUpdate, spec.InvestigatorPrompt},
		{promptValidator, spec.ValidatorPrompt},
	} {
		if _, err := s.prompts.Lookup(p.name, p.version); err != nil {
			return spec, refuse("prompt %s@%s is not in the prompt registry", p.name, p.version)
		}
	}
	return spec, nil
}

// policyVersion resolves a policy name, or checks a policy version, against
// the known policies.
func (s *Service) policyVersion(policy string) (string, error) {
	if name, _, found := strings.Cut(policy, "@"); found {
		if p, ok := s.policies[name]; ok && p.Version() == policy {
			return policy, nil
		}
		return "", refuse("evidence policy version %q is unknown", policy)
	}
	p, ok := s.policies[policy]
	if !ok {
		return "", refuse("evidence policy %q is unknown (known: %s)", policy, strings.Join(s.policyNames(), ", "))
	}
	return p.Version(), nil
}

func (s *Service) policyNames() []string {
	names := make([]string, 0, len(s.policies))
	for n := range s.policies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Declare appends configuration.declared.v1 unless the same configuration
// is declared already; a name taken by other settings is refused.
func (s *Service) Declare(ctx context.Context, d Declaration) (Outcome, error) {
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	spec, err := s.Spec(d)
	if err != nil {
		return Outcome{}, err
	}
	id := events.ConfigurationID(spec)
	existing, err := s.reader.ConfigurationByName(ctx, spec.Name)
	switch {
	case errors.Is(err, serving.ErrNotFound):
	case err != nil:
		return Outcome{}, fmt.Errorf("read configuration %q: %w", spec.Name, err)
	case existing.ID == id:
		return Outcome{ID: id, Unchanged: true}, nil
	default:
		return Outcome{}, refuse("the name %q is taken by configuration %s with other settings; choose another name", spec.Name, existing.ID)
	}
	return s.append(ctx, id, &events.ConfigurationDeclaredV1{ConfigurationID: id, Configuration: spec,
		Operator: d.Operator, Reason: d.Reason})
}

// Promote makes the named configuration the active one.
func (s *Service) Promote(ctx context.Context, name string, d Decision) (Outcome, error) {
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	target, err := s.byName(ctx, name)
	if err != nil {
		return Outcome{}, err
	}
	active, err := s.reader.ActiveConfiguration(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the active configuration: %w", err)
	}
	if active.ID == target.ID {
		return Outcome{}, refuse("configuration %q is already active", target.Name)
	}
	return s.append(ctx, target.ID, &events.ConfigurationPromotedV1{ConfigurationID: target.ID,
		PreviousConfigurationID: active.ID, Operator: d.Operator, Reason: d.Reason})
}

// Rollback promotes the configuration that was active before the latest
// promotion, marked as a rollback.
func (s *Service) Rollback(ctx context.Context, d Decision) (Outcome, error) {
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	history, err := s.reader.Promotions(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("read promotions: %w", err)
	}
	if len(history) == 0 {
		return Outcome{}, refuse("nothing to roll back to: no configuration was ever promoted")
	}
	latest := history[len(history)-1]
	active, err := s.reader.ActiveConfiguration(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the active configuration: %w", err)
	}
	if latest.PreviousConfigurationID == active.ID {
		return Outcome{}, refuse("nothing to roll back to: the configuration before the latest promotion is active")
	}
	return s.append(ctx, latest.PreviousConfigurationID, &events.ConfigurationPromotedV1{
		ConfigurationID: latest.PreviousConfigurationID, PreviousConfigurationID: active.ID, Rollback: true,
		Operator: d.Operator, Reason: d.Reason})
}

// ExperimentStart is what `experiments start` asks for.
type ExperimentStart struct {
	Name, Candidate string
	// Control is a configuration name; empty means the active configuration.
	Control string
	// ShareBP is the candidate's share in basis points.
	ShareBP int
	Decision
}

// StartExperiment appends experiment.started.v1 when no experiment runs.
func (s *Service) StartExperiment(ctx context.Context, e ExperimentStart) (Outcome, error) {
	if err := e.check(); err != nil {
		return Outcome{}, err
	}
	if e.ShareBP < 1 || e.ShareBP >= events.MaxShareBasisPoints {
		return Outcome{}, refuse("the candidate's share must be above 0 and below 1")
	}
	running, err := s.reader.RunningExperiment(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the running experiment: %w", err)
	}
	if running != nil {
		return Outcome{}, refuse("experiment %q is running; stop it first", running.Name)
	}
	candidate, err := s.byName(ctx, e.Candidate)
	if err != nil {
		return Outcome{}, err
	}
	var control Configuration
	if e.Control == "" {
		control, err = s.reader.ActiveConfiguration(ctx)
		if err != nil {
			return Outcome{}, fmt.Errorf("read the active configuration: %w", err)
		}
	} else if control, err = s.byName(ctx, e.Control); err != nil {
		return Outcome{}, err
	}
	if control.ID == candidate.ID {
		return Outcome{}, refuse("the candidate %q is the control configuration", candidate.Name)
	}
	p := &events.ExperimentStartedV1{ExperimentID: events.ExperimentID(e.Name), Name: e.Name,
		ControlConfigurationID: control.ID, CandidateConfigurationID: candidate.ID, CandidateShareBP: e.ShareBP,
		Operator: e.Operator, Reason: e.Reason}
	if err := p.Validate(); err != nil {
		return Outcome{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	return s.append(ctx, p.ExperimentID, p)
}

// StopExperiment stops the running experiment.
func (s *Service) StopExperiment(ctx context.Context, d Decision) (Outcome, error) {
	if err := d.check(); err != nil {
		return Outcome{}, err
	}
	running, err := s.reader.RunningExperiment(ctx)
	if err != nil {
		return Outcome{}, fmt.Errorf("read the running experiment: %w", err)
	}
	if running == nil {
		return Outcome{}, refuse("no experiment is running")
	}
	return s.append(ctx, running.ID, &events.ExperimentStoppedV1{ExperimentID: running.ID,
		Operator: d.Operator, Reason: d.Reason})
}

// byName reads a declared configuration ("default" is the default one).
func (s *Service) byName(ctx context.Context, name string) (Configuration, error) {
	if name == "" || hasControl(name) || len(name) > 64 {
		return Configuration{}, refuse("a configuration name is required: at most 64 characters without control characters")
	}
	c, err := s.reader.ConfigurationByName(ctx, name)
	if errors.Is(err, serving.ErrNotFound) {
		return Configuration{}, refuse("configuration %q is not declared (errata configurations declare)", name)
	}
	if err != nil {
		return Configuration{}, fmt.Errorf("read configuration %q: %w", name, err)
	}
	return c, nil
}

func (s *Service) append(ctx context.Context, id string, p events.Payload) (Outcome, error) {
	if err := p.Validate(); err != nil {
		return Outcome{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	ev, err := s.appender.NewEvent(p, "control-"+id, "")
	if err != nil {
		return Outcome{}, err
	}
	pos, err := s.appender.Append(ctx, ev)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Position: pos[0], ID: id}, nil
}

// hasControl reports invalid UTF-8 or any control character (C0, DEL, C1):
// names and reasons are single lines printed to operators' terminals.
func hasControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
