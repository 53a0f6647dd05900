package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Header names mirrored from the envelope into every Kafka record, so a
// consumer can skip records it does not handle without decoding the value.
const (
	HeaderID      = "errata-id"
	HeaderType    = "errata-type"
	HeaderSubject = "errata-subject"
)

// validType reports whether t is "<aggregate>.<name>.v<N>", e.g.
// "post.view_recorded.v1": two words of [a-z][a-z0-9_]* and a version
// without leading zeros. Written out rather than a regular expression
// because every decoded record is checked.
func validType(t string) bool {
	word := func(s string) bool {
		if s == "" || s[0] < 'a' || s[0] > 'z' {
			return false
		}
		for i := 1; i < len(s); i++ {
			if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
				return false
			}
		}
		return true
	}
	aggregate, rest, ok := strings.Cut(t, ".")
	if !ok || !word(aggregate) {
		return false
	}
	name, version, ok := strings.Cut(rest, ".")
	if !ok || !word(name) || len(version) < 2 || version[0] != 'v' || version[1] < '1' || version[1] > '9' {
		return false
	}
	for i := 2; i < len(version); i++ {
		if version[i] < '0' || version[i] > '9' {
			return false
		}
	}
	return true
}

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
	if !validType(e.Type) {
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

// validUUID reports whether s is a UUID in canonical lowercase form
// (8-4-4-4-12 lowercase hex digits), checked without parsing or
// allocating: every decoded record has a few.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}
