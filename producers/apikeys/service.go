// Package apikeys manages instance API keys: it generates keys, appends
// apikey.added.v1 / apikey.revoked.v1, and hashes presented keys the way the
// log stores them. The plaintext of a key exists only in the answer to Add;
// only its sha256 is ever written.
package apikeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
)

// KeyPrefix starts every generated key, so a leaked key is recognizable
// (e.g. by secret scanners) as an Errata instance key.
const KeyPrefix = "erk_"

// keyBytes is the key's entropy: 256 bits from crypto/rand.
const keyBytes = 32

// Limits of the event schema.
const (
	MaxLabelBytes  = 200
	MaxReasonBytes = 500
)

// Generate returns a new random key: KeyPrefix + base64url (no padding) of
// 32 random bytes, 47 characters in all.
func Generate() (string, error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate api key: %w", err)
	}
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Hash is what the log stores of a key: sha256 hex of the trimmed key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
	return hex.EncodeToString(sum[:])
}

// KeyID is the key id of a (plaintext) key.
func KeyID(key string) string { return events.APIKeyID(Hash(key)) }

// ResolveKeyID turns what an operator typed (a key id as listed, or the key
// itself) into the key id. isKey reports that the argument was a key.
func ResolveKeyID(keyOrID string) (id string, isKey bool, err error) {
	s := strings.TrimSpace(keyOrID)
	if s == "" {
		return "", false, errors.New("give a key id or a key")
	}
	if len(s) == 36 {
		if u, err := uuid.Parse(s); err == nil {
			return u.String(), false, nil
		}
	}
	return KeyID(s), true, nil
}

// Appender appends events (producers.Appender).
type Appender interface {
	NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// Service appends instance API key events.
type Service struct {
	appender Appender
	generate func() (string, error)
}

// NewService returns the key service appending through a.
func NewService(a Appender) *Service { return &Service{appender: a, generate: Generate} }

// Added is the result of Add. Key is the only copy of the plaintext key; it
// prints as "[redacted]" everywhere but through Key.Reveal().
type Added struct {
	KeyID    string
	Key      logging.Secret
	Label    string
	Position producers.Position
}

// Revoked is the result of Revoke.
type Revoked struct {
	KeyID    string
	Position producers.Position
}

// Add generates a key labelled label and appends its apikey.added.v1.
func (s *Service) Add(ctx context.Context, label string) (Added, error) {
	label = strings.TrimSpace(label)
	if err := checkText("label", label, MaxLabelBytes, true); err != nil {
		return Added{}, err
	}
	key, err := s.generate()
	if err != nil {
		return Added{}, err
	}
	sha := Hash(key)
	p := &events.APIKeyAddedV1{KeyID: events.APIKeyID(sha), KeySHA256: sha, Label: label}
	pos, err := s.append(ctx, p)
	if err != nil {
		return Added{}, err
	}
	return Added{KeyID: p.KeyID, Key: logging.Secret(key), Label: label, Position: pos}, nil
}

// Revoke appends apikey.revoked.v1 for the key named by keyOrID (a key id
// or the key itself). Revocation is permanent.
func (s *Service) Revoke(ctx context.Context, keyOrID, reason string) (Revoked, error) {
	id, _, err := ResolveKeyID(keyOrID)
	if err != nil {
		return Revoked{}, err
	}
	reason = strings.TrimSpace(reason)
	if err := checkText("reason", reason, MaxReasonBytes, false); err != nil {
		return Revoked{}, err
	}
	pos, err := s.append(ctx, &events.APIKeyRevokedV1{KeyID: id, Reason: reason})
	if err != nil {
		return Revoked{}, err
	}
	return Revoked{KeyID: id, Position: pos}, nil
}

func (s *Service) append(ctx context.Context, p events.Payload) (producers.Position, error) {
	ev, err := s.appender.NewEvent(p, uuid.NewString(), "")
	if err != nil {
		return producers.Position{}, err
	}
	pos, err := s.appender.Append(ctx, ev)
	if err != nil {
		return producers.Position{}, err
	}
	return pos[0], nil
}

// checkText validates an operator-supplied label or reason.
func checkText(field, s string, maxBytes int, required bool) error {
	switch {
	case required && s == "":
		return fmt.Errorf("%s is required", field)
	case len(s) > maxBytes:
		return fmt.Errorf("%s is longer than %d bytes", field, maxBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", field)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Errorf("%s contains control characters", field)
	}
	return nil
}
