package keystore

import "errors"

// Errors for errors.Is. None of them, nor anything wrapping them here,
// carries key material.
var (
	// ErrNotFound: no key is stored for the investigation.
	ErrNotFound = errors.New("keystore: no key for the investigation")
	// ErrExpired: the investigation's key expired (and has been deleted).
	ErrExpired = errors.New("keystore: the key expired")
	// ErrDecrypt: the stored ciphertext failed authentication: it was
	// altered, moved to another investigation, or given another expiry.
	ErrDecrypt = errors.New("keystore: ciphertext failed authentication")
	// ErrUnknownKeyID: the row was encrypted under a key id the ring no
	// longer holds.
	ErrUnknownKeyID = errors.New("keystore: encryption key id not in the key ring")
	// ErrInvalidInput: a malformed investigation id or plaintext.
	ErrInvalidInput = errors.New("keystore: invalid input")
	// ErrAnnouncing: another caller is announcing the key's attachment
	// right now (Announce).
	ErrAnnouncing = errors.New("keystore: the key's attachment is being announced")
	// ErrAnnouncementNotRecorded: Announce's announce succeeded but
	// recording it failed; the attachment is announced again next time.
	ErrAnnouncementNotRecorded = errors.New("keystore: the announcement was made but not recorded")
)
