package events

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Appeals: a reader or an author disputes a published claim. The appeal
// is an event; a review re-examines that one claim with the appeal's text
// and URLs as untrusted input; its decision (upheld or retracted) is an
// event too. A retracted claim leaves the current view and stays in the
// history with the reason.

// Event types of the appeal aggregate (keyed by appeal id).
const (
	TypeAppealFiledV1   = "appeal.filed.v1"
	TypeAppealDecidedV1 = "appeal.decided.v1"
)

// Who appeals.
const (
	AppealRoleReader = "READER"
	AppealRoleAuthor = "AUTHOR"
)

// Outcomes of an appeal.
const (
	AppealUpheld    = "UPHELD"
	AppealRetracted = "RETRACTED"
)

// Limits of an appeal's untrusted input.
const (
	AppealReasonMinRunes = 10
	AppealReasonMaxRunes = 2000
	AppealMaxURLs        = 5
	AppealURLMaxBytes    = 2048
)

// AppealID is the identity of an appeal: the same requester sending the
// same reason and URLs about the same claim files the same appeal, so a
// repeated or retried appeal changes nothing.
func AppealID(claimID, requesterKey, reason string, urls []string) string {
	return derive("appeal", claimID, requesterKey, sha256Of(reason), strings.Join(urls, "\n"))
}

// AppealFiledV1 disputes one published claim.
type AppealFiledV1 struct {
	AppealID        string `json:"appeal_id"`
	ClaimID         string `json:"claim_id"`
	InvestigationID string `json:"investigation_id"`
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	Role            string `json:"role"`
	// Reason and URLs are the appellant's words and sources: untrusted
	// input, fenced as such wherever a model reads them.
	Reason string   `json:"reason"`
	URLs   []string `json:"urls"`
	// RequesterKey is the keyed hash of the client that appealed.
	RequesterKey string `json:"requester_key"`
}

// EventType implements Payload.
func (AppealFiledV1) EventType() string { return TypeAppealFiledV1 }

// Validate implements Payload.
func (p AppealFiledV1) Validate() error {
	var errs []error
	if !validUUID(p.ClaimID) || !validUUID(p.InvestigationID) || !validUUID(p.PostID) || !validUUID(p.PostVersionID) {
		errs = append(errs, errors.New("claim_id, investigation_id, post_id and post_version_id must be UUIDs"))
	}
	if !isSHA256Hex(p.RequesterKey) {
		errs = append(errs, errors.New("requester_key is not a sha256 hex digest"))
	}
	if p.AppealID != AppealID(p.ClaimID, p.RequesterKey, p.Reason, p.URLs) {
		errs = append(errs, errors.New("appeal_id does not derive from claim, requester, reason and urls"))
	}
	if p.Role != AppealRoleReader && p.Role != AppealRoleAuthor {
		errs = append(errs, fmt.Errorf("role %q is unknown", p.Role))
	}
	if err := ValidateAppealReason(p.Reason); err != nil {
		errs = append(errs, err)
	}
	if p.URLs == nil {
		errs = append(errs, errors.New("urls must be an array"))
	}
	if err := ValidateAppealURLs(p.URLs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ValidateAppealReason checks an appeal's reason: valid UTF-8 without
// control characters other than newlines and tabs, 10 to 2,000 characters.
func ValidateAppealReason(reason string) error {
	n := utf8.RuneCountInString(reason)
	if !utf8.ValidString(reason) || n < AppealReasonMinRunes || n > AppealReasonMaxRunes {
		return fmt.Errorf("reason must be %d to %d characters of valid UTF-8", AppealReasonMinRunes, AppealReasonMaxRunes)
	}
	for _, r := range reason {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f {
			return errors.New("reason contains control characters")
		}
	}
	return nil
}

// ValidateAppealURLs checks an appeal's URLs without resolving them:
// at most 5 distinct absolute http(s) URLs without credentials, each at
// most 2,048 bytes, none naming a loopback, private, link-local or
// unspecified address literally or the host "localhost". A name that
// resolves to such an address is refused where it is fetched
// (internal/httpsafe).
func ValidateAppealURLs(urls []string) error {
	if len(urls) > AppealMaxURLs {
		return fmt.Errorf("at most %d urls", AppealMaxURLs)
	}
	seen := map[string]bool{}
	for i, raw := range urls {
		if seen[raw] {
			return fmt.Errorf("url %d repeats an earlier one", i)
		}
		seen[raw] = true
		if len(raw) > AppealURLMaxBytes || !utf8.ValidString(raw) {
			return fmt.Errorf("url %d is longer than %d bytes or not UTF-8", i, AppealURLMaxBytes)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
			return fmt.Errorf("url %d is not an absolute http(s) URL without credentials", i)
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if host == "localhost" || strings.HasSuffix(host, ".localhost") {
			return fmt.Errorf("url %d names a local host", i)
		}
		if addr, err := netip.ParseAddr(host); err == nil {
			addr = addr.Unmap()
			if !addr.IsGlobalUnicast() || addr.IsPrivate() || addr.IsLoopback() || addr.IsLinkLocalUnicast() {
				return fmt.Errorf("url %d names a non-public address", i)
			}
		}
	}
	return nil
}

// AppealDecidedV1 ends an appeal: the claim stands (UPHELD) or is
// withdrawn (RETRACTED). The published claim itself is never changed;
// readers of the current view leave a retracted claim out.
type AppealDecidedV1 struct {
	AppealID        string `json:"appeal_id"`
	ClaimID         string `json:"claim_id"`
	InvestigationID string `json:"investigation_id"`
	Outcome         string `json:"outcome"`
	// Reason says why, for the public trail.
	Reason string `json:"reason"`
	// PolicyVersion is the evidence policy that decided.
	PolicyVersion string `json:"policy_version"`
}

// EventType implements Payload.
func (AppealDecidedV1) EventType() string { return TypeAppealDecidedV1 }

// Validate implements Payload.
func (p AppealDecidedV1) Validate() error {
	var errs []error
	if !validUUID(p.AppealID) || !validUUID(p.ClaimID) || !validUUID(p.InvestigationID) {
		errs = append(errs, errors.New("appeal_id, claim_id and investigation_id must be UUIDs"))
	}
	if p.Outcome != AppealUpheld && p.Outcome != AppealRetracted {
		errs = append(errs, fmt.Errorf("outcome %q is unknown", p.Outcome))
	}
	if p.Reason == "" || Clean(p.Reason) != p.Reason || len(p.Reason) > 4000 {
		errs = append(errs, errors.New("reason is required: valid UTF-8, at most 4,000 bytes"))
	}
	if p.PolicyVersion == "" {
		errs = append(errs, errors.New("policy_version is required"))
	}
	return errors.Join(errs...)
}

// The review of an appeal: one attempt at a time (keyed by the appeal id,
// so in order), each step an event appended before anything derived from
// it, so that a replay never searches, fetches or asks a model again.
const (
	TypeAppealReviewStartedV1    = "appeal.review_started.v1"
	TypeAppealQueryIssuedV1      = "appeal.query_issued.v1"
	TypeAppealURLFetchedV1       = "appeal.url_fetched.v1"
	TypeAppealExchangeRecordedV1 = "appeal.exchange_recorded.v1"
	TypeAppealEvidenceAssessedV1 = "appeal.evidence_assessed.v1"
	TypeAppealReviewFailedV1     = "appeal.review_failed.v1"
)

// AppealRef names one review attempt of an appeal.
type AppealRef struct {
	AppealID string `json:"appeal_id"`
	Attempt  int    `json:"attempt"`
}

func (r AppealRef) validate() error {
	if !validUUID(r.AppealID) || r.Attempt < 1 || r.Attempt > maxAttemptNumber {
		return fmt.Errorf("appeal_id must be a UUID and attempt in 1..%d", maxAttemptNumber)
	}
	return nil
}

// AppealReviewStartedV1 starts a review attempt: the claim it re-examines
// and the versions it judges by.
type AppealReviewStartedV1 struct {
	AppealRef
	Worker  string `json:"worker"`
	ClaimID string `json:"claim_id"`
	// ClaimText is the published claim as the review reads it.
	ClaimText string `json:"claim_text"`
	// PolicyVersion is the policy the claim was published under (the
	// default policy's when that is unknown or no longer known).
	PolicyVersion   string      `json:"policy_version"`
	RegistryVersion string      `json:"registry_version"`
	Search          string      `json:"search"`
	StancePrompt    PromptRefV1 `json:"stance_prompt"`
	StanceModel     string      `json:"stance_model"`
}

// EventType implements Payload.
func (AppealReviewStartedV1) EventType() string { return TypeAppealReviewStartedV1 }

// Validate implements Payload.
func (p AppealReviewStartedV1) Validate() error {
	errs := []error{p.AppealRef.validate(), p.StancePrompt.validate()}
	if !validUUID(p.ClaimID) || p.ClaimText == "" {
		errs = append(errs, errors.New("claim_id must be a UUID and claim_text is required"))
	}
	if p.PolicyVersion == "" || p.RegistryVersion == "" || p.Search == "" || p.StanceModel == "" {
		errs = append(errs, errors.New("policy_version, registry_version, search and stance_model are required"))
	}
	return errors.Join(errs...)
}

// AppealQueryIssuedV1 is one search query of a review and its top results.
type AppealQueryIssuedV1 struct {
	AppealRef
	Query   string           `json:"query"`
	Kind    string           `json:"kind"`
	Results []SearchResultV1 `json:"results"`
	Error   string           `json:"error,omitempty"`
}

// EventType implements Payload.
func (AppealQueryIssuedV1) EventType() string { return TypeAppealQueryIssuedV1 }

// Validate implements Payload.
func (p AppealQueryIssuedV1) Validate() error {
	errs := []error{p.AppealRef.validate()}
	if p.Query == "" || p.Results == nil {
		errs = append(errs, errors.New("query and results are required"))
	}
	if p.Kind != "keyword" && p.Kind != "timeline" {
		errs = append(errs, fmt.Errorf("kind %q is unknown", p.Kind))
	}
	return errors.Join(errs...)
}

// AppealURLFetchedV1 is one of the appellant's URLs as the review fetched
// it (through the SSRF-safe client): the page's title and the bounded
// text it read, or why it could not.
type AppealURLFetchedV1 struct {
	AppealRef
	URL   string `json:"url"`
	Title string `json:"title"`
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// EventType implements Payload.
func (AppealURLFetchedV1) EventType() string { return TypeAppealURLFetchedV1 }

// Validate implements Payload.
func (p AppealURLFetchedV1) Validate() error {
	errs := []error{p.AppealRef.validate()}
	if p.URL == "" || len(p.URL) > AppealURLMaxBytes {
		errs = append(errs, errors.New("url is required, at most 2,048 bytes"))
	}
	if (p.Error == "") == (p.Text == "" && p.Title == "") {
		errs = append(errs, errors.New("a fetch has a title or text, or an error, not both"))
	}
	return errors.Join(errs...)
}

// AppealExchangeRecordedV1 is one model exchange of a review, with its
// exact bytes.
type AppealExchangeRecordedV1 struct {
	AppealRef
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
func (AppealExchangeRecordedV1) EventType() string { return TypeAppealExchangeRecordedV1 }

// Validate implements Payload.
func (p AppealExchangeRecordedV1) Validate() error {
	errs := []error{p.AppealRef.validate(), p.Prompt.validate()}
	if p.Step != "stance" {
		errs = append(errs, fmt.Errorf("step %q is unknown", p.Step))
	}
	if p.Provider == "" || p.Model == "" || p.RawRequest == "" || p.Seq < 0 {
		errs = append(errs, errors.New("provider, model and raw_request are required"))
	}
	return errors.Join(errs...)
}

// AppealEvidenceAssessedV1 is the evidence engine's judgement of the
// claim in a review: every source with its tier and stance, what was
// dropped, and whether the policy would still publish the claim.
type AppealEvidenceAssessedV1 struct {
	AppealRef
	Sources       []AssessedSourceV1 `json:"sources"`
	Dropped       []DroppedSourceV1  `json:"dropped"`
	Score         int                `json:"score"`
	Verdict       string             `json:"verdict"`
	Gate4         string             `json:"gate4"`
	PolicyVersion string             `json:"policy_version"`
	// Published says the policy still publishes the claim; Reason is
	// "published" or the first rule that failed.
	Published bool   `json:"published"`
	Reason    string `json:"reason"`
}

// EventType implements Payload.
func (AppealEvidenceAssessedV1) EventType() string { return TypeAppealEvidenceAssessedV1 }

// Validate implements Payload.
func (p AppealEvidenceAssessedV1) Validate() error {
	errs := []error{p.AppealRef.validate()}
	if p.Sources == nil || p.Dropped == nil {
		errs = append(errs, errors.New("sources and dropped must be arrays"))
	}
	for i, s := range p.Sources {
		if s.Tier < 1 || s.Tier > 5 || s.URL == "" || !probability(s.Entail) || !probability(s.Contradict) ||
			!probability(s.Neutral) || !probability(s.Recency) {
			errs = append(errs, fmt.Errorf("source %d: url, tier 1-5, stance and recency in [0, 1] are required", i))
		}
	}
	switch p.Verdict {
	case EvidenceSupported, EvidenceRefuted, EvidenceContested, EvidenceNotEnough:
	default:
		errs = append(errs, fmt.Errorf("verdict %q is unknown", p.Verdict))
	}
	if p.Score < 0 || p.Score > 100 || p.PolicyVersion == "" || p.Reason == "" || p.Gate4 == "" {
		errs = append(errs, errors.New("score 0..100, gate4, policy_version and reason are required"))
	}
	if p.Published != (p.Reason == "published") {
		errs = append(errs, errors.New("reason must be \"published\" exactly when published"))
	}
	return errors.Join(errs...)
}

// AppealReviewFailedV1 ends a review attempt without a decision:
// retryable (the next attempt starts at RetryAt) or for good.
type AppealReviewFailedV1 struct {
	AppealRef
	Reason    string `json:"reason"`
	Retryable bool   `json:"retryable"`
	RetryAt   string `json:"retry_at,omitempty"`
}

// EventType implements Payload.
func (AppealReviewFailedV1) EventType() string { return TypeAppealReviewFailedV1 }

// Validate implements Payload.
func (p AppealReviewFailedV1) Validate() error {
	return errors.Join(p.AppealRef.validate(), validateAttemptFailure(p.Reason, p.Retryable, p.RetryAt))
}

// AppealFiledEventID is the event id of an appeal's appeal.filed: two
// identical appeals racing append one event twice, which every fold
// counts once.
func AppealFiledEventID(appealID string) string {
	return derive("appeal-filed-event", appealID)
}
