package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/google/uuid"
)

// Header names mirrored from the envelope into every Kafka record, so a
// consumer can skip records it does not handle without decoding the value.
const (
	HeaderID      = "errata-id"
	HeaderType    = "errata-type"
	HeaderSubject = "errata-subject"
)

// typePattern is "<aggregate>.<name>.v<N>", e.g. "post.view_recorded.v1".
var typePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.v[1-9][0-9]*$`)

// Envelope is the wire form of one event: metadata plus the raw payload.
type Envelope struct {
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	Subject       string          `json:"subject"`
	Time          time.Time       `json:"time"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	CausationID   string          `json:"causation_id,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// Validate checks the envelope metadata; the payload is checked by the registry.
func (e Envelope) Validate() error {
	var errs []error
	if !validUUID(e.ID) {
		errs = append(errs, fmt.Errorf("id %q is not a UUID", e.ID))
	}
	if !typePattern.MatchString(e.Type) {
		errs = append(errs, fmt.Errorf("type %q is not <aggregate>.<name>.v<N>", e.Type))
	}
	if e.Subject == "" {
		errs = append(errs, errors.New("subject is empty"))
	}
	if e.Time.IsZero() {
		errs = append(errs, errors.New("time is zero"))
	}
	if len(e.Data) == 0 || string(e.Data) == "null" {
		errs = append(errs, errors.New("data is empty"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid envelope: %w", err)
	}
	return nil
}

// Payload is implemented by every event payload type. EventType is the
// versioned wire name; it never derives from the Go type name.
type Payload interface {
	EventType() string
	Validate() error
}

// Event is a decoded event: envelope metadata plus its typed payload.
type Event struct {
	ID            string
	Subject       string
	Time          time.Time
	CorrelationID string
	CausationID   string
	Payload       Payload
}

// Type returns the payload's versioned type string.
func (e Event) Type() string { return e.Payload.EventType() }

// Meta carries the metadata a producer chooses for a new event.
type Meta struct {
	ID            string
	Time          time.Time
	CorrelationID string
	CausationID   string
}

// validUUID reports whether s is a UUID in canonical lowercase form.
func validUUID(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.String() == s
}
