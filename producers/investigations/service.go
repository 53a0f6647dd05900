// Package investigations appends investigation requests: investigateNow
// from the API and the selector's picks go through the same event, whose
// investigation id derives from the post version, so concurrent requests
// for one version name one investigation.
package investigations

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
)

// Version names the post version to investigate.
type Version struct {
	PostID, PostVersionID, Platform, ExternalID, VersionHash string
}

// Request is one request for an investigation.
type Request struct {
	Version
	Source string
	// RequesterKey is the keyed hash of the caller (INVESTIGATE_NOW).
	RequesterKey  string
	CorrelationID string
	// UserKey is the caller's own OpenAI key, attached to the
	// investigation while it is PENDING (empty: none).
	UserKey logging.Secret
}

// KeyStore seals users' keys (keystore.Store).
type KeyStore interface {
	Attach(ctx context.Context, investigationID string, plaintext logging.Secret, now time.Time) (keystore.AttachOutcome, error)
	TTL() time.Duration
	CurrentKeyID() string
}

// ErrUserKeysDisabled: a user key was given but no key store is configured.
var ErrUserKeysDisabled = errors.New("this instance does not accept users' OpenAI keys")

// Service appends investigation requests.
type Service struct {
	appender *producers.Appender
	keys     KeyStore
	now      func() time.Time
}

// New returns a service; keys may be nil (user keys refused).
func New(appender *producers.Appender, keys KeyStore, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{appender: appender, keys: keys, now: now}
}

// Request appends the request (and, when a user key was attached by this
// call, the record of it) and returns the last position.
func (s *Service) Request(ctx context.Context, r Request) (producers.Position, error) {
	invID := events.InvestigationID(r.PostVersionID)
	payloads := []events.Payload{&events.InvestigationRequestedV1{
		InvestigationID: invID, PostID: r.PostID, PostVersionID: r.PostVersionID, Platform: r.Platform,
		ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: r.Source, RequesterKey: r.RequesterKey,
	}}
	if r.UserKey != "" {
		if s.keys == nil {
			return producers.Position{}, ErrUserKeysDisabled
		}
		now := s.now()
		outcome, err := s.keys.Attach(ctx, invID, r.UserKey, now)
		if err != nil {
			return producers.Position{}, fmt.Errorf("attach user key: %w", err)
		}
		if outcome == keystore.Attached {
			payloads = append(payloads, &events.InvestigationKeyAttachedV1{InvestigationID: invID,
				KeyID: s.keys.CurrentKeyID(), ExpiresAt: now.Add(s.keys.TTL()).UTC().Format(time.RFC3339Nano)})
		}
	}
	evs := make([]events.Event, 0, len(payloads))
	for _, p := range payloads {
		ev, err := s.appender.NewEvent(p, r.CorrelationID, "")
		if err != nil {
			return producers.Position{}, err
		}
		evs = append(evs, ev)
	}
	pos, err := s.appender.Append(ctx, evs...)
	if err != nil {
		return producers.Position{}, err
	}
	return pos[len(pos)-1], nil
}
