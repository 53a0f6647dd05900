package content

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Identity syntax of Bluesky and Threads posts, shared by input validation
// (producers/ingest) and server verification (producers/ingest/canonical).
// Each function accepts only the one canonical spelling of an identity, so
// one post can never be registered under two external ids.

// ErrBadIdentity reports an identifier that is not in the platform's
// canonical syntax. The errors of this file match it with errors.Is; their
// text is only the reason, ready to follow a field name.
var ErrBadIdentity = errors.New("not a canonical platform identifier")

type identityError string

func (e identityError) Error() string      { return string(e) }
func (identityError) Is(target error) bool { return target == ErrBadIdentity }

func badIdentity(format string, args ...any) error {
	return identityError(fmt.Sprintf(format, args...))
}

const blueskyURIPrefix = "at://"

// BlueskyPostCollection is the AT Protocol collection of Bluesky posts
// (the same value as events.BlueskyPostCollection).
const BlueskyPostCollection = "app.bsky.feed.post"

// MaxBlueskyHandleChars is the AT Protocol's limit on a handle.
const MaxBlueskyHandleChars = 253

var (
	// did:plc identifiers are 24 characters of lowercase base32.
	blueskyPLC = regexp.MustCompile(`^did:plc:[a-z2-7]{24}$`)
	// did:web names a host; ports (%3A) and paths are not used by Bluesky.
	blueskyWeb = regexp.MustCompile(`^did:web:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$`)
	// app.bsky.feed.post records are keyed by TIDs: 13 characters of
	// base32-sortable, the first one at most 'j'.
	blueskyTID = regexp.MustCompile(`^[2-7a-j][2-7a-z]{12}$`)
	// A handle is a DNS name of at least two labels whose last label does
	// not start with a digit (AT Protocol handle syntax), lowercased.
	blueskyHandle = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$`)
	// Threads post codes are Instagram shortcodes: URL-safe base64.
	threadsCode = regexp.MustCompile(`^[A-Za-z0-9_-]{5,64}$`)
	// Threads usernames are Instagram usernames: letters, digits, periods
	// and underscores, at most 30, case-insensitive (stored lowercased).
	threadsUsername = regexp.MustCompile(`^[a-z0-9._]{1,30}$`)
)

// ValidBlueskyDID reports whether s is a did:plc or did:web identifier in
// canonical (lowercase) form, the two DID methods Bluesky accounts use.
func ValidBlueskyDID(s string) bool {
	return len(s) <= 8+253 && (blueskyPLC.MatchString(s) || blueskyWeb.MatchString(s))
}

// ValidBlueskyRKey reports whether s is a post's record key (a TID).
func ValidBlueskyRKey(s string) bool { return blueskyTID.MatchString(s) }

// BlueskyPostURI is a Bluesky post's external id,
// at://{did}/app.bsky.feed.post/{rkey}.
func BlueskyPostURI(did, rkey string) string {
	return blueskyURIPrefix + did + "/" + BlueskyPostCollection + "/" + rkey
}

// ParseBlueskyPostURI reads a post's DID and record key from its AT URI.
// Only at://{did}/app.bsky.feed.post/{tid} is accepted: no handle as the
// authority (handles change), no other collection, no query or fragment,
// no other spelling of the same record.
func ParseBlueskyPostURI(s string) (did, rkey string, err error) {
	rest, ok := strings.CutPrefix(s, blueskyURIPrefix)
	if !ok {
		return "", "", badIdentity("must start with %q", blueskyURIPrefix)
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", "", badIdentity("must be at://{did}/%s/{rkey}", BlueskyPostCollection)
	}
	switch {
	case !ValidBlueskyDID(parts[0]):
		return "", "", badIdentity("the authority must be the author's DID (did:plc or did:web, lowercase), not a handle")
	case parts[1] != BlueskyPostCollection:
		return "", "", badIdentity("the collection must be %s", BlueskyPostCollection)
	case !ValidBlueskyRKey(parts[2]):
		return "", "", badIdentity("the record key must be a TID (13 base32-sortable characters)")
	}
	return parts[0], parts[2], nil
}

// NormalizeBlueskyHandle returns a handle as stored: spaces and one
// leading "@" trimmed, lowercased ("@Alice.bsky.social" and
// "alice.bsky.social" are one handle). It fails unless the result is a
// valid AT Protocol handle of at most MaxBlueskyHandleChars characters.
func NormalizeBlueskyHandle(raw string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "@")))
	if len(h) > MaxBlueskyHandleChars {
		return "", badIdentity("a handle has at most %d characters", MaxBlueskyHandleChars)
	}
	if !blueskyHandle.MatchString(h) {
		return "", badIdentity("a handle is a domain name such as alice.bsky.social")
	}
	return h, nil
}

// ValidThreadsCode reports whether s is a Threads post code, the last path
// segment of threads.com/@{username}/post/{code} (and threads.net).
func ValidThreadsCode(s string) bool { return threadsCode.MatchString(s) }

// NormalizeThreadsUsername returns a username as stored: spaces and one
// leading "@" trimmed, lowercased. It fails unless the result is a valid
// Threads (Instagram) username.
func NormalizeThreadsUsername(raw string) (string, error) {
	u := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "@")))
	if !threadsUsername.MatchString(u) {
		return "", badIdentity("a username has 1 to 30 letters, digits, periods or underscores")
	}
	return u, nil
}
