package events

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// TopicInvestigations carries the investigation lifecycle, keyed by
// investigation id so all work on one investigation stays in order.
const TopicInvestigations Topic = "investigations"

// Event type strings of the investigation aggregate.
const (
	TypeInvestigationRequestedV1 = "investigation.requested.v1"
	TypeInvestigationCompletedV1 = "investigation.completed.v1"
	TypeInvestigationFailedV1    = "investigation.failed.v1"
)

// Who asked for an investigation.
const (
	RequestSourceSelector       = "SELECTOR"
	RequestSourceInvestigateNow = "INVESTIGATE_NOW"
)

// InvestigationID is the one investigation of a post version: deriving it
// from the version makes "at most one investigation per version" hold no
// matter how many requests race.
func InvestigationID(postVersionID string) string { return derive("investigation", postVersionID) }

// InvestigationRequestedV1 asks for the investigation of a post version.
// Repeated requests name the same investigation and change nothing.
type InvestigationRequestedV1 struct {
	InvestigationID string `json:"investigation_id"`
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	Platform        string `json:"platform"`
	ExternalID      string `json:"external_id"`
	VersionHash     string `json:"version_hash"`
	Source          string `json:"source"`
	// RequesterKey is the keyed hash of the caller for INVESTIGATE_NOW.
	RequesterKey string `json:"requester_key,omitempty"`
	// UniqueViewScore is the post's score when the selector chose it.
	UniqueViewScore int64 `json:"unique_view_score,omitempty"`
	// ConfigurationID names the analysis configuration the investigation
	// runs under ("": the default configuration); Configuration is its
	// full content, so the request alone says how it must run.
	ConfigurationID string                   `json:"configuration_id,omitempty"`
	Configuration   *AnalysisConfigurationV1 `json:"configuration,omitempty"`
	// Supersedes is the investigation of the same post version this one
	// re-does under another configuration (re-processing). The superseded
	// investigation is never changed.
	Supersedes string `json:"supersedes,omitempty"`
	// ExperimentID and Arm record the experiment that chose the
	// configuration (ExperimentArm of the post version) when one ran.
	ExperimentID string `json:"experiment_id,omitempty"`
	Arm          string `json:"arm,omitempty"`
}

// EventType implements Payload.
func (InvestigationRequestedV1) EventType() string { return TypeInvestigationRequestedV1 }

// Validate implements Payload.
func (p InvestigationRequestedV1) Validate() error {
	var errs []error
	if !ValidPlatform(p.Platform) {
		errs = append(errs, fmt.Errorf("platform %q is unknown", p.Platform))
	}
	if p.PostID != PostID(p.Platform, p.ExternalID) {
		errs = append(errs, errors.New("post_id does not derive from platform and external_id"))
	}
	if p.PostVersionID != PostVersionID(p.PostID, p.VersionHash) {
		errs = append(errs, errors.New("post_version_id does not derive from post_id and version_hash"))
	}
	if p.InvestigationID != InvestigationIDFor(p.PostVersionID, p.ConfigurationID) {
		errs = append(errs, errors.New("investigation_id does not derive from post_version_id and configuration_id"))
	}
	switch {
	case p.ConfigurationID == DefaultConfigurationID && p.Configuration != nil:
		errs = append(errs, errors.New("the default configuration carries no configuration"))
	case p.ConfigurationID != DefaultConfigurationID && p.Configuration == nil:
		errs = append(errs, errors.New("configuration is required with configuration_id"))
	case p.Configuration != nil:
		if err := p.Configuration.Validate(); err != nil {
			errs = append(errs, err)
		} else if ConfigurationID(*p.Configuration) != p.ConfigurationID {
			errs = append(errs, errors.New("configuration_id does not derive from the configuration"))
		}
	}
	if p.Supersedes != "" && (!validUUID(p.Supersedes) || p.Supersedes == p.InvestigationID) {
		errs = append(errs, errors.New("supersedes must be the UUID of another investigation"))
	}
	switch {
	case p.ExperimentID == "" && p.Arm == "":
	case validUUID(p.ExperimentID) && (p.Arm == ArmControl || p.Arm == ArmCandidate):
	default:
		errs = append(errs, fmt.Errorf("experiment_id must be a UUID with arm %s or %s (got %q)", ArmControl, ArmCandidate, p.Arm))
	}
	switch p.Source {
	case RequestSourceSelector, RequestSourceInvestigateNow, RequestSourceReprocess:
	default:
		errs = append(errs, fmt.Errorf("source %q is unknown", p.Source))
	}
	if p.RequesterKey != "" && !isSHA256Hex(p.RequesterKey) {
		errs = append(errs, errors.New("requester_key is not a sha256 hex digest"))
	}
	return errors.Join(errs...)
}

// ClaimID is the identity of the n-th (0-based) published claim of an investigation.
func ClaimID(investigationID string, n int) string {
	return derive("claim", investigationID, strconv.Itoa(n))
}

// SourceV1 is evidence for a claim.
type SourceV1 struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// ClaimV1 is one published (validator-approved) incorrect claim: a verbatim
// quote of the post with context, why it is wrong, and the evidence.
type ClaimV1 struct {
	ID        string     `json:"id"`
	Text      string     `json:"text"`
	Context   string     `json:"context"`
	Summary   string     `json:"summary"`
	Reasoning string     `json:"reasoning"`
	Sources   []SourceV1 `json:"sources"`
	// SubmissionID names the submission the claim was published from, whose
	// claim_assessed event holds its evidence assessment (absent for claims
	// retained from a prior investigation and in events written before
	// assessments existed).
	SubmissionID string `json:"submission_id,omitempty"`
}

func (c ClaimV1) validate(investigationID string, n int) error {
	var errs []error
	if c.ID != ClaimID(investigationID, n) {
		errs = append(errs, fmt.Errorf("claim %d: id does not derive from the investigation and position", n))
	}
	// In a fixed order: a parked event's reason must be the same on replay.
	for _, f := range []struct{ name, v string }{
		{"text", c.Text}, {"context", c.Context}, {"summary", c.Summary}, {"reasoning", c.Reasoning},
	} {
		if f.v == "" {
			errs = append(errs, fmt.Errorf("claim %d: %s is empty", n, f.name))
		}
	}
	if len(c.Sources) == 0 {
		errs = append(errs, fmt.Errorf("claim %d: no sources", n))
	}
	if c.SubmissionID != "" && !validUUID(c.SubmissionID) {
		errs = append(errs, fmt.Errorf("claim %d: submission_id must be a UUID", n))
	}
	for i, src := range c.Sources {
		u, err := url.Parse(src.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("claim %d source %d: url is not absolute http(s)", n, i))
		}
		if src.Title == "" || src.Snippet == "" {
			errs = append(errs, fmt.Errorf("claim %d source %d: title and snippet are required", n, i))
		}
	}
	return errors.Join(errs...)
}

// InvestigationCompletedV1 publishes an investigation's result: the claims
// that passed validation (possibly none), and what produced them.
type InvestigationCompletedV1 struct {
	InvestigationID string `json:"investigation_id"`
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	// Provenance of the content the investigation read (its input snapshot).
	Provenance    string    `json:"provenance"`
	PromptVersion string    `json:"prompt_version"`
	Provider      string    `json:"provider"`
	Model         string    `json:"model"`
	Claims        []ClaimV1 `json:"claims"`
	// Series and Attempt name the attempt that produced the result (absent
	// in events written before attempts were recorded).
	Series  int `json:"series,omitempty"`
	Attempt int `json:"attempt,omitempty"`
	// ConfigurationID is the investigation's configuration ("": default).
	ConfigurationID string `json:"configuration_id,omitempty"`
}

// EventType implements Payload.
func (InvestigationCompletedV1) EventType() string { return TypeInvestigationCompletedV1 }

// Validate implements Payload.
func (p InvestigationCompletedV1) Validate() error {
	errs := []error{validateInvestigationRef(p.InvestigationID, p.PostID, p.PostVersionID, p.ConfigurationID, p.Provenance)}
	if p.PromptVersion == "" || p.Provider == "" || p.Model == "" {
		errs = append(errs, errors.New("prompt_version, provider and model are required"))
	}
	if p.Claims == nil {
		errs = append(errs, errors.New("claims must be an array"))
	}
	for i, c := range p.Claims {
		errs = append(errs, c.validate(p.InvestigationID, i))
	}
	return errors.Join(errs...)
}

// InvestigationFailedV1 ends an attempt series without a result. Only an
// explicit investigateNow starts a new series; the selector never retries.
type InvestigationFailedV1 struct {
	InvestigationID string `json:"investigation_id"`
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	Provenance      string `json:"provenance"`
	Reason          string `json:"reason"`
	Attempts        int    `json:"attempts"`
	// Series is the attempt series the failure ends (absent in events
	// written before attempt series were recorded: the current one).
	Series int `json:"series,omitempty"`
	// ConfigurationID is the investigation's configuration ("": default).
	ConfigurationID string `json:"configuration_id,omitempty"`
}

// EventType implements Payload.
func (InvestigationFailedV1) EventType() string { return TypeInvestigationFailedV1 }

// Validate implements Payload.
func (p InvestigationFailedV1) Validate() error {
	errs := []error{validateInvestigationRef(p.InvestigationID, p.PostID, p.PostVersionID, p.ConfigurationID, p.Provenance)}
	if p.Reason == "" {
		errs = append(errs, errors.New("reason is empty"))
	}
	if p.Attempts < 0 {
		errs = append(errs, errors.New("attempts is negative"))
	}
	return errors.Join(errs...)
}

func validateInvestigationRef(investigationID, postID, postVersionID, configurationID, provenance string) error {
	var errs []error
	if !validUUID(postID) || !validUUID(postVersionID) {
		errs = append(errs, errors.New("post_id and post_version_id must be UUIDs"))
	}
	if !validConfigurationRef(configurationID) {
		errs = append(errs, errors.New("configuration_id must be a UUID or empty (the default configuration)"))
	}
	if investigationID != InvestigationIDFor(postVersionID, configurationID) {
		errs = append(errs, errors.New("investigation_id does not derive from post_version_id and configuration_id"))
	}
	switch provenance {
	case ProvenanceServerVerified, ProvenanceClientFallback:
	default:
		errs = append(errs, fmt.Errorf("provenance %q is unknown", provenance))
	}
	return errors.Join(errs...)
}
