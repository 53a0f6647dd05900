package events

import (
	"errors"
	"fmt"
	"math"
	"net/url"
)

// TypeInvestigationClaimAssessedV1 is the evidence engine's judgement of
// one approved submission.
const TypeInvestigationClaimAssessedV1 = "investigation.claim_assessed.v1"

// Evidence verdicts, Gate 4 levels and publish modes as recorded (the
// engine in consumers/evidence defines their meaning).
const (
	EvidenceSupported = "SUPPORTED"
	EvidenceRefuted   = "REFUTED"
	EvidenceContested = "CONTESTED"
	EvidenceNotEnough = "NOT_ENOUGH_EVIDENCE"
)

// AssessedSourceV1 is one passage the engine read, with its source tier,
// stance and checks exactly as they entered the judgement.
type AssessedSourceV1 struct {
	URL    string `json:"url"`
	Domain string `json:"domain"`
	Tier   int    `json:"tier"`
	Rule   string `json:"rule"`
	Title  string `json:"title"`
	// Snippet is the passage the stance was judged on.
	Snippet string `json:"snippet"`
	// PublishedAt is RFC 3339, empty when unknown.
	PublishedAt string  `json:"published_at,omitempty"`
	Origin      string  `json:"origin"`
	Entail      float64 `json:"entail"`
	Contradict  float64 `json:"contradict"`
	Neutral     float64 `json:"neutral"`
	// StanceNote says why a stance is the neutral default (a provider
	// answer that broke the schema, a passage left out of the batch).
	StanceNote string  `json:"stance_note,omitempty"`
	Num        string  `json:"num,omitempty"`
	Recency    float64 `json:"recency"`
}

// DroppedSourceV1 is a source the engine did not read, and why (an URL
// that does not parse, a host without a public suffix, a duplicate).
type DroppedSourceV1 struct {
	URL    string `json:"url"`
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

// EvidenceQueryV1 is one query of our own search for a claim.
type EvidenceQueryV1 struct {
	Query string `json:"query"`
	// Kind is "keyword" or "timeline" (causal claims only).
	Kind string `json:"kind"`
	// Results is how many results it returned; Error why it failed.
	Results int    `json:"results"`
	Error   string `json:"error,omitempty"`
}

// InvestigationClaimAssessedV1 records the evidence engine's judgement of
// one submission the validator decided: the sources with tiers and
// stances, Tsao's features and score, the verdict, Gate 4, the registry
// and policy versions, and whether the claim is published or withheld
// (and why). Projections read it; a replay never asks a provider again.
type InvestigationClaimAssessedV1 struct {
	AttemptRef
	SubmissionID string `json:"submission_id"`

	Causal  bool               `json:"causal"`
	Queries []EvidenceQueryV1  `json:"queries"`
	Sources []AssessedSourceV1 `json:"sources"`
	Dropped []DroppedSourceV1  `json:"dropped"`

	// Stance came from this provider and model under this prompt (empty
	// when no passage needed one).
	StanceProvider string       `json:"stance_provider,omitempty"`
	StanceModel    string       `json:"stance_model,omitempty"`
	StancePrompt   *PromptRefV1 `json:"stance_prompt,omitempty"`

	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	CMax     float64 `json:"c_max"`
	AgreeDom int     `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	NumOK    int     `json:"num_ok"`
	Raw      float64 `json:"raw"`
	Score    int     `json:"score"`
	Verdict  string  `json:"verdict"`

	Gate4          string  `json:"gate4"`
	Gate4Sources   int     `json:"gate4_sources"`
	Gate4Quality   float64 `json:"gate4_quality"`
	Gate4Agreement float64 `json:"gate4_agreement"`

	RegistryVersion string `json:"registry_version"`
	PolicyVersion   string `json:"policy_version"`
	PublishMode     string `json:"publish_mode"`

	// Published says whether the claim is shown to readers; Reason is
	// "published" or the first rule that failed, Failed every failed rule.
	Published bool     `json:"published"`
	Reason    string   `json:"reason"`
	Failed    []string `json:"failed"`
}

// EventType implements Payload.
func (InvestigationClaimAssessedV1) EventType() string { return TypeInvestigationClaimAssessedV1 }

// Validate implements Payload.
func (p InvestigationClaimAssessedV1) Validate() error {
	errs := []error{p.AttemptRef.validate()}
	if !validUUID(p.SubmissionID) {
		errs = append(errs, errors.New("submission_id must be a UUID"))
	}
	if p.Queries == nil || p.Sources == nil || p.Dropped == nil || p.Failed == nil {
		errs = append(errs, errors.New("queries, sources, dropped and failed must be arrays"))
	}
	for i, s := range p.Sources {
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("source %d: url is not absolute http(s)", i))
		}
		if s.Tier < 1 || s.Tier > 5 || s.Domain == "" || s.Rule == "" {
			errs = append(errs, fmt.Errorf("source %d: tier 1-5, domain and rule are required", i))
		}
		if !probability(s.Entail) || !probability(s.Contradict) || !probability(s.Neutral) || !probability(s.Recency) {
			errs = append(errs, fmt.Errorf("source %d: stance and recency must be in [0, 1]", i))
		}
	}
	for _, v := range []float64{p.EMax, p.EMean3, p.CMax, p.RelAvg, p.RecMax, p.Gate4Quality, p.Gate4Agreement} {
		if !probability(v) {
			errs = append(errs, errors.New("features, gate4 quality and agreement must be in [0, 1]"))
			break
		}
	}
	if p.Score < 0 || p.Score > 100 || math.IsNaN(p.Raw) || math.IsInf(p.Raw, 0) {
		errs = append(errs, errors.New("score must be in 0..100 and raw finite"))
	}
	switch p.Verdict {
	case EvidenceSupported, EvidenceRefuted, EvidenceContested, EvidenceNotEnough:
	default:
		errs = append(errs, fmt.Errorf("verdict %q is unknown", p.Verdict))
	}
	switch p.Gate4 {
	case "HIGH", "MEDIUM", "LOW", "INSUFFICIENT":
	default:
		errs = append(errs, fmt.Errorf("gate4 %q is unknown", p.Gate4))
	}
	if p.RegistryVersion == "" || p.PolicyVersion == "" || p.PublishMode == "" || p.Reason == "" {
		errs = append(errs, errors.New("registry_version, policy_version, publish_mode and reason are required"))
	}
	if p.Published != (p.Reason == "published") {
		errs = append(errs, errors.New("reason must be \"published\" exactly when published"))
	}
	return errors.Join(errs...)
}

func probability(v float64) bool { return !math.IsNaN(v) && v >= 0 && v <= 1 }
