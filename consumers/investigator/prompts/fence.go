package prompts

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Headings of the input sections the prompts describe.
const (
	HeadingPost        = "### Post text"
	HeadingChanges     = "### Changes since the investigated version"
	HeadingPriorClaims = "### Prior claims"
	HeadingCandidate   = "### Candidate claim"
)

// fenceTokenBytes is the random token's size: 128 bits, so content cannot
// guess it, and a chance collision with content is checked anyway.
const fenceTokenBytes = 16

// maxFenceAttempts bounds the redraws; a collision of a 128-bit random token
// with content is already astronomically unlikely, so reaching it means the
// random source is broken.
const maxFenceAttempts = 64

// Fence returns a pair of marker lines for untrusted content: a fresh random
// token that occurs in none of contents (compared case-insensitively), so
// the content cannot close the fence early or imitate it. Pass every piece
// of content that will be fenced in one request, so one pair serves them all.
func Fence(contents ...string) (open, closing string) {
	return fenceFrom(func(b []byte) { _, _ = rand.Read(b) }, contents...)
}

// fenceFrom is Fence with an injectable random source, for tests.
func fenceFrom(random func([]byte), contents ...string) (open, closing string) {
	lowered := make([]string, len(contents))
	for i, c := range contents {
		lowered[i] = strings.ToLower(c)
	}
	buf := make([]byte, fenceTokenBytes)
	for range maxFenceAttempts {
		random(buf)
		token := hex.EncodeToString(buf)
		if !containsAny(lowered, token) {
			return "<<<UNTRUSTED-DATA-BEGIN " + token + ">>>", "<<<UNTRUSTED-DATA-END " + token + ">>>"
		}
	}
	panic("prompts: could not draw a fence token absent from the content; the random source is broken")
}

func containsAny(haystacks []string, needle string) bool {
	for _, h := range haystacks {
		if strings.Contains(h, needle) {
			return true
		}
	}
	return false
}

// Section formats one text-only input section: the heading line, then body
// between the fence lines. Sections are concatenated in the order the
// prompt describes.
func Section(heading, open, closing, body string) string {
	return heading + "\n" + open + "\n" + body + "\n" + closing + "\n"
}
