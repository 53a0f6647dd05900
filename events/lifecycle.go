package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

func sha256Of(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func parseRFC3339(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Event types of an investigation's run: everything between the request and
// the terminal completed/failed event. Together they are the audit trail of
// an investigation: what was read, what was sent to which model, what came
// back, and what the validator decided about every claim.
const (
	TypeInvestigationInputSnapshottedV1 = "investigation.input_snapshotted.v1"
	TypeInvestigationAttemptStartedV1   = "investigation.attempt_started.v1"
	TypeInvestigationExchangeRecordedV1 = "investigation.exchange_recorded.v1"
	TypeInvestigationClaimSubmittedV1   = "investigation.claim_submitted.v1"
	TypeInvestigationClaimRetainedV1    = "investigation.claim_retained.v1"
	TypeInvestigationClaimValidatedV1   = "investigation.claim_validated.v1"
	TypeInvestigationAttemptFailedV1    = "investigation.attempt_failed.v1"
	TypeInvestigationStageOneFinishedV1 = "investigation.stage_one_finished.v1"
	TypeInvestigationKeyAttachedV1      = "investigation.user_key_attached.v1"
)

// maxAttemptNumber bounds attempt numbers in events (the worker's own
// limit, 4 by default, is configuration).
const maxAttemptNumber = 64

// Formats of an investigation input.
const (
	InputFormatMarkdown = "MARKDOWN"
	InputFormatText     = "TEXT"
)

// Sources of the Markdown of an input.
const (
	MarkdownSourceServerHTML = "SERVER_HTML"
	MarkdownSourceClientHTML = "CLIENT_HTML"
	MarkdownSourceNone       = "NONE"
)

// Stages of an LLM exchange.
const (
	StageInvestigator = "INVESTIGATOR"
	StageValidator    = "VALIDATOR"
	// StageAssessor is the evidence engine's stance calls for one claim.
	StageAssessor = "ASSESSOR"
)

// Failure classes of an attempt.
const (
	FailureTransient    = "TRANSIENT"
	FailureNonRetryable = "NON_RETRYABLE"
)

// Claim submission dispositions: only ACCEPTED submissions go to the
// validator; the others are recorded for the audit and never published.
const (
	DispositionAccepted        = "ACCEPTED"
	DispositionNotVerbatim     = "REJECTED_NOT_VERBATIM"
	DispositionDuplicate       = "REJECTED_DUPLICATE"
	DispositionInvalidRetain   = "REJECTED_UNKNOWN_PRIOR"
	DispositionRetainNotInText = "REJECTED_PRIOR_NOT_IN_TEXT"
)

// Validation outcomes.
const (
	ValidationApproved = "APPROVED"
	ValidationRejected = "REJECTED"
	// ValidationError: the validator could not reach a verdict (provider
	// failures); the claim is withheld, as a rejection would be.
	ValidationError = "ERROR"
)

// AttemptRef names one attempt of one attempt series of an investigation.
// Series starts at 1 and grows when an explicit investigateNow restarts a
// FAILED investigation; Attempt counts the attempts within a series.
type AttemptRef struct {
	InvestigationID string `json:"investigation_id"`
	Series          int    `json:"series"`
	Attempt         int    `json:"attempt"`
}

func (r AttemptRef) validate() error {
	var errs []error
	if !validUUID(r.InvestigationID) {
		errs = append(errs, errors.New("investigation_id must be a UUID"))
	}
	if r.Series < 1 {
		errs = append(errs, errors.New("series must be >= 1"))
	}
	if r.Attempt < 1 || r.Attempt > maxAttemptNumber {
		errs = append(errs, fmt.Errorf("attempt must be in 1..%d", maxAttemptNumber))
	}
	return errors.Join(errs...)
}

// SubmissionID is the identity of the seq-th (0-based) claim submission of an attempt.
func SubmissionID(r AttemptRef, seq int) string {
	return derive("claim-submission", r.InvestigationID, strconv.Itoa(r.Series), strconv.Itoa(r.Attempt), strconv.Itoa(seq))
}

// SnapshotImageV1 is one image of an investigation input, downloaded and
// kept in the blob store under BlobKey. Placeholder is the N of the
// "[IMAGE:N]" token of Markdown input (-1 when none); TextOffset is the
// image's offset in the normalized text in UTF-16 code units (-1 when none).
type SnapshotImageV1 struct {
	SourceURL   string `json:"source_url"`
	SHA256      string `json:"sha256"`
	MediaType   string `json:"media_type"`
	Bytes       int64  `json:"bytes"`
	BlobKey     string `json:"blob_key"`
	Placeholder int    `json:"placeholder"`
	TextOffset  int    `json:"text_offset"`
}

// SkippedImageV1 is an image of the post that the input does not carry.
type SkippedImageV1 struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// UpdateBasisV1 makes an input an update: the prior complete
// SERVER_VERIFIED investigation of the same post, its claims and the diff
// from its text to this version's.
type UpdateBasisV1 struct {
	PriorInvestigationID string `json:"prior_investigation_id"`
	PriorPostVersionID   string `json:"prior_post_version_id"`
	// PriorConfigurationID is the prior investigation's configuration
	// ("": the default configuration).
	PriorConfigurationID string    `json:"prior_configuration_id,omitempty"`
	PriorClaims          []ClaimV1 `json:"prior_claims"`
	Diff                 string    `json:"diff"`
}

// InvestigationInputSnapshottedV1 fixes what an investigation reads, once:
// every attempt and every replay uses exactly this input, even if the
// Markdown renderer or the read model changes later.
type InvestigationInputSnapshottedV1 struct {
	InvestigationID string `json:"investigation_id"`
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	Platform        string `json:"platform"`
	URL             string `json:"url"`
	Provenance      string `json:"provenance"`
	// Format is MARKDOWN (Content rendered from the version's HTML by the
	// renderer RendererVersion, from MarkdownSource) or TEXT (Content is the
	// normalized text).
	Format          string `json:"format"`
	MarkdownSource  string `json:"markdown_source"`
	RendererVersion string `json:"renderer_version,omitempty"`
	Content         string `json:"content"`
	ContentSHA256   string `json:"content_sha256"`
	// Text is the version's normalized text: claims are checked against it.
	Text          string            `json:"text"`
	TextSHA256    string            `json:"text_sha256"`
	WordCount     int               `json:"word_count"`
	Images        []SnapshotImageV1 `json:"images"`
	SkippedImages []SkippedImageV1  `json:"skipped_images"`
	Update        *UpdateBasisV1    `json:"update,omitempty"`
	// ConfigurationID is the investigation's configuration ("": default).
	ConfigurationID string `json:"configuration_id,omitempty"`
}

// EventType implements Payload.
func (InvestigationInputSnapshottedV1) EventType() string { return TypeInvestigationInputSnapshottedV1 }

// Validate implements Payload.
func (p InvestigationInputSnapshottedV1) Validate() error {
	var errs []error
	if !validConfigurationRef(p.ConfigurationID) || p.InvestigationID != InvestigationIDFor(p.PostVersionID, p.ConfigurationID) || !validUUID(p.PostID) {
		errs = append(errs, errors.New("investigation_id must derive from post_version_id and configuration_id; post_id must be a UUID"))
	}
	if !ValidPlatform(p.Platform) {
		errs = append(errs, fmt.Errorf("platform %q is unknown", p.Platform))
	}
	switch p.Provenance {
	case ProvenanceServerVerified, ProvenanceClientFallback:
	default:
		errs = append(errs, fmt.Errorf("provenance %q is unknown", p.Provenance))
	}
	switch {
	case p.Format == InputFormatMarkdown && (p.MarkdownSource == MarkdownSourceServerHTML || p.MarkdownSource == MarkdownSourceClientHTML) && p.RendererVersion != "":
	case p.Format == InputFormatText && p.MarkdownSource == MarkdownSourceNone && p.RendererVersion == "":
	default:
		errs = append(errs, fmt.Errorf("format %q, markdown_source %q and renderer_version %q do not fit together", p.Format, p.MarkdownSource, p.RendererVersion))
	}
	if p.Content == "" || p.Text == "" {
		errs = append(errs, errors.New("content and text are required"))
	}
	if p.ContentSHA256 != sha256Of(p.Content) || p.TextSHA256 != sha256Of(p.Text) {
		errs = append(errs, errors.New("content_sha256 and text_sha256 must be the sha256 of content and text"))
	}
	if p.Images == nil || p.SkippedImages == nil {
		errs = append(errs, errors.New("images and skipped_images must be arrays"))
	}
	for i, im := range p.Images {
		if !isSHA256Hex(im.SHA256) || im.BlobKey == "" || im.SourceURL == "" || im.Bytes <= 0 {
			errs = append(errs, fmt.Errorf("image %d: source_url, sha256, blob_key and bytes are required", i))
		}
		switch im.MediaType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
		default:
			errs = append(errs, fmt.Errorf("image %d: media type %q is not allowed", i, im.MediaType))
		}
	}
	if u := p.Update; u != nil {
		if !validConfigurationRef(u.PriorConfigurationID) || u.PriorInvestigationID != InvestigationIDFor(u.PriorPostVersionID, u.PriorConfigurationID) {
			errs = append(errs, errors.New("update: prior_investigation_id must derive from prior_post_version_id and prior_configuration_id"))
		}
		if u.PriorClaims == nil || u.Diff == "" {
			errs = append(errs, errors.New("update: prior_claims and diff are required"))
		}
		for i, c := range u.PriorClaims {
			errs = append(errs, c.validate(u.PriorInvestigationID, i))
		}
	}
	return errors.Join(errs...)
}

// PromptRefV1 names a registered prompt version and the sha256 of its text.
type PromptRefV1 struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

func (p PromptRefV1) validate() error {
	if p.Name == "" || p.Version == "" || !isSHA256Hex(p.SHA256) {
		return errors.New("prompt: name, version and sha256 are required")
	}
	return nil
}

// ToolDefinitionV1 is a tool as the model saw it.
type ToolDefinitionV1 struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// InvestigationAttemptStartedV1 opens an attempt of stage 1: the
// investigation is PROCESSING from here on.
type InvestigationAttemptStartedV1 struct {
	AttemptRef
	// Worker is the instance that runs the attempt.
	Worker   string      `json:"worker"`
	Prompt   PromptRefV1 `json:"prompt"`
	Provider string      `json:"provider"`
	Model    string      `json:"model"`
	// Instructions is the exact system prompt sent.
	Instructions string             `json:"instructions"`
	Tools        []ToolDefinitionV1 `json:"tools"`
	WebSearch    string             `json:"web_search"` // NATIVE, FUNCTION or NONE
	RoundCap     int                `json:"round_cap"`
	// Credential says whose key pays: INSTANCE or USER (never the key).
	Credential string `json:"credential"`
	// InputEventID is the id of the input_snapshotted event the attempt reads.
	InputEventID string `json:"input_event_id"`
}

// Credential owners.
const (
	CredentialInstance = "INSTANCE"
	CredentialUser     = "USER"
)

// EventType implements Payload.
func (InvestigationAttemptStartedV1) EventType() string { return TypeInvestigationAttemptStartedV1 }

// Validate implements Payload.
func (p InvestigationAttemptStartedV1) Validate() error {
	errs := []error{p.AttemptRef.validate(), p.Prompt.validate()}
	if p.Worker == "" || p.Provider == "" || p.Model == "" || p.Instructions == "" {
		errs = append(errs, errors.New("worker, provider, model and instructions are required"))
	}
	if p.Tools == nil {
		errs = append(errs, errors.New("tools must be an array"))
	}
	switch p.WebSearch {
	case "NATIVE", "FUNCTION", "NONE":
	default:
		errs = append(errs, fmt.Errorf("web_search %q is unknown", p.WebSearch))
	}
	if p.RoundCap < 1 {
		errs = append(errs, errors.New("round_cap must be >= 1"))
	}
	switch p.Credential {
	case CredentialInstance, CredentialUser:
	default:
		errs = append(errs, fmt.Errorf("credential %q is unknown", p.Credential))
	}
	if !validUUID(p.InputEventID) {
		errs = append(errs, errors.New("input_event_id must be a UUID"))
	}
	return errors.Join(errs...)
}

// ExchangeErrorV1 is a failed exchange's classified error (redacted).
type ExchangeErrorV1 struct {
	Class      string `json:"class"`
	Kind       string `json:"kind"`
	StatusCode int    `json:"status_code,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message"`
}

// ToolResultV1 is what a tool executed by the worker returned to the model.
type ToolResultV1 struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Output string `json:"output"`
}

// InvestigationExchangeRecordedV1 is one HTTP exchange with a model: the
// exact bytes sent and received (image data replaced by blob references),
// the normalized output (items, tool calls with raw arguments, citations,
// reasoning summaries), usage, and the error if any. Replays read these
// and never call a model.
type InvestigationExchangeRecordedV1 struct {
	AttemptRef
	Stage string `json:"stage"`
	// SubmissionID is the claim a VALIDATOR or ASSESSOR exchange judges.
	SubmissionID string `json:"submission_id,omitempty"`
	// Round counts the exchanges of a stage-1 attempt (1-based), the
	// tries of one validation, or the stance exchanges of one assessment.
	Round       int             `json:"round"`
	Prompt      PromptRefV1     `json:"prompt"`
	Provider    string          `json:"provider"`
	Model       string          `json:"model"`
	HTTPStatus  int             `json:"http_status"`
	RequestID   string          `json:"request_id,omitempty"`
	DurationMS  int64           `json:"duration_ms"`
	RawRequest  json.RawMessage `json:"raw_request"`
	RawResponse string          `json:"raw_response"`
	// Response is the normalized llm.Response (without the raw bytes).
	Response json.RawMessage `json:"response"`
	// ToolResults answer the tool calls of this exchange; they are sent
	// with the next one.
	ToolResults []ToolResultV1   `json:"tool_results"`
	Usage       UsageV1          `json:"usage"`
	Error       *ExchangeErrorV1 `json:"error,omitempty"`
}

// UsageV1 counts tokens.
type UsageV1 struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
}

// EventType implements Payload.
func (InvestigationExchangeRecordedV1) EventType() string { return TypeInvestigationExchangeRecordedV1 }

// Validate implements Payload.
func (p InvestigationExchangeRecordedV1) Validate() error {
	errs := []error{p.AttemptRef.validate(), p.Prompt.validate()}
	switch p.Stage {
	case StageInvestigator:
		if p.SubmissionID != "" {
			errs = append(errs, errors.New("an investigator exchange has no submission_id"))
		}
	case StageValidator:
		if !validUUID(p.SubmissionID) {
			errs = append(errs, errors.New("a validator exchange needs a submission_id"))
		}
	case StageAssessor:
		if !validUUID(p.SubmissionID) {
			errs = append(errs, errors.New("an assessor exchange needs a submission_id"))
		}
	default:
		errs = append(errs, fmt.Errorf("stage %q is unknown", p.Stage))
	}
	if p.Round < 1 {
		errs = append(errs, errors.New("round must be >= 1"))
	}
	if p.Provider == "" || p.Model == "" || len(p.RawRequest) == 0 {
		errs = append(errs, errors.New("provider, model and raw_request are required"))
	}
	if p.ToolResults == nil {
		errs = append(errs, errors.New("tool_results must be an array"))
	}
	if e := p.Error; e != nil && (e.Class != FailureTransient && e.Class != FailureNonRetryable || e.Kind == "") {
		errs = append(errs, errors.New("error: class and kind are required"))
	}
	return errors.Join(errs...)
}

// CorrectionV1 is a claim as the investigator submitted it.
type CorrectionV1 struct {
	Text      string     `json:"text"`
	Context   string     `json:"context"`
	Summary   string     `json:"summary"`
	Reasoning string     `json:"reasoning"`
	Sources   []SourceV1 `json:"sources"`
}

// InvestigationClaimSubmittedV1 is one submit_correction call of stage 1
// and what the worker made of it. ACCEPTED submissions go to the validator;
// the text (and context) are the verbatim post text, Markdown emphasis
// removed where that is what made the quote differ.
type InvestigationClaimSubmittedV1 struct {
	AttemptRef
	SubmissionID string       `json:"submission_id"`
	Seq          int          `json:"seq"`
	CallID       string       `json:"call_id"`
	Disposition  string       `json:"disposition"`
	Correction   CorrectionV1 `json:"correction"`
}

// EventType implements Payload.
func (InvestigationClaimSubmittedV1) EventType() string { return TypeInvestigationClaimSubmittedV1 }

// Validate implements Payload.
func (p InvestigationClaimSubmittedV1) Validate() error {
	errs := []error{p.AttemptRef.validate()}
	if p.Seq < 0 || p.SubmissionID != SubmissionID(p.AttemptRef, p.Seq) {
		errs = append(errs, errors.New("submission_id must derive from the attempt and seq"))
	}
	switch p.Disposition {
	case DispositionAccepted:
		c := ClaimV1{Text: p.Correction.Text, Context: p.Correction.Context, Summary: p.Correction.Summary,
			Reasoning: p.Correction.Reasoning, Sources: p.Correction.Sources}
		c.ID = ClaimID(p.InvestigationID, 0)
		errs = append(errs, c.validate(p.InvestigationID, 0))
	case DispositionNotVerbatim, DispositionDuplicate:
	default:
		errs = append(errs, fmt.Errorf("disposition %q is unknown", p.Disposition))
	}
	return errors.Join(errs...)
}

// InvestigationClaimRetainedV1 is one retain_correction call of an update
// run: a prior claim that still stands.
type InvestigationClaimRetainedV1 struct {
	AttemptRef
	PriorClaimID string `json:"prior_claim_id"`
	CallID       string `json:"call_id"`
	// Disposition is ACCEPTED, REJECTED_UNKNOWN_PRIOR (no such prior
	// claim), REJECTED_PRIOR_NOT_IN_TEXT (its quote is no longer in the
	// text) or REJECTED_DUPLICATE.
	Disposition string `json:"disposition"`
}

// EventType implements Payload.
func (InvestigationClaimRetainedV1) EventType() string { return TypeInvestigationClaimRetainedV1 }

// Validate implements Payload.
func (p InvestigationClaimRetainedV1) Validate() error {
	errs := []error{p.AttemptRef.validate()}
	switch p.Disposition {
	case DispositionAccepted, DispositionInvalidRetain, DispositionRetainNotInText, DispositionDuplicate:
	default:
		errs = append(errs, fmt.Errorf("disposition %q is unknown", p.Disposition))
	}
	if p.Disposition != DispositionInvalidRetain && !validUUID(p.PriorClaimID) {
		errs = append(errs, errors.New("prior_claim_id must be a UUID"))
	}
	return errors.Join(errs...)
}

// InvestigationClaimValidatedV1 is stage 2's decision on one accepted
// submission. Only APPROVED claims are published.
type InvestigationClaimValidatedV1 struct {
	AttemptRef
	SubmissionID string      `json:"submission_id"`
	Outcome      string      `json:"outcome"`
	Reason       string      `json:"reason"`
	Prompt       PromptRefV1 `json:"prompt"`
	Provider     string      `json:"provider"`
	Model        string      `json:"model"`
	Tries        int         `json:"tries"`
}

// EventType implements Payload.
func (InvestigationClaimValidatedV1) EventType() string { return TypeInvestigationClaimValidatedV1 }

// Validate implements Payload.
func (p InvestigationClaimValidatedV1) Validate() error {
	errs := []error{p.AttemptRef.validate(), p.Prompt.validate()}
	if !validUUID(p.SubmissionID) {
		errs = append(errs, errors.New("submission_id must be a UUID"))
	}
	switch p.Outcome {
	case ValidationApproved, ValidationRejected, ValidationError:
	default:
		errs = append(errs, fmt.Errorf("outcome %q is unknown", p.Outcome))
	}
	if p.Reason == "" || p.Provider == "" || p.Model == "" || p.Tries < 1 {
		errs = append(errs, errors.New("reason, provider, model and tries are required"))
	}
	return errors.Join(errs...)
}

// InvestigationAttemptFailedV1 ends an attempt without a result. A
// TRANSIENT failure with attempts left is retried at RetryAt; otherwise an
// investigation.failed event follows.
type InvestigationAttemptFailedV1 struct {
	AttemptRef
	Class   string `json:"class"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// RetryAt is when the next attempt is due (RFC 3339), empty when none follows.
	RetryAt string `json:"retry_at,omitempty"`
}

// EventType implements Payload.
func (InvestigationAttemptFailedV1) EventType() string { return TypeInvestigationAttemptFailedV1 }

// Validate implements Payload.
func (p InvestigationAttemptFailedV1) Validate() error {
	errs := []error{p.AttemptRef.validate()}
	if p.Class != FailureTransient && p.Class != FailureNonRetryable {
		errs = append(errs, fmt.Errorf("class %q is unknown", p.Class))
	}
	if p.Kind == "" || p.Message == "" {
		errs = append(errs, errors.New("kind and message are required"))
	}
	if p.RetryAt != "" {
		if _, err := parseRFC3339(p.RetryAt); err != nil {
			errs = append(errs, fmt.Errorf("retry_at: %w", err))
		}
	}
	return errors.Join(errs...)
}

// InvestigationStageOneFinishedV1 closes stage 1 of an attempt: the model
// gave its final answer. The investigation completes once every accepted
// submission of the attempt is validated.
type InvestigationStageOneFinishedV1 struct {
	AttemptRef
	Rounds      int    `json:"rounds"`
	Submissions int    `json:"submissions"`
	Accepted    int    `json:"accepted"`
	Retained    int    `json:"retained"`
	FinalText   string `json:"final_text"`
	// ForcedFinal is true when the round cap forced an answer without tools.
	ForcedFinal bool `json:"forced_final"`
}

// EventType implements Payload.
func (InvestigationStageOneFinishedV1) EventType() string { return TypeInvestigationStageOneFinishedV1 }

// Validate implements Payload.
func (p InvestigationStageOneFinishedV1) Validate() error {
	errs := []error{p.AttemptRef.validate()}
	if p.Rounds < 1 || p.Submissions < 0 || p.Accepted < 0 || p.Accepted > p.Submissions || p.Retained < 0 {
		errs = append(errs, errors.New("rounds >= 1 and 0 <= accepted <= submissions, retained >= 0"))
	}
	return errors.Join(errs...)
}

// InvestigationKeyAttachedV1 records that a user's OpenAI key was attached
// to a PENDING investigation. The key itself never enters the log: it is
// sealed in the key store; the event names only the encryption key id and
// the expiry.
type InvestigationKeyAttachedV1 struct {
	InvestigationID string `json:"investigation_id"`
	KeyID           string `json:"key_id"`
	ExpiresAt       string `json:"expires_at"`
}

// KeyAttachedEventID is the id of the event recording one attached key
// (the key store's row: its encryption key id and expiry). A request
// retried after a failed append records the same key again: the same id
// makes every copy one event to every reader.
func KeyAttachedEventID(investigationID, keyID, expiresAt string) string {
	return derive("key-attached", investigationID, keyID, expiresAt)
}

// EventType implements Payload.
func (InvestigationKeyAttachedV1) EventType() string { return TypeInvestigationKeyAttachedV1 }

// Validate implements Payload.
func (p InvestigationKeyAttachedV1) Validate() error {
	var errs []error
	if !validUUID(p.InvestigationID) {
		errs = append(errs, errors.New("investigation_id must be a UUID"))
	}
	if p.KeyID == "" {
		errs = append(errs, errors.New("key_id is required"))
	}
	if _, err := parseRFC3339(p.ExpiresAt); err != nil {
		errs = append(errs, fmt.Errorf("expires_at: %w", err))
	}
	return errors.Join(errs...)
}
