package events

import (
	"errors"
	"fmt"
)

// TopicInvestigations carries the investigation lifecycle, keyed by
// investigation id so all work on one investigation stays in order.
const TopicInvestigations Topic = "investigations"

// Event type strings of the investigation aggregate.
const (
	TypeInvestigationRequestedV1 = "investigation.requested.v1"
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
	if p.InvestigationID != InvestigationID(p.PostVersionID) {
		errs = append(errs, errors.New("investigation_id does not derive from post_version_id"))
	}
	switch p.Source {
	case RequestSourceSelector, RequestSourceInvestigateNow:
	default:
		errs = append(errs, fmt.Errorf("source %q is unknown", p.Source))
	}
	if p.RequesterKey != "" && !sha256Hex.MatchString(p.RequesterKey) {
		errs = append(errs, errors.New("requester_key is not a sha256 hex digest"))
	}
	return errors.Join(errs...)
}
