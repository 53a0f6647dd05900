// Package analyses appends verdict analysis requests: texts and pages
// submitted to the workbench or its API, and registered post versions the
// extension asks about. An analysis id derives from the content (the post
// version, or the sha256 of the normalised text), the analysis type and
// the prompt version, so repeated and concurrent requests for the same
// content name one analysis, and the analyst starts it once.
package analyses

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
)

// Appender appends events (producers.Appender).
type Appender interface {
	NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// Input is what an analysis reads.
type Input struct {
	// Kind is events.AnalysisInputText, AnalysisInputURL or AnalysisInputPost.
	Kind string
	// Text is the normalised text (NormalizeText, Page.Text, or a post
	// version's canonical text).
	Text string
	// URL and Title name the page (URL) or the post (POST), when known.
	URL, Title string
	// The registered version, for POST.
	Platform, ExternalID, PostID, PostVersionID string
}

// Requester says who asked: events.AnalysisSource*, the keyed hash of the
// caller, the request's correlation id.
type Requester struct {
	Source        string
	RequesterKey  string
	CorrelationID string
}

// Service appends analysis requests under one prompt version.
type Service struct {
	appender      Appender
	promptVersion string
}

// New returns a service requesting analyses under promptVersion, the
// version of the analyst's prompts (part of every analysis id).
func New(appender Appender, promptVersion string) (*Service, error) {
	if promptVersion == "" {
		return nil, errors.New("analyses: the prompt version is required")
	}
	return &Service{appender: appender, promptVersion: promptVersion}, nil
}

// ID is the analysis id of in: what a request of in appends, and what an
// earlier request of the same content already named.
func (s *Service) ID(in Input) string {
	return events.AnalysisID(events.AnalysisContentKey(in.Kind, in.PostVersionID, contentSHA256(in.Text)),
		events.AnalysisTypeVerdict, s.promptVersion)
}

// Request appends analysis.requested.v1 for in and returns the analysis id
// and where the event landed. The first request of an id starts the
// analysis; a later one changes nothing.
func (s *Service) Request(ctx context.Context, in Input, who Requester) (string, producers.Position, error) {
	sum := contentSHA256(in.Text)
	p := &events.AnalysisRequestedV1{
		AnalysisID:    s.ID(in),
		AnalysisType:  events.AnalysisTypeVerdict,
		PromptVersion: s.promptVersion,
		InputKind:     in.Kind,
		Platform:      in.Platform,
		ExternalID:    in.ExternalID,
		PostID:        in.PostID,
		PostVersionID: in.PostVersionID,
		URL:           in.URL,
		Title:         in.Title,
		Text:          in.Text,
		ContentSHA256: sum,
		Source:        who.Source,
		RequesterKey:  who.RequesterKey,
	}
	ev, err := s.appender.NewEvent(p, who.CorrelationID, "")
	if err != nil {
		return "", producers.Position{}, err
	}
	pos, err := s.appender.Append(ctx, ev)
	if err != nil {
		return "", producers.Position{}, err
	}
	return p.AnalysisID, pos[0], nil
}

func contentSHA256(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
