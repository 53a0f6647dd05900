package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ImageOccurrence is one image's position in a version: which image it is in
// page order (OriginalIndex), where it sits in the normalized text (a UTF-16
// offset, as the extension measures it), its URL and optional caption.
// Occurrences are part of version identity: the same text with images moved
// is a different version.
type ImageOccurrence struct {
	OriginalIndex        int     `json:"originalIndex"`
	NormalizedTextOffset int     `json:"normalizedTextOffset"`
	SourceURL            string  `json:"sourceUrl"`
	CaptionText          *string `json:"captionText,omitempty"`
}

// MaxImageOccurrences is the most occurrences one observed version may carry.
const MaxImageOccurrences = 256

// Validation failures. Every error returned by CanonicalizeOccurrences
// wraps ErrInvalidImageOccurrences and exactly one of the more specific
// errors, so callers can test either with errors.Is.
var (
	ErrInvalidImageOccurrences    = errors.New("invalid image occurrences")
	ErrTooManyImageOccurrences    = fmt.Errorf("more than %d image occurrences", MaxImageOccurrences)
	ErrNegativeImageOccurrence    = errors.New("originalIndex and normalizedTextOffset must be non-negative")
	ErrInvalidImageSourceURL      = errors.New("sourceUrl must be an absolute http(s) URL")
	ErrEmptyImageCaption          = errors.New("captionText, when present, must be non-empty")
	ErrNonContiguousOriginalIndex = errors.New("originalIndex values must be 0, 1, 2, ... with no gaps or repeats")
	ErrOffsetExceedsContentLength = errors.New("normalizedTextOffset exceeds the content text length")
	ErrDecreasingTextOffset       = errors.New("normalizedTextOffset must not decrease as originalIndex increases")
)

func occurrenceError(specific error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrInvalidImageOccurrences, specific, fmt.Sprintf(format, args...))
}

// CanonicalizeOccurrences validates occurrences against contentText and
// returns them in canonical form: sorted by OriginalIndex, captions trimmed
// of JavaScript whitespace and dropped when that leaves them empty. The input
// slice is not modified.
//
// The rules are the reference's: at most MaxImageOccurrences entries;
// non-negative integers; an absolute http(s) source URL; a caption, when
// present, of at least one character; after sorting, originalIndex must equal
// the position (contiguous from 0, so no duplicates), every offset must be at
// most the UTF-16 length of contentText, and offsets must be non-decreasing.
func CanonicalizeOccurrences(occurrences []ImageOccurrence, contentText string) ([]ImageOccurrence, error) {
	if len(occurrences) > MaxImageOccurrences {
		return nil, occurrenceError(ErrTooManyImageOccurrences, "got %d", len(occurrences))
	}
	for i, o := range occurrences {
		if o.OriginalIndex < 0 || o.NormalizedTextOffset < 0 {
			return nil, occurrenceError(ErrNegativeImageOccurrence, "entry %d has originalIndex %d, normalizedTextOffset %d", i, o.OriginalIndex, o.NormalizedTextOffset)
		}
		if !isAbsoluteHTTPURL(o.SourceURL) {
			return nil, occurrenceError(ErrInvalidImageSourceURL, "entry %d has sourceUrl %q", i, o.SourceURL)
		}
		if o.CaptionText != nil && *o.CaptionText == "" {
			return nil, occurrenceError(ErrEmptyImageCaption, "entry %d", i)
		}
	}

	sorted := slices.Clone(occurrences)
	slices.SortStableFunc(sorted, func(a, b ImageOccurrence) int { return a.OriginalIndex - b.OriginalIndex })
	contentLength := UTF16Length(contentText)
	for position, o := range sorted {
		if o.OriginalIndex != position {
			return nil, occurrenceError(ErrNonContiguousOriginalIndex, "position %d has originalIndex %d", position, o.OriginalIndex)
		}
		if o.NormalizedTextOffset > contentLength {
			return nil, occurrenceError(ErrOffsetExceedsContentLength, "originalIndex %d has offset %d, content length %d", o.OriginalIndex, o.NormalizedTextOffset, contentLength)
		}
		if position > 0 && o.NormalizedTextOffset < sorted[position-1].NormalizedTextOffset {
			return nil, occurrenceError(ErrDecreasingTextOffset, "originalIndex %d has offset %d after %d", o.OriginalIndex, o.NormalizedTextOffset, sorted[position-1].NormalizedTextOffset)
		}
		sorted[position].CaptionText = nil
		if o.CaptionText != nil {
			if caption := jsTrim(validUTF8(*o.CaptionText)); caption != "" {
				sorted[position].CaptionText = &caption
			}
		}
	}
	return sorted, nil
}

// isAbsoluteHTTPURL accepts absolute http and https URLs with a host.
func isAbsoluteHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme == "http" || scheme == "https"
}

// SerializeOccurrences validates and canonicalizes occurrences (see
// CanonicalizeOccurrences) and encodes them as the JSON the occurrences hash
// is taken over: an array of objects with keys in the order originalIndex,
// normalizedTextOffset, sourceUrl, captionText (omitted when absent), no
// whitespace, and no HTML escaping. No occurrences encode as "[]".
func SerializeOccurrences(occurrences []ImageOccurrence, contentText string) (string, error) {
	canonical, err := CanonicalizeOccurrences(occurrences, contentText)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	appendCanonicalOccurrences(&b, canonical)
	return b.String(), nil
}

// appendCanonicalOccurrences writes already canonical occurrences as JSON.
func appendCanonicalOccurrences(b *strings.Builder, canonical []ImageOccurrence) {
	b.WriteByte('[')
	for i, o := range canonical {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"originalIndex":`)
		b.WriteString(strconv.Itoa(o.OriginalIndex))
		b.WriteString(`,"normalizedTextOffset":`)
		b.WriteString(strconv.Itoa(o.NormalizedTextOffset))
		b.WriteString(`,"sourceUrl":`)
		appendJSONString(b, o.SourceURL)
		if o.CaptionText != nil {
			b.WriteString(`,"captionText":`)
			appendJSONString(b, *o.CaptionText)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

// OccurrencesHash is the lowercase hex SHA-256 of SerializeOccurrences.
func OccurrencesHash(occurrences []ImageOccurrence, contentText string) (string, error) {
	serialized, err := SerializeOccurrences(occurrences, contentText)
	if err != nil {
		return "", err
	}
	return sha256Hex(serialized), nil
}

// EmptyOccurrencesHash is the occurrences hash of a version without images,
// sha256("[]").
const EmptyOccurrencesHash = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
