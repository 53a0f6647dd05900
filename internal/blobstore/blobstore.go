// Package blobstore keeps binary objects, the images downloaded for
// investigations today, under short slash-separated keys: in a local
// directory (Dir) or in an S3-compatible bucket (S3: AWS, MinIO, R2).
//
// Keys are restricted to lower-case letters, digits and "/._-", with no
// empty, "." or ".." segment and no segment starting with a dot, so a key is
// always a safe relative path and the same key means the same object in
// every implementation. Callers use content-addressed keys
// ("images/<sha256>.png"), which makes Put idempotent in practice as well as
// by contract.
package blobstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Store keeps objects by key. Implementations are safe for concurrent use.
type Store interface {
	// Put stores data under key with its media type, replacing any object
	// already there. Storing the same data twice is harmless.
	Put(ctx context.Context, key string, data []byte, contentType string) error
	// Get returns the object's bytes and media type, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, string, error)
	// Exists reports whether an object is stored under key.
	Exists(ctx context.Context, key string) (bool, error)
}

// Errors callers branch on with errors.Is.
var (
	// ErrNotFound: no object under the key.
	ErrNotFound = errors.New("blobstore: not found")
	// ErrInvalidKey: the key breaks the rules in the package documentation.
	ErrInvalidKey = errors.New("blobstore: invalid key")
)

// MaxKeyLength bounds keys well below every backend's limit (S3: 1024
// bytes, file names: 255 bytes per segment).
const MaxKeyLength = 512

// maxSegmentLength keeps each segment a valid file name.
const maxSegmentLength = 200

// DefaultContentType is returned for objects stored without a media type.
const DefaultContentType = "application/octet-stream"

// ValidateKey reports why key is not a valid object key.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	if len(key) > MaxKeyLength {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidKey, MaxKeyLength)
	}
	for i := 0; i < len(key); i++ {
		if !keyByte(key[i]) {
			return fmt.Errorf("%w: %q: only a-z, 0-9 and /._- are allowed", ErrInvalidKey, key)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: %q: empty segment (leading, trailing or double slash)", ErrInvalidKey, key)
		case seg[0] == '.':
			// Covers "." and "..", and keeps dot-files free for Dir's own
			// temporary and metadata files.
			return fmt.Errorf("%w: %q: a segment starts with a dot", ErrInvalidKey, key)
		case len(seg) > maxSegmentLength:
			return fmt.Errorf("%w: %q: a segment is longer than %d bytes", ErrInvalidKey, key, maxSegmentLength)
		}
	}
	return nil
}

func keyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '/' || c == '.' || c == '_' || c == '-'
}

// validPrefix reports whether p can prefix keys: empty, or a valid key
// ending in a slash.
func validPrefix(p string) error {
	if p == "" {
		return nil
	}
	if !strings.HasSuffix(p, "/") {
		return fmt.Errorf("%w: prefix %q must end with a slash", ErrInvalidKey, p)
	}
	if err := ValidateKey(strings.TrimSuffix(p, "/")); err != nil {
		return fmt.Errorf("prefix: %w", err)
	}
	return nil
}

// validContentType accepts a plain media type: no line breaks or control
// characters that could split a header or a metadata file.
func validContentType(ct string) error {
	if len(ct) > 255 {
		return fmt.Errorf("blobstore: content type longer than 255 bytes")
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] == 0x7f {
			return fmt.Errorf("blobstore: content type %q contains a control character", ct)
		}
	}
	return nil
}
