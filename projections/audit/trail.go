// Package audit is the trail of one investigation as the log tells it: the
// post version it read, who asked, every attempt with its prompt, model,
// exact inputs, model exchanges, tool calls, sources and token usage, the
// validator's decision on every claim, the evidence engine's assessment of
// every approved claim (published or withheld, and why), and the result. Build folds the
// ordered events of one investigation into a Trail; the trail can be read
// straight from Kafka (ReadLog) or from the audit projection (Reader), and
// both give the same Trail.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
)

// ErrNotFound is returned when an investigation has no event.
var ErrNotFound = errors.New("investigation not found")

// Position is where an event is on the log.
type Position struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

func (p Position) String() string { return fmt.Sprintf("%s[%d]@%d", p.Topic, p.Partition, p.Offset) }

// Record is a decoded event and its position.
type Record struct {
	Event    events.Event
	Position Position
}

// Step identifies the event a part of the trail comes from.
type Step struct {
	EventID       string    `json:"event_id"`
	Type          string    `json:"type"`
	Time          time.Time `json:"time"`
	Position      Position  `json:"position"`
	CorrelationID string    `json:"correlation_id,omitempty"`
	CausationID   string    `json:"causation_id,omitempty"`
}

func stepOf(r Record) Step {
	return Step{EventID: r.Event.ID, Type: r.Event.Type(), Time: r.Event.Time.UTC(), Position: r.Position,
		CorrelationID: r.Event.CorrelationID, CausationID: r.Event.CausationID}
}

// Trail is the whole audit trail of one investigation. Field order is the
// JSON order and stays stable.
type Trail struct {
	InvestigationID string       `json:"investigation_id"`
	Status          string       `json:"status"`
	PostID          string       `json:"post_id"`
	PostVersionID   string       `json:"post_version_id"`
	Platform        string       `json:"platform"`
	ExternalID      string       `json:"external_id,omitempty"`
	PostVersion     *PostVersion `json:"post_version"`
	// Configuration is the analysis configuration the investigation runs
	// under (from its request).
	Configuration Configuration `json:"configuration"`
	// Supersedes is the investigation of the same post version this one
	// re-does ("" for none); SupersededBy the investigations that re-do
	// this one, oldest request first (the chain both ways). Old
	// investigations are never changed: the links are new requests.
	Supersedes   string   `json:"supersedes,omitempty"`
	SupersededBy []string `json:"superseded_by"`
	// ExperimentID and Arm record the experiment that chose the
	// configuration, when one ran.
	ExperimentID string     `json:"experiment_id,omitempty"`
	Arm          string     `json:"arm,omitempty"`
	Requests     []Request  `json:"requests"`
	UserKeys     []UserKey  `json:"user_keys"`
	Input        *Input     `json:"input"`
	Attempts     []*Attempt `json:"attempts"`
	Result       *Result    `json:"result"`
	Failures     []Failure  `json:"failures"`
	// Usage sums the tokens of every exchange of every attempt.
	Usage Usage `json:"usage"`
	// Steps counts the investigation's events the trail was built from.
	Steps int `json:"steps"`
}

// PostVersion is the registration facts of the version investigated, from
// the posts topic: the first registration, how often it was registered,
// the first server-verified registration and the integrity anomalies.
type PostVersion struct {
	PostID           string    `json:"post_id"`
	PostVersionID    string    `json:"post_version_id"`
	Platform         string    `json:"platform"`
	ExternalID       string    `json:"external_id"`
	URL              string    `json:"url"`
	VersionHash      string    `json:"version_hash"`
	ContentHash      string    `json:"content_hash"`
	OccurrencesHash  string    `json:"occurrences_hash"`
	WordCount        int       `json:"word_count"`
	FirstProvenance  string    `json:"first_provenance"`
	ServerFetchError string    `json:"server_fetch_error,omitempty"`
	FirstRegistered  Step      `json:"first_registered"`
	Registrations    int64     `json:"registrations"`
	ServerVerified   *Step     `json:"server_verified"`
	Anomalies        []Anomaly `json:"anomalies"`
}

// Anomaly is an integrity anomaly recorded for the version.
type Anomaly struct {
	Step          Step   `json:"step"`
	Kind          string `json:"kind"`
	Field         string `json:"field"`
	ObservedValue string `json:"observed_value"`
	ServerValue   string `json:"server_value"`
}

// Configuration names an analysis configuration: the default one (id "",
// the worker's own settings, Spec nil) or a declared one with its settings.
type Configuration struct {
	ID   string                          `json:"id"`
	Name string                          `json:"name"`
	Spec *events.AnalysisConfigurationV1 `json:"spec"`
}

// Request is one investigation.requested event: who or what asked.
type Request struct {
	Step   Step   `json:"step"`
	Source string `json:"source"`
	// ConfigurationID, Supersedes, ExperimentID and Arm are what the
	// request recorded (empty: the default configuration, no link, no
	// experiment).
	ConfigurationID string `json:"configuration_id,omitempty"`
	Supersedes      string `json:"supersedes,omitempty"`
	ExperimentID    string `json:"experiment_id,omitempty"`
	Arm             string `json:"arm,omitempty"`
	// RequesterKey is the keyed hash (HMAC) of an investigateNow caller.
	RequesterKey    string `json:"requester_key,omitempty"`
	UniqueViewScore int64  `json:"unique_view_score,omitempty"`
	VersionHash     string `json:"version_hash"`
}

// UserKey is a user's OpenAI key attached to the investigation: only the
// key-ring id that sealed it and its expiry (the key is never in the log).
type UserKey struct {
	Step      Step   `json:"step"`
	KeyRingID string `json:"key_ring_id,omitempty"`
	ExpiresAt string `json:"expires_at"`
}

// Input is the input snapshot every attempt reads.
type Input struct {
	Step            Step           `json:"step"`
	PostVersionID   string         `json:"post_version_id"`
	URL             string         `json:"url"`
	Provenance      string         `json:"provenance"`
	Format          string         `json:"format"`
	MarkdownSource  string         `json:"markdown_source"`
	RendererVersion string         `json:"renderer_version,omitempty"`
	ContentSHA256   string         `json:"content_sha256"`
	TextSHA256      string         `json:"text_sha256"`
	WordCount       int            `json:"word_count"`
	Images          []Image        `json:"images"`
	SkippedImages   []SkippedImage `json:"skipped_images"`
	Update          *UpdateBasis   `json:"update"`
	// Content is what the model read; Text what claims are checked against.
	Content string `json:"content"`
	Text    string `json:"text"`
}

// Image is an image of the input (its bytes are in the blob store).
type Image struct {
	SourceURL   string `json:"source_url"`
	SHA256      string `json:"sha256"`
	MediaType   string `json:"media_type"`
	Bytes       int64  `json:"bytes"`
	BlobKey     string `json:"blob_key,omitempty"`
	Placeholder int    `json:"placeholder"`
	TextOffset  int    `json:"text_offset"`
}

// SkippedImage is an image of the post the input does not carry.
type SkippedImage struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// UpdateBasis makes the input an update of a prior investigation.
type UpdateBasis struct {
	PriorInvestigationID string  `json:"prior_investigation_id"`
	PriorPostVersionID   string  `json:"prior_post_version_id"`
	PriorClaims          []Claim `json:"prior_claims"`
	Diff                 string  `json:"diff"`
}

// Prompt names a prompt version and the sha256 of its text.
type Prompt struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

func promptOf(p events.PromptRefV1) Prompt { return Prompt(p) }

// Tool is a tool definition as the model saw it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Attempt is one attempt of an attempt series: stage 1 and the validation
// of its submissions.
type Attempt struct {
	Series  int   `json:"series"`
	Attempt int   `json:"attempt"`
	Started *Step `json:"started"`
	// Worker is the instance that ran the attempt.
	Worker       string `json:"worker,omitempty"`
	Prompt       Prompt `json:"prompt"`
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
	Tools        []Tool `json:"tools"`
	WebSearch    string `json:"web_search"`
	RoundCap     int    `json:"round_cap"`
	// Credential says whose key paid: INSTANCE or USER.
	Credential   string `json:"credential"`
	InputEventID string `json:"input_event_id"`
	// Exchanges are the stage-1 exchanges; validator exchanges are under
	// their submission.
	Exchanges   []*Exchange       `json:"exchanges"`
	Submissions []*Submission     `json:"submissions"`
	Retains     []Retain          `json:"retains"`
	StageOne    *StageOneFinished `json:"stage_one_finished"`
	Failure     *AttemptFailure   `json:"failure"`
	// Usage sums the tokens of the attempt's exchanges, both stages.
	Usage Usage `json:"usage"`
}

// Exchange is one exchange with a model.
type Exchange struct {
	Step             Step            `json:"step"`
	Stage            string          `json:"stage"`
	SubmissionID     string          `json:"submission_id,omitempty"`
	Round            int             `json:"round"`
	Prompt           Prompt          `json:"prompt"`
	Provider         string          `json:"provider"`
	Model            string          `json:"model"`
	HTTPStatus       int             `json:"http_status"`
	RequestID        string          `json:"request_id,omitempty"`
	DurationMS       int64           `json:"duration_ms"`
	ResponseID       string          `json:"response_id,omitempty"`
	ResponseModel    string          `json:"response_model,omitempty"`
	ResponseStatus   string          `json:"response_status,omitempty"`
	IncompleteReason string          `json:"incomplete_reason,omitempty"`
	Text             string          `json:"text,omitempty"`
	Refusal          string          `json:"refusal,omitempty"`
	Reasoning        []string        `json:"reasoning,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls"`
	WebSearches      []WebSearch     `json:"web_searches"`
	Citations        []Citation      `json:"citations"`
	OutputJSON       json.RawMessage `json:"output_json,omitempty"`
	ToolResults      []ToolResult    `json:"tool_results"`
	Usage            Usage           `json:"usage"`
	Error            *ExchangeError  `json:"error"`
	// RawRequest and RawResponse are the exact bodies sent and received
	// (image data replaced by blob references). Left out of the public trail.
	// RawRequest is a string so the JSON rendering keeps its bytes as
	// stored, not re-indented.
	RawRequest  string `json:"raw_request,omitempty"`
	RawResponse string `json:"raw_response,omitempty"`
}

// ToolCall is a function call the model made, with its raw arguments.
type ToolCall struct {
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// WebSearch is a native web search the provider ran.
type WebSearch struct {
	Status  string   `json:"status,omitempty"`
	Action  string   `json:"action,omitempty"`
	Query   string   `json:"query,omitempty"`
	Queries []string `json:"queries,omitempty"`
	URL     string   `json:"url,omitempty"`
	Sources []string `json:"sources,omitempty"`
}

// Citation is a source the model cited in its text.
type Citation struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// ToolResult is what a tool the worker ran returned to the model.
type ToolResult struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Output string `json:"output"`
}

// ExchangeError is a failed exchange's classified error.
type ExchangeError struct {
	Class      string `json:"class"`
	Kind       string `json:"kind"`
	StatusCode int    `json:"status_code,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
}

func (u *Usage) add(o Usage) {
	u.InputTokens += o.InputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.OutputTokens += o.OutputTokens
	u.ReasoningTokens += o.ReasoningTokens
	u.TotalTokens += o.TotalTokens
}

// Submission is one submit_correction call, what the worker made of it,
// and, for an accepted one, the validator's exchanges and decision, then,
// for an approved one, the stance exchanges and the evidence assessment.
type Submission struct {
	Step              Step        `json:"step"`
	SubmissionID      string      `json:"submission_id"`
	Seq               int         `json:"seq"`
	CallID            string      `json:"call_id"`
	Disposition       string      `json:"disposition"`
	Correction        Correction  `json:"correction"`
	Exchanges         []*Exchange `json:"validator_exchanges"`
	Validation        *Validation `json:"validation"`
	AssessorExchanges []*Exchange `json:"assessor_exchanges"`
	Assessment        *Assessment `json:"assessment"`
}

// Correction is a claim as the investigator submitted it.
type Correction struct {
	Text      string   `json:"text"`
	Context   string   `json:"context"`
	Summary   string   `json:"summary"`
	Reasoning string   `json:"reasoning"`
	Sources   []Source `json:"sources"`
}

// Source is evidence for a claim.
type Source struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// Validation is stage 2's decision on one accepted submission.
type Validation struct {
	Step     Step   `json:"step"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason"`
	Prompt   Prompt `json:"prompt"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Tries    int    `json:"tries"`
}

// Assessment is the evidence engine's judgement of one approved submission
// (investigation.claim_assessed; consumers/evidence defines every field):
// the verdict and score from Tsao's features, Gate 4 with the numbers it
// read, the policy and registry versions, and whether the claim is
// published or withheld, with the reason and every failed rule; then what
// it read: the queries of our own search, the sources with tier, stance and
// checks, and the sources it dropped.
type Assessment struct {
	Step            Step     `json:"step"`
	Verdict         string   `json:"verdict"`
	Score           int      `json:"score"`
	Raw             float64  `json:"raw"`
	Features        Features `json:"features"`
	Gate4           Gate4    `json:"gate4"`
	PolicyVersion   string   `json:"policy_version"`
	RegistryVersion string   `json:"registry_version"`
	PublishMode     string   `json:"publish_mode"`
	Published       bool     `json:"published"`
	// Reason is "published" or the first rule that failed; Failed lists
	// every rule that failed.
	Reason         string           `json:"reason"`
	Failed         []string         `json:"failed"`
	Causal         bool             `json:"causal"`
	StanceProvider string           `json:"stance_provider,omitempty"`
	StanceModel    string           `json:"stance_model,omitempty"`
	StancePrompt   *Prompt          `json:"stance_prompt,omitempty"`
	Queries        []EvidenceQuery  `json:"queries"`
	Sources        []AssessedSource `json:"sources"`
	Dropped        []DroppedSource  `json:"dropped"`
}

// Features are Tsao's features of an assessment.
type Features struct {
	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	CMax     float64 `json:"c_max"`
	AgreeDom int     `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	NumOK    int     `json:"num_ok"`
}

// Gate4 is FactHarbor's evidence sufficiency: the level, the independent
// domains with a stance, their mean quality and the share agreeing with
// the verdict.
type Gate4 struct {
	Level     string  `json:"level"`
	Sources   int     `json:"sources"`
	Quality   float64 `json:"quality"`
	Agreement float64 `json:"agreement"`
}

// EvidenceQuery is one query of our own search and what it returned.
type EvidenceQuery struct {
	Query   string `json:"query"`
	Kind    string `json:"kind"`
	Results int    `json:"results"`
	Error   string `json:"error,omitempty"`
}

// AssessedSource is a passage the engine read.
type AssessedSource struct {
	URL         string  `json:"url"`
	Domain      string  `json:"domain"`
	Tier        int     `json:"tier"`
	Rule        string  `json:"rule"`
	Origin      string  `json:"origin"`
	Title       string  `json:"title"`
	Snippet     string  `json:"snippet"`
	PublishedAt string  `json:"published_at,omitempty"`
	Entail      float64 `json:"entail"`
	Contradict  float64 `json:"contradict"`
	Neutral     float64 `json:"neutral"`
	// StanceNote says why the stance is the neutral default.
	StanceNote string  `json:"stance_note,omitempty"`
	Num        string  `json:"num,omitempty"`
	Recency    float64 `json:"recency"`
}

// DroppedSource is a source the engine did not read, and why.
type DroppedSource struct {
	URL    string `json:"url"`
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

// Retain is one retain_correction call of an update.
type Retain struct {
	Step         Step   `json:"step"`
	PriorClaimID string `json:"prior_claim_id"`
	CallID       string `json:"call_id"`
	Disposition  string `json:"disposition"`
}

// StageOneFinished closes stage 1 of an attempt.
type StageOneFinished struct {
	Step        Step   `json:"step"`
	Rounds      int    `json:"rounds"`
	Submissions int    `json:"submissions"`
	Accepted    int    `json:"accepted"`
	Retained    int    `json:"retained"`
	FinalText   string `json:"final_text"`
	ForcedFinal bool   `json:"forced_final"`
}

// AttemptFailure ends an attempt without a result.
type AttemptFailure struct {
	Step    Step   `json:"step"`
	Class   string `json:"class"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
	RetryAt string `json:"retry_at,omitempty"`
}

// Result is the published result (investigation.completed).
type Result struct {
	Step          Step    `json:"step"`
	Series        int     `json:"series,omitempty"`
	Attempt       int     `json:"attempt,omitempty"`
	Provenance    string  `json:"provenance"`
	PromptVersion string  `json:"prompt_version"`
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	Claims        []Claim `json:"claims"`
}

// Claim is a published claim; SubmissionID names the submission (and so
// the assessment) it was published from, when it has one.
type Claim struct {
	ID           string   `json:"id"`
	SubmissionID string   `json:"submission_id,omitempty"`
	Text         string   `json:"text"`
	Context      string   `json:"context"`
	Summary      string   `json:"summary"`
	Reasoning    string   `json:"reasoning"`
	Sources      []Source `json:"sources"`
}

// Failure ends an attempt series without a result (investigation.failed).
type Failure struct {
	Step     Step   `json:"step"`
	Series   int    `json:"series,omitempty"`
	Reason   string `json:"reason"`
	Attempts int    `json:"attempts"`
}

// IsInvestigationType reports whether a (current) event type belongs to the
// trail of an investigation.
func IsInvestigationType(t string) bool {
	return strings.HasPrefix(t, "investigation.")
}

// IsPostType reports whether a (current) event type contributes to the
// registration facts of a post version.
func IsPostType(t string) bool {
	return t == events.TypePostVersionRegisteredV1 || t == events.TypePostIntegrityAnomalyRecordedV1
}
