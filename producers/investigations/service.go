// Package investigations appends investigation requests: investigateNow
// from the API and the selector's picks go through the same event, whose
// investigation id derives from the post version and the configuration it
// runs under, so concurrent requests for one version and configuration name
// one investigation.
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
	"github.com/errata-dev/errata/projections/serving"
)

// Version names the post version to investigate.
type Version struct {
	PostID, PostVersionID, Platform, ExternalID, VersionHash string
}

// Assignment is the configuration a new investigation runs under and the
// experiment arm that chose it (design: the producer reads it from the
// serving projection and records it in the request, so a replay never
// decides again). The zero value is the default configuration outside any
// experiment.
type Assignment = serving.Assignment

// Assigner decides which configuration an investigation of a version runs
// under, from the serving projection.
type Assigner interface {
	// Assign is the assignment of a new investigation of the version: the
	// running experiment's arm, else the active configuration.
	Assign(ctx context.Context, postVersionID string) (Assignment, error)
	// Of is the assignment an existing investigation of the version was
	// requested under (to request it again: a retry, a user's key).
	Of(ctx context.Context, postVersionID, investigationID string) (Assignment, error)
}

// Request is one request for an investigation.
type Request struct {
	Version
	// Assignment names the configuration (and experiment arm).
	Assignment Assignment
	Source     string
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
	Announce(ctx context.Context, investigationID string, now time.Time, announce func(context.Context, keystore.Attachment) error) (bool, error)
}

// Appender appends events (producers.Appender).
type Appender interface {
	NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error)
	NewEventWithID(p events.Payload, id string, at time.Time, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// ErrUserKeysDisabled means a user key was given but no key store is configured.
var ErrUserKeysDisabled = errors.New("this instance does not accept users' OpenAI keys")

// Service appends investigation requests.
type Service struct {
	appender Appender
	keys     KeyStore
	now      func() time.Time
}

// New returns a service; keys may be nil (user keys refused).
func New(appender Appender, keys KeyStore, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{appender: appender, keys: keys, now: now}
}

// Request appends the request and returns its position. A user key is
// stored first (the first key attached to an investigation wins), and the
// record of the stored key (investigation.user_key_attached) is appended
// with the request unless the log has it already: whether this call stored
// the key, or an earlier call did and failed to append it (this is the
// retry). While a concurrent call is appending that record, this one
// appends only the request; should the other append fail, the next request
// or the investigator, before the run's first attempt, appends it. So a
// stored key is recorded in the log once, and pays for the run.
func (s *Service) Request(ctx context.Context, r Request) (producers.Position, error) {
	invID := events.InvestigationIDFor(r.PostVersionID, r.Assignment.ConfigurationID)
	requested, err := s.appender.NewEvent(&events.InvestigationRequestedV1{
		InvestigationID: invID, PostID: r.PostID, PostVersionID: r.PostVersionID, Platform: r.Platform,
		ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: r.Source, RequesterKey: r.RequesterKey,
		ConfigurationID: r.Assignment.ConfigurationID, Configuration: r.Assignment.Configuration,
		ExperimentID: r.Assignment.ExperimentID, Arm: r.Assignment.Arm,
	}, r.CorrelationID, "")
	if err != nil {
		return producers.Position{}, err
	}
	if r.UserKey == "" {
		return s.append(ctx, requested)
	}
	if s.keys == nil {
		return producers.Position{}, ErrUserKeysDisabled
	}
	now := s.now()
	if _, err := s.keys.Attach(ctx, invID, r.UserKey, now); err != nil {
		return producers.Position{}, fmt.Errorf("attach user key: %w", err)
	}
	var pos producers.Position
	announced, err := s.keys.Announce(ctx, invID, now, func(ctx context.Context, a keystore.Attachment) error {
		attached, err := KeyAttached(s.appender, a, r.CorrelationID)
		if err != nil {
			return err
		}
		pos, err = s.append(ctx, requested, attached)
		return err
	})
	switch {
	case errors.Is(err, keystore.ErrAnnouncementNotRecorded):
		// Both events are in the log; the key's record may be appended
		// once more later, as the same event.
		return pos, nil
	case errors.Is(err, keystore.ErrNotFound):
		// The key is gone again (its investigation ended meanwhile):
		// there is nothing to record.
		return s.append(ctx, requested)
	case errors.Is(err, keystore.ErrAnnouncing):
		return s.append(ctx, requested)
	case err != nil:
		return producers.Position{}, err
	case announced:
		return pos, nil
	}
	return s.append(ctx, requested) // the log has the key's record already
}

func (s *Service) append(ctx context.Context, evs ...events.Event) (producers.Position, error) {
	pos, err := s.appender.Append(ctx, evs...)
	if err != nil {
		return producers.Position{}, err
	}
	return pos[len(pos)-1], nil
}

// KeyAttached is the event recording the attached key a: its id and time
// derive from the key store's row, so whoever appends it (a request, its
// retry, the investigator) appends the same event. It names the key ring
// entry and the expiry, never the key.
func KeyAttached(app Appender, a keystore.Attachment, correlationID string) (events.Event, error) {
	expires := a.ExpiresAt.UTC().Format(time.RFC3339Nano)
	return app.NewEventWithID(&events.InvestigationKeyAttachedV1{InvestigationID: a.InvestigationID, KeyID: a.KeyID,
		ExpiresAt: expires}, events.KeyAttachedEventID(a.InvestigationID, a.KeyID, expires), a.CreatedAt, correlationID, "")
}
