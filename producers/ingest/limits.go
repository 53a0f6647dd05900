package ingest

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/errata-dev/errata/events/content"
)

// Limits on every string registerObservedVersion stores (README.md, "Input
// limits", lists them; a test keeps the two in step). A registration that
// breaks one is refused with BAD_REQUEST naming the field, and nothing is
// appended: an event the stores would refuse must never reach the log,
// where it would stay forever.
//
// Lengths count characters (Unicode code points), so a name in any script
// gets the same room. They are generous next to the platforms' own limits
// (an X handle has at most 15 characters, a display name 50, a Wikipedia
// title 255 bytes) and small enough that every indexed value fits a
// Postgres btree entry (2,704 bytes) at 4 bytes per character: authors are
// unique on (platform, platform_user_id), posts on (platform, external_id),
// and LessWrong slugs are indexed.
const (
	// MaxExternalIDChars: externalId (LessWrong ids have 17 characters,
	// tweet ids 19 digits); also batchStatus' externalId.
	MaxExternalIDChars = 256
	// MaxHandleChars: X authorHandle (after trimming spaces and one "@"),
	// Substack authorSubstackHandle and Threads username (whose syntax
	// allows 30).
	MaxHandleChars = 64
	// MaxBlueskyHandleChars: Bluesky handle (after trimming spaces and one
	// "@"), a domain name: the AT Protocol's own limit.
	MaxBlueskyHandleChars = content.MaxBlueskyHandleChars
	// MaxSlugChars: LessWrong slug and authorSlug, Substack slug.
	MaxSlugChars = 512
	// MaxDisplayNameChars: X authorDisplayName, LessWrong and Substack
	// authorName, Bluesky and Threads displayName.
	MaxDisplayNameChars = 256
	// MaxTitleChars: LessWrong, Substack and Wikipedia title, Wikipedia displayTitle.
	MaxTitleChars = 1000
	// MaxSubtitleChars: Substack subtitle.
	MaxSubtitleChars = 2000
	// MaxTags and MaxTagChars: LessWrong tags.
	MaxTags     = 100
	MaxTagChars = 256
	// MaxCaptionChars: observedImageOccurrences[].captionText (real
	// Wikipedia captions run to a few hundred characters).
	MaxCaptionChars = 4000
	// MaxSubdomainChars: Substack publicationSubdomain (a DNS name).
	MaxSubdomainChars = 253
	// MaxPlatformIDChars: Substack substackPostId.
	MaxPlatformIDChars = 64
	// MaxURLLength: url, observedImageUrls[], X mediaUrls[] and image
	// occurrences' sourceUrl, in bytes; each must be an absolute http(s)
	// URL with a host.
	MaxURLLength = 4096
	// MaxImageURLs: observedImageUrls and X mediaUrls.
	MaxImageURLs = 256
	// MaxCount: likeCount, retweetCount, commentCount (stored as 32-bit integers).
	MaxCount = math.MaxInt32
)

// Content text (observedContentText, X metadata.text, htmlContent) keeps its
// size limits, MaxObservedTextBytes and MaxObservedTextUTF16, and must not
// contain NUL either.

// CheckString validates a string that is stored: valid UTF-8 (JSON decoding
// already turns lone surrogates and invalid bytes into U+FFFD, which every
// store accepts; this guards callers that build input otherwise), no NUL
// (Postgres refuses it in text and jsonb), and at most maxChars characters.
// The error is an *InputError naming field.
func CheckString(field, s string, maxChars int) error {
	if !utf8.ValidString(s) {
		return inputErr(field, "is not valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return inputErr(field, "must not contain NUL (U+0000)")
	}
	if n := utf8.RuneCountInString(s); n > maxChars {
		return inputErr(field, "longer than %d characters (got %d)", maxChars, n)
	}
	return nil
}

// CheckExternalID validates an externalId wherever the API takes one
// (registerObservedVersion, batchStatus): non-blank, storable, bounded.
func CheckExternalID(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return inputErr(field, "must not be empty")
	}
	return CheckString(field, s, MaxExternalIDChars)
}

func checkOptional(field string, s *string, maxChars int) error {
	if s == nil {
		return nil
	}
	return CheckString(field, *s, maxChars)
}

// checkRequired: present, not blank, storable.
func checkRequired(field, s string, maxChars int) error {
	if strings.TrimSpace(s) == "" {
		return inputErr(field, "is required")
	}
	return CheckString(field, s, maxChars)
}

// checkHTTPURL: an absolute http(s) URL with a host, at most MaxURLLength
// bytes. url.Parse refuses control characters, NUL included.
func checkHTTPURL(field, raw string) error {
	if len(raw) > MaxURLLength {
		return inputErr(field, "longer than %d bytes", MaxURLLength)
	}
	if err := CheckString(field, raw, MaxURLLength); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return inputErr(field, "must be an absolute http(s) URL")
	}
	return nil
}

func checkHTTPURLs(field string, urls []string) error {
	if len(urls) > MaxImageURLs {
		return inputErr(field, "at most %d URLs", MaxImageURLs)
	}
	for i, u := range urls {
		if err := checkHTTPURL(fmt.Sprintf("%s[%d]", field, i), u); err != nil {
			return err
		}
	}
	return nil
}

// checkObservedText: content text within the size limits, without NUL.
func checkObservedText(field, s string) error {
	if !utf8.ValidString(s) {
		return inputErr(field, "is not valid UTF-8")
	}
	if len(s) > MaxObservedTextBytes {
		return inputErr(field, "exceeds %d UTF-8 bytes", MaxObservedTextBytes)
	}
	if content.UTF16Length(s) > MaxObservedTextUTF16 {
		return inputErr(field, "exceeds %d UTF-16 code units", MaxObservedTextUTF16)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return inputErr(field, "must not contain NUL (U+0000)")
	}
	return nil
}

// checkOccurrences validates what image occurrences store: their source
// URLs and captions. Positions are checked with the text
// (content.CanonicalizeOccurrences).
func checkOccurrences(occs []content.ImageOccurrence) error {
	if len(occs) > content.MaxImageOccurrences {
		return inputErr("observedImageOccurrences", "at most %d occurrences", content.MaxImageOccurrences)
	}
	for i, o := range occs {
		field := fmt.Sprintf("observedImageOccurrences[%d]", i)
		if err := checkHTTPURL(field+".sourceUrl", o.SourceURL); err != nil {
			return err
		}
		if err := checkOptional(field+".captionText", o.CaptionText, MaxCaptionChars); err != nil {
			return err
		}
	}
	return nil
}

// normalizeXHandle is the handle as stored: spaces and one leading "@"
// trimmed ("@SomeUser" and "SomeUser" are one author).
func normalizeXHandle(raw string) string {
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "@"))
}

func checkCounts(m map[string]*int) error {
	for field, v := range m {
		if v == nil {
			continue
		}
		if *v < 0 {
			return inputErr(field, "must not be negative")
		}
		if *v > MaxCount {
			return inputErr(field, "must be at most %d", MaxCount)
		}
	}
	return nil
}
