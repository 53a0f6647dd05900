package events

import (
	"github.com/google/uuid"
)

// namespace roots every deterministic Errata identifier (UUIDv5 / SHA-1).
var namespace = uuid.MustParse("6f0c1f4e-6b7e-4b0a-9a53-4c1d2f7e0a11")

func derive(kind string, parts ...string) string {
	name := kind
	for _, p := range parts {
		name += "\x00" + p
	}
	return uuid.NewSHA1(namespace, []byte(name)).String()
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
