package keystore

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"time"
)

// nonceSize is GCM's standard nonce size.
const nonceSize = 12

// sealed is one encrypted key as stored.
type sealed struct {
	KeyID      string
	Nonce      []byte
	Ciphertext []byte
}

// associatedData binds a ciphertext to its key id, investigation and
// expiry (in microseconds, Postgres's precision). Key ids and canonical
// UUIDs contain no NUL, so the encoding is unambiguous.
func associatedData(keyID, investigationID string, expiresAt time.Time) []byte {
	b := make([]byte, 0, 96)
	b = append(b, "errata-keystore-v1\x00"...)
	b = append(b, keyID...)
	b = append(b, 0)
	b = append(b, investigationID...)
	b = append(b, 0)
	return strconv.AppendInt(b, expiresAt.UnixMicro(), 10)
}

// seal encrypts plaintext under the current key with a fresh random nonce.
func (r *KeyRing) seal(investigationID string, expiresAt time.Time, plaintext []byte) (sealed, error) {
	aead := r.aeads[r.current]
	nonce := make([]byte, nonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return sealed{}, fmt.Errorf("keystore: nonce: %w", err)
	}
	ct := aead.Seal(nil, nonce, plaintext, associatedData(r.current, investigationID, expiresAt))
	return sealed{KeyID: r.current, Nonce: nonce, Ciphertext: ct}, nil
}

// open decrypts s, which must have been sealed for investigationID and
// expiresAt under a key still in the ring.
func (r *KeyRing) open(investigationID string, expiresAt time.Time, s sealed) ([]byte, error) {
	aead, ok := r.aeads[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("%w: %q (ring holds %v)", ErrUnknownKeyID, s.KeyID, r.IDs())
	}
	if len(s.Nonce) != nonceSize {
		return nil, fmt.Errorf("%w: nonce of %d bytes", ErrDecrypt, len(s.Nonce))
	}
	pt, err := aead.Open(nil, s.Nonce, s.Ciphertext, associatedData(s.KeyID, investigationID, expiresAt))
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}
