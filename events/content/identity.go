package content

import (
	"fmt"
	"strings"
)

// A version of a post is identified by its normalized text and its image
// occurrences together: versionHash = sha256(contentHash + "\n" +
// occurrencesHash), all lowercase hex. The extension computes the same values,
// so every step here must be byte-exact.

// ContentHash is the lowercase hex SHA-256 of the UTF-8 bytes of normalized
// text.
func ContentHash(normalizedText string) string {
	return sha256Hex(validUTF8(normalizedText))
}

// VersionHashSeed is the string the version hash is taken over.
func VersionHashSeed(contentHash, occurrencesHash string) string {
	return contentHash + "\n" + occurrencesHash
}

// VersionHash combines a content hash and an occurrences hash.
func VersionHash(contentHash, occurrencesHash string) string {
	return sha256Hex(VersionHashSeed(contentHash, occurrencesHash))
}

// VersionIdentity is everything derived from one version's text and images.
type VersionIdentity struct {
	ContentHash           string
	OccurrencesSerialized string
	OccurrencesHash       string
	VersionHash           string
}

// ComputeVersionIdentity validates the occurrences against the text and
// derives all hashes of the version.
func ComputeVersionIdentity(normalizedText string, occurrences []ImageOccurrence) (VersionIdentity, error) {
	serialized, err := SerializeOccurrences(occurrences, normalizedText)
	if err != nil {
		return VersionIdentity{}, fmt.Errorf("version identity: %w", err)
	}
	id := VersionIdentity{
		ContentHash:           ContentHash(normalizedText),
		OccurrencesSerialized: serialized,
		OccurrencesHash:       sha256Hex(serialized),
	}
	id.VersionHash = VersionHash(id.ContentHash, id.OccurrencesHash)
	return id, nil
}

// SerializeObservedVersionIdentity encodes text and canonical occurrences as
// {"contentText":...,"imageOccurrences":[...]}, the reference's stable
// serialization of what a client observed (used to compare observations).
func SerializeObservedVersionIdentity(contentText string, occurrences []ImageOccurrence) (string, error) {
	canonical, err := CanonicalizeOccurrences(occurrences, contentText)
	if err != nil {
		return "", fmt.Errorf("observed version identity: %w", err)
	}
	var b strings.Builder
	b.WriteString(`{"contentText":`)
	appendJSONString(&b, contentText)
	b.WriteString(`,"imageOccurrences":`)
	appendCanonicalOccurrences(&b, canonical)
	b.WriteByte('}')
	return b.String(), nil
}
