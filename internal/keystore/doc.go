// Package keystore holds users' own provider API keys (the
// x-openai-api-key of investigateNow) for the short time an investigation
// may need them, outside the event log: the log is kept forever and
// replayed, a user's key must be neither.
//
// Keys are encrypted with AES-256-GCM under a key ring (a current key id
// and every key still accepted, 32 random bytes each, base64 in
// configuration). Each ciphertext has a fresh random 96-bit nonce and
// associated data binding it to the key id, the investigation id and the
// expiry. Rotation: add a new key and make it current; rows written under
// older ids still decrypt while their id is in the ring, and since rows live
// for at most the TTL (DefaultTTL, 15 minutes), an old key can be dropped
// one TTL after the switch.
//
// Rows live in their own Postgres schema (Schema, migrated by Migrate). The
// first key attached to an investigation wins; a later Attach is a no-op
// (AlreadyAttached) until that key expires. Expired rows count as absent:
// reading one deletes it and reports ErrExpired once, after which it is
// ErrNotFound; Purge removes them in bulk. Delete removes an
// investigation's key when it completes or fails.
//
// A key is stored before the event recording its attachment is appended,
// and the two cannot be one atomic write. Announce closes the gap: it
// appends that event once per stored key, serialized on the key's row, and
// marks the row announced; until then any later request or the
// investigator announces it.
//
// Plaintext keys cross this package's API only as logging.Secret, and no
// error carries one.
package keystore
