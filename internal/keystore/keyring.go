package keystore

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"

	"github.com/errata-dev/errata/internal/logging"
)

// KeySize is the size of every key in the ring: AES-256.
const KeySize = 32

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// KeyRing is the set of encryption keys: the current one encrypts, any of
// them decrypts. It never prints its keys.
type KeyRing struct {
	current string
	aeads   map[string]cipher.AEAD
}

// NewKeyRing builds a ring from base64 (standard encoding, padded or not)
// keys of KeySize bytes by id; currentID must be one of them. Key ids are 1
// to 64 characters of letters, digits, '.', '_' and '-'.
func NewKeyRing(currentID string, keys map[string]logging.Secret) (*KeyRing, error) {
	r := &KeyRing{current: currentID, aeads: make(map[string]cipher.AEAD, len(keys))}
	var errs []error
	for id, encoded := range keys {
		if !keyIDPattern.MatchString(id) {
			errs = append(errs, fmt.Errorf("key id %q: want 1-64 of [A-Za-z0-9._-]", id))
			continue
		}
		raw, err := decodeKey(encoded.Reveal())
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", id, err))
			continue
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", id, err))
			continue
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", id, err))
			continue
		}
		r.aeads[id] = aead
	}
	if len(errs) == 0 {
		if _, ok := keys[currentID]; !ok {
			errs = append(errs, fmt.Errorf("current key id %q is not in the key ring", currentID))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("keystore key ring: %w", err)
	}
	return r, nil
}

// decodeKey decodes a base64 key without ever echoing it in an error.
func decodeKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, errors.New("not valid base64")
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("decodes to %d bytes, want %d", len(raw), KeySize)
	}
	return raw, nil
}

// ParseKeyRing builds a ring from a configuration string of comma-separated
// id:base64key pairs, e.g. "2026a:AAAA...,2026b:BBBB...".
func ParseKeyRing(currentID string, spec logging.Secret) (*KeyRing, error) {
	keys := map[string]logging.Secret{}
	for i, part := range strings.Split(spec.Reveal(), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, key, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("keystore key ring: entry %d: want id:base64key", i+1)
		}
		id = strings.TrimSpace(id)
		if _, dup := keys[id]; dup {
			return nil, fmt.Errorf("keystore key ring: key id %q appears twice", id)
		}
		keys[id] = logging.Secret(key)
	}
	if len(keys) == 0 {
		return nil, errors.New("keystore key ring: no keys configured")
	}
	return NewKeyRing(currentID, keys)
}

// GenerateKey returns a new random key, base64-encoded, for configuration.
func GenerateKey() logging.Secret {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw)
	return logging.Secret(base64.StdEncoding.EncodeToString(raw))
}

// CurrentID is the id of the key new ciphertexts are written under.
func (r KeyRing) CurrentID() string { return r.current }

// IDs lists the ids of every key in the ring, sorted.
func (r KeyRing) IDs() []string {
	ids := make([]string, 0, len(r.aeads))
	for id := range r.aeads {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// String describes the ring by key ids only.
func (r KeyRing) String() string {
	return fmt.Sprintf("KeyRing{current: %s, ids: %s}", r.current, strings.Join(r.IDs(), ","))
}

// GoString keeps %#v from printing key material.
func (r KeyRing) GoString() string { return r.String() }

// LogValue keeps slog from printing key material.
func (r KeyRing) LogValue() slog.Value { return slog.StringValue(r.String()) }
