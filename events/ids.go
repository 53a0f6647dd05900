package events

import (
	"crypto/sha1" //nolint:gosec // UUIDv5 is defined on SHA-1; it names, it does not protect

	"github.com/google/uuid"
)

// namespace roots every deterministic Errata identifier (UUIDv5 / SHA-1).
var namespace = uuid.MustParse("6f0c1f4e-6b7e-4b0a-9a53-4c1d2f7e0a11")

// derive is uuid.NewSHA1(namespace, kind + "\x00" + parts joined by
// "\x00"), a UUIDv5, computed in a stack buffer: every decoded view and
// registration derives a few (TestDeriveIsUUIDv5 compares the two).
func derive(kind string, parts ...string) string {
	var buf [256]byte
	data := append(append(buf[:0], namespace[:]...), kind...)
	for _, p := range parts {
		data = append(append(data, 0), p...)
	}
	sum := sha1.Sum(data) //nolint:gosec // see the import
	var id uuid.UUID
	copy(id[:], sum[:])
	id[6] = id[6]&0x0f | 0x50 // version 5
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id.String()
}

// PostID is the identity of a post: one per (platform, external id).
func PostID(platform, externalID string) string {
	return derive("post", platform, externalID)
}

// PostVersionID is the identity of a content version of a post. Being derived
// from the version hash, the API can answer registerObservedVersion without
// waiting for any read model.
func PostVersionID(postID, versionHash string) string {
	return derive("post-version", postID, versionHash)
}

// AuthorID is the identity of one platform identity of an author.
func AuthorID(platform, platformUserID string) string {
	return derive("author", platform, platformUserID)
}
