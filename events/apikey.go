package events

import (
	"errors"
	"fmt"
)

// Event type strings of the instance API key aggregate.
//
//nolint:gosec // G101: names of event types, not credentials
const (
	TypeAPIKeyAddedV1   = "apikey.added.v1"
	TypeAPIKeyRevokedV1 = "apikey.revoked.v1"
)

// TopicAPIKeys carries instance API key management, keyed by key id.
const TopicAPIKeys Topic = "api-keys"

// APIKeyID is the identity of an instance API key, derived from its hash.
func APIKeyID(keySHA256 string) string { return derive("api-key", keySHA256) }

// APIKeyAddedV1 records a new instance API key. Only the sha256 of the
// (trimmed) key is ever written; the key itself is shown once to the operator.
type APIKeyAddedV1 struct {
	KeyID     string `json:"key_id"`
	KeySHA256 string `json:"key_sha256"`
	Label     string `json:"label"`
}

// EventType implements Payload.
func (APIKeyAddedV1) EventType() string { return TypeAPIKeyAddedV1 }

// Validate implements Payload.
func (p APIKeyAddedV1) Validate() error {
	var errs []error
	if !isSHA256Hex(p.KeySHA256) {
		errs = append(errs, errors.New("key_sha256 is not 64 lowercase hex characters"))
	}
	if p.KeyID != APIKeyID(p.KeySHA256) {
		errs = append(errs, errors.New("key_id does not derive from key_sha256"))
	}
	if len(p.Label) > 200 {
		errs = append(errs, fmt.Errorf("label is longer than 200 bytes"))
	}
	return errors.Join(errs...)
}

// APIKeyRevokedV1 records that an instance API key no longer authenticates.
type APIKeyRevokedV1 struct {
	KeyID  string `json:"key_id"`
	Reason string `json:"reason,omitempty"`
}

// EventType implements Payload.
func (APIKeyRevokedV1) EventType() string { return TypeAPIKeyRevokedV1 }

// Validate implements Payload.
func (p APIKeyRevokedV1) Validate() error {
	if !validUUID(p.KeyID) {
		return errors.New("key_id is not a UUID")
	}
	if len(p.Reason) > 500 {
		return errors.New("reason is longer than 500 bytes")
	}
	return nil
}
