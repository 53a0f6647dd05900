package events

import (
	"errors"
	"fmt"
	"time"
)

// TopicAnalyses carries verdict analyses: a post's or a submission's
// claims extracted, triaged, researched and judged, and the verdict for the
// whole. Keyed by analysis id, so one analysis's steps stay in order.
const TopicAnalyses Topic = "analyses"

// Event types of the analysis aggregate.
const (
	TypeAnalysisRequestedV1        = "analysis.requested.v1"
	TypeAnalysisAttemptStartedV1   = "analysis.attempt_started.v1"
	TypeAnalysisExchangeRecordedV1 = "analysis.exchange_recorded.v1"
	TypeAnalysisClaimExtractedV1   = "analysis.claim_extracted.v1"
	TypeAnalysisClaimTriagedV1     = "analysis.claim_triaged.v1"
	TypeAnalysisQueryIssuedV1      = "analysis.query_issued.v1"
	TypeAnalysisSourceAssessedV1   = "analysis.source_assessed.v1"
	TypeAnalysisClaimVerdictV1     = "analysis.claim_verdict.v1"
	TypeAnalysisPostVerdictV1      = "analysis.post_verdict.v1"
	TypeAnalysisCompletedV1        = "analysis.completed.v1"
	TypeAnalysisFailedV1           = "analysis.failed.v1"
)

// AnalysisTypeVerdict is the verdict analysis: a label and confidence for a
// whole post or submission (beside the inline investigation).
const AnalysisTypeVerdict = "VERDICT"

// What an analysis reads.
const (
	AnalysisInputPost = "POST" // a registered post version
	AnalysisInputText = "TEXT" // text submitted to the workbench or the API
	AnalysisInputURL  = "URL"  // a page the server fetched for a submission
)

// Who asked.
const (
	AnalysisSourceExtension = "EXTENSION"
	AnalysisSourceWorkbench = "WORKBENCH"
	AnalysisSourceAPI       = "API"
)

// Triage kinds (FactHarbor's Gate 1).
const (
	TriageFactual    = "FACTUAL"
	TriageOpinion    = "OPINION"
	TriagePrediction = "PREDICTION"
	TriageNotAClaim  = "NOT_A_CLAIM"
)

// factSocial's seven post labels.
const (
	LabelTrue         = "True"
	LabelMostlyTrue   = "MostlyTrue"
	LabelMixed        = "Mixed"
	LabelMisleading   = "Misleading"
	LabelFalse        = "False"
	LabelUnverifiable = "Unverifiable"
	LabelOpinion      = "Opinion"
)

// Labels lists factSocial's labels.
var Labels = []string{LabelTrue, LabelMostlyTrue, LabelMixed, LabelMisleading, LabelFalse, LabelUnverifiable, LabelOpinion}

// FactHarbor's truth-percentage bands.
const (
	BandTrue         = "TRUE"          // 86-100
	BandMostlyTrue   = "MOSTLY-TRUE"   // 72-85
	BandLeaningTrue  = "LEANING-TRUE"  // 58-71
	BandMixed        = "MIXED"         // 43-57, confidence >= 45
	BandUnverified   = "UNVERIFIED"    // 43-57, confidence < 45
	BandLeaningFalse = "LEANING-FALSE" // 29-42
	BandMostlyFalse  = "MOSTLY-FALSE"  // 15-28
	BandFalse        = "FALSE"         // 0-14
)

// Bands lists FactHarbor's bands, truest first.
var Bands = []string{BandTrue, BandMostlyTrue, BandLeaningTrue, BandMixed, BandUnverified, BandLeaningFalse, BandMostlyFalse, BandFalse}

// AnalysisContentKey names the content an analysis reads: the post version
// for a post, else the sha256 of the normalised submitted text.
func AnalysisContentKey(inputKind, postVersionID, contentSHA256 string) string {
	if inputKind == AnalysisInputPost {
		return "post-version:" + postVersionID
	}
	return "content:" + contentSHA256
}

// AnalysisID is the one analysis of a content version under an analysis
// type and prompt version: repeated requests, however many race, name the
// same analysis.
func AnalysisID(contentKey, analysisType, promptVersion string) string {
	return derive("analysis", contentKey, analysisType, promptVersion)
}

// AnalysisClaimID is the identity of the n-th (0-based) extracted claim of
// an analysis attempt.
func AnalysisClaimID(analysisID string, attempt, n int) string {
	return derive("analysis-claim", analysisID, fmt.Sprint(attempt), fmt.Sprint(n))
}

// AnalysisRequestedV1 asks for a verdict analysis. The first request of an
// analysis id starts it; later ones change nothing.
type AnalysisRequestedV1 struct {
	AnalysisID    string `json:"analysis_id"`
	AnalysisType  string `json:"analysis_type"`
	PromptVersion string `json:"prompt_version"`
	InputKind     string `json:"input_kind"`
	// For POST: the registered version (Platform, ExternalID, PostID,
	// PostVersionID); URL is the post's or the submitted page's address.
	Platform      string `json:"platform,omitempty"`
	ExternalID    string `json:"external_id,omitempty"`
	PostID        string `json:"post_id,omitempty"`
	PostVersionID string `json:"post_version_id,omitempty"`
	URL           string `json:"url,omitempty"`
	// Title of the page, when known.
	Title string `json:"title,omitempty"`
	// Text is the normalised text analysed (at most 32,000 characters);
	// ContentSHA256 its hash.
	Text          string `json:"text"`
	ContentSHA256 string `json:"content_sha256"`
	Source        string `json:"source"`
	// RequesterKey is the keyed hash of the caller.
	RequesterKey string `json:"requester_key,omitempty"`
}

// MaxAnalysisTextRunes bounds the text of an analysis.
const MaxAnalysisTextRunes = 32000

// EventType implements Payload.
func (AnalysisRequestedV1) EventType() string { return TypeAnalysisRequestedV1 }

// Validate implements Payload.
func (p AnalysisRequestedV1) Validate() error {
	var errs []error
	if p.AnalysisType != AnalysisTypeVerdict {
		errs = append(errs, fmt.Errorf("analysis_type %q is unknown", p.AnalysisType))
	}
	if p.PromptVersion == "" {
		errs = append(errs, errors.New("prompt_version is required"))
	}
	if !isSHA256Hex(p.ContentSHA256) {
		errs = append(errs, errors.New("content_sha256 is not a sha256 hex digest"))
	}
	switch p.InputKind {
	case AnalysisInputPost:
		if !ValidPlatform(p.Platform) || p.PostID != PostID(p.Platform, p.ExternalID) || !validUUID(p.PostVersionID) {
			errs = append(errs, errors.New("a POST analysis needs a known platform, its post id and a post version id"))
		}
	case AnalysisInputText, AnalysisInputURL:
		if p.PostVersionID != "" {
			errs = append(errs, errors.New("a submission has no post version"))
		}
		if p.InputKind == AnalysisInputURL && p.URL == "" {
			errs = append(errs, errors.New("a URL analysis needs its url"))
		}
	default:
		errs = append(errs, fmt.Errorf("input_kind %q is unknown", p.InputKind))
	}
	if p.AnalysisID != AnalysisID(AnalysisContentKey(p.InputKind, p.PostVersionID, p.ContentSHA256), p.AnalysisType, p.PromptVersion) {
		errs = append(errs, errors.New("analysis_id does not derive from the content, type and prompt version"))
	}
	if p.Text == "" || len([]rune(p.Text)) > MaxAnalysisTextRunes {
		errs = append(errs, fmt.Errorf("text must have 1 to %d characters", MaxAnalysisTextRunes))
	}
	switch p.Source {
	case AnalysisSourceExtension, AnalysisSourceWorkbench, AnalysisSourceAPI:
	default:
		errs = append(errs, fmt.Errorf("source %q is unknown", p.Source))
	}
	return errors.Join(errs...)
}

// AnalysisRef names one attempt of an analysis (attempts start at 1).
type AnalysisRef struct {
	AnalysisID string `json:"analysis_id"`
	Attempt    int    `json:"attempt"`
}

func (r AnalysisRef) validate() error {
	if !validUUID(r.AnalysisID) || r.Attempt < 1 || r.Attempt > maxAttemptNumber {
		return fmt.Errorf("analysis_id must be a UUID and attempt in 1..%d", maxAttemptNumber)
	}
	return nil
}

// AnalysisAttemptStartedV1 starts an attempt: who runs it, with which
// prompts, model and versions.
type AnalysisAttemptStartedV1 struct {
	AnalysisRef
	Worker          string        `json:"worker"`
	Prompts         []PromptRefV1 `json:"prompts"`
	Provider        string        `json:"provider"`
	Model           string        `json:"model"`
	RegistryVersion string        `json:"registry_version"`
	PolicyVersion   string        `json:"policy_version"`
	// RubricVersion names the confidence rubric and its caps.
	RubricVersion string `json:"rubric_version"`
	// Search names the web search that researches the claims
	// ("searxng", "brave", "tavily"), or "none" when none is configured:
	// then no query is issued and the confidence caps count every claim
	// as unsearched. Empty in events from before the field.
	Search string `json:"search,omitempty"`
}

// EventType implements Payload.
func (AnalysisAttemptStartedV1) EventType() string { return TypeAnalysisAttemptStartedV1 }

// Validate implements Payload.
func (p AnalysisAttemptStartedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if p.Worker == "" || p.Provider == "" || p.Model == "" || p.RegistryVersion == "" || p.PolicyVersion == "" || p.RubricVersion == "" {
		errs = append(errs, errors.New("worker, provider, model, registry, policy and rubric versions are required"))
	}
	for _, pr := range p.Prompts {
		errs = append(errs, pr.validate())
	}
	return errors.Join(errs...)
}

// AnalysisExchangeRecordedV1 is one model exchange of an analysis, with
// the exact bytes, so a replay never asks the provider again. Step is
// "extract", "stance" or "verdict".
type AnalysisExchangeRecordedV1 struct {
	AnalysisRef
	Step        string      `json:"step"`
	Seq         int         `json:"seq"`
	Prompt      PromptRefV1 `json:"prompt"`
	Provider    string      `json:"provider"`
	Model       string      `json:"model"`
	HTTPStatus  int         `json:"http_status"`
	DurationMS  int64       `json:"duration_ms"`
	RawRequest  string      `json:"raw_request"`
	RawResponse string      `json:"raw_response"`
	Usage       UsageV1     `json:"usage"`
	Error       string      `json:"error,omitempty"`
}

// EventType implements Payload.
func (AnalysisExchangeRecordedV1) EventType() string { return TypeAnalysisExchangeRecordedV1 }

// Validate implements Payload.
func (p AnalysisExchangeRecordedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate(), p.Prompt.validate()}
	switch p.Step {
	case "extract", "stance", "verdict":
	default:
		errs = append(errs, fmt.Errorf("step %q is unknown", p.Step))
	}
	if p.Provider == "" || p.Model == "" || p.RawRequest == "" || p.Seq < 0 {
		errs = append(errs, errors.New("provider, model and raw_request are required"))
	}
	return errors.Join(errs...)
}

// AnalysisClaimExtractedV1 is one claim found in the analysed text.
type AnalysisClaimExtractedV1 struct {
	AnalysisRef
	ClaimID string `json:"claim_id"`
	Index   int    `json:"index"`
	Text    string `json:"text"`
	// Context is the sentence or passage around it; Subject the names its
	// pronouns stand for, when the extraction resolved any.
	Context string `json:"context"`
}

// EventType implements Payload.
func (AnalysisClaimExtractedV1) EventType() string { return TypeAnalysisClaimExtractedV1 }

// Validate implements Payload.
func (p AnalysisClaimExtractedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if p.Index < 0 || p.ClaimID != AnalysisClaimID(p.AnalysisID, p.Attempt, p.Index) {
		errs = append(errs, errors.New("claim_id must derive from the attempt and index"))
	}
	if p.Text == "" {
		errs = append(errs, errors.New("text is empty"))
	}
	return errors.Join(errs...)
}

// AnalysisClaimTriagedV1 is Gate 1's decision on a claim: what kind of
// statement it is, how specific, and whether it is researched.
type AnalysisClaimTriagedV1 struct {
	AnalysisRef
	ClaimID     string  `json:"claim_id"`
	Kind        string  `json:"kind"`
	Specificity float64 `json:"specificity"`
	// TimeSensitive: the claim's truth depends on when it is read;
	// CurrentEvents: it is about recent events; Numeric: it states a
	// specific number or date. The confidence caps read these.
	TimeSensitive bool `json:"time_sensitive"`
	CurrentEvents bool `json:"current_events"`
	Numeric       bool `json:"numeric"`
	// Researched says whether the claim goes on to research (factual and
	// specific enough); Reason why not.
	Researched bool   `json:"researched"`
	Reason     string `json:"reason"`
}

// EventType implements Payload.
func (AnalysisClaimTriagedV1) EventType() string { return TypeAnalysisClaimTriagedV1 }

// Validate implements Payload.
func (p AnalysisClaimTriagedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if !validUUID(p.ClaimID) {
		errs = append(errs, errors.New("claim_id must be a UUID"))
	}
	switch p.Kind {
	case TriageFactual, TriageOpinion, TriagePrediction, TriageNotAClaim:
	default:
		errs = append(errs, fmt.Errorf("kind %q is unknown", p.Kind))
	}
	if !probability(p.Specificity) {
		errs = append(errs, errors.New("specificity must be in [0, 1]"))
	}
	if p.Reason == "" {
		errs = append(errs, errors.New("reason is required"))
	}
	return errors.Join(errs...)
}

// SearchResultV1 is one search result as returned.
type SearchResultV1 struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Snippet     string `json:"snippet"`
	PublishedAt string `json:"published_at,omitempty"`
}

// AnalysisQueryIssuedV1 is one search query for a claim and its top results.
type AnalysisQueryIssuedV1 struct {
	AnalysisRef
	ClaimID string           `json:"claim_id"`
	Query   string           `json:"query"`
	Kind    string           `json:"kind"`
	Results []SearchResultV1 `json:"results"`
	Error   string           `json:"error,omitempty"`
}

// EventType implements Payload.
func (AnalysisQueryIssuedV1) EventType() string { return TypeAnalysisQueryIssuedV1 }

// Validate implements Payload.
func (p AnalysisQueryIssuedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if !validUUID(p.ClaimID) || p.Query == "" || p.Results == nil {
		errs = append(errs, errors.New("claim_id, query and results are required"))
	}
	if p.Kind != "keyword" && p.Kind != "timeline" {
		errs = append(errs, fmt.Errorf("kind %q is unknown", p.Kind))
	}
	return errors.Join(errs...)
}

// AnalysisSourceAssessedV1 is one passage judged for a claim: its source
// tier and stance as they enter the claim's verdict.
type AnalysisSourceAssessedV1 struct {
	AnalysisRef
	ClaimID string           `json:"claim_id"`
	Source  AssessedSourceV1 `json:"source"`
}

// EventType implements Payload.
func (AnalysisSourceAssessedV1) EventType() string { return TypeAnalysisSourceAssessedV1 }

// Validate implements Payload.
func (p AnalysisSourceAssessedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if !validUUID(p.ClaimID) {
		errs = append(errs, errors.New("claim_id must be a UUID"))
	}
	s := p.Source
	if s.URL == "" || s.Domain == "" || s.Tier < 1 || s.Tier > 5 ||
		!probability(s.Entail) || !probability(s.Contradict) || !probability(s.Neutral) || !probability(s.Recency) {
		errs = append(errs, errors.New("source needs url, domain, tier 1-5 and probabilities in [0, 1]"))
	}
	return errors.Join(errs...)
}

// CapV1 is one confidence cap the rubric applied: its rule, the cap and
// the confidence before it.
type CapV1 struct {
	Rule   string `json:"rule"`
	Cap    int    `json:"cap"`
	Before int    `json:"before"`
}

// AnalysisClaimVerdictV1 is a claim's verdict: the evidence engine's
// judgement (features, score, verdict, Gate 4) and the truth percentage,
// confidence and labels derived from it.
type AnalysisClaimVerdictV1 struct {
	AnalysisRef
	ClaimID string `json:"claim_id"`

	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	CMax     float64 `json:"c_max"`
	AgreeDom int     `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	NumOK    int     `json:"num_ok"`
	Score    int     `json:"score"`
	Verdict  string  `json:"verdict"`
	Gate4    string  `json:"gate4"`

	TruthPercent int     `json:"truth_percent"`
	Confidence   int     `json:"confidence"`
	Caps         []CapV1 `json:"caps"`
	Label        string  `json:"label"`
	Band         string  `json:"band"`
	Summary      string  `json:"summary"`
}

// EventType implements Payload.
func (AnalysisClaimVerdictV1) EventType() string { return TypeAnalysisClaimVerdictV1 }

// Validate implements Payload.
func (p AnalysisClaimVerdictV1) Validate() error {
	errs := []error{p.AnalysisRef.validate(), validateVerdictNumbers(p.TruthPercent, p.Confidence, p.Label, p.Band, p.Caps)}
	if !validUUID(p.ClaimID) {
		errs = append(errs, errors.New("claim_id must be a UUID"))
	}
	switch p.Verdict {
	case EvidenceSupported, EvidenceRefuted, EvidenceContested, EvidenceNotEnough, "":
	default:
		errs = append(errs, fmt.Errorf("verdict %q is unknown", p.Verdict))
	}
	return errors.Join(errs...)
}

// VerdictSourceV1 is a source of a post verdict, with its tier.
type VerdictSourceV1 struct {
	URL    string `json:"url"`
	Title  string `json:"title"`
	Domain string `json:"domain"`
	Tier   int    `json:"tier"`
	// FromSearch: the model omitted it and it was filled from the search
	// results.
	FromSearch bool `json:"from_search"`
}

// AnalysisPostVerdictV1 is the verdict for the whole post or submission,
// on both scales, with the rubric's caps, a summary, caveats and sources.
type AnalysisPostVerdictV1 struct {
	AnalysisRef
	TruthPercent int               `json:"truth_percent"`
	Confidence   int               `json:"confidence"`
	Caps         []CapV1           `json:"caps"`
	Label        string            `json:"label"`
	Band         string            `json:"band"`
	Summary      string            `json:"summary"`
	Caveats      []string          `json:"caveats"`
	Sources      []VerdictSourceV1 `json:"sources"`
	Claims       int               `json:"claims"`
}

// EventType implements Payload.
func (AnalysisPostVerdictV1) EventType() string { return TypeAnalysisPostVerdictV1 }

// Validate implements Payload.
func (p AnalysisPostVerdictV1) Validate() error {
	errs := []error{p.AnalysisRef.validate(), validateVerdictNumbers(p.TruthPercent, p.Confidence, p.Label, p.Band, p.Caps)}
	if p.Summary == "" || p.Caveats == nil || p.Sources == nil {
		errs = append(errs, errors.New("summary, caveats and sources are required"))
	}
	return errors.Join(errs...)
}

func validateVerdictNumbers(truth, confidence int, label, band string, caps []CapV1) error {
	var errs []error
	if truth < 0 || truth > 100 || confidence < 0 || confidence > 100 {
		errs = append(errs, errors.New("truth_percent and confidence must be in 0..100"))
	}
	if !contains(Labels, label) {
		errs = append(errs, fmt.Errorf("label %q is unknown", label))
	}
	if !contains(Bands, band) {
		errs = append(errs, fmt.Errorf("band %q is unknown", band))
	}
	if caps == nil {
		errs = append(errs, errors.New("caps must be an array"))
	}
	return errors.Join(errs...)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// AnalysisCompletedV1 ends an analysis with its verdict.
type AnalysisCompletedV1 struct {
	AnalysisRef
	Claims     int `json:"claims"`
	Researched int `json:"researched"`
}

// EventType implements Payload.
func (AnalysisCompletedV1) EventType() string { return TypeAnalysisCompletedV1 }

// Validate implements Payload.
func (p AnalysisCompletedV1) Validate() error {
	errs := []error{p.AnalysisRef.validate()}
	if p.Claims < 0 || p.Researched < 0 || p.Researched > p.Claims {
		errs = append(errs, errors.New("claims and researched must be counts, researched <= claims"))
	}
	return errors.Join(errs...)
}

// AnalysisFailedV1 ends an attempt without a verdict. Retryable says
// whether a later attempt follows.
type AnalysisFailedV1 struct {
	AnalysisRef
	Reason    string `json:"reason"`
	Retryable bool   `json:"retryable"`
	// RetryAt (RFC 3339) is when the next attempt may start, for a
	// retryable failure; empty: at once.
	RetryAt string `json:"retry_at,omitempty"`
}

// EventType implements Payload.
func (AnalysisFailedV1) EventType() string { return TypeAnalysisFailedV1 }

// Validate implements Payload.
func (p AnalysisFailedV1) Validate() error {
	return errors.Join(p.AnalysisRef.validate(), validateAttemptFailure(p.Reason, p.Retryable, p.RetryAt))
}

// validateAttemptFailure checks what every failed attempt carries: a
// reason, and a retry time (RFC 3339) only on a retryable failure.
func validateAttemptFailure(reason string, retryable bool, retryAt string) error {
	var errs []error
	if reason == "" {
		errs = append(errs, errors.New("reason is required"))
	}
	if retryAt != "" {
		if _, err := time.Parse(time.RFC3339Nano, retryAt); err != nil || !retryable {
			errs = append(errs, errors.New("retry_at must be an RFC 3339 time, and only on a retryable failure"))
		}
	}
	return errors.Join(errs...)
}
