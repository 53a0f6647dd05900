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
