package investigator

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/errata-dev/errata/events/content"
)

var (
	mdLink     = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdEmphasis = strings.NewReplacer("**", "", "__", "", "`", "")
	mdLeading  = regexp.MustCompile(`(?m)^\s*(#{1,6}\s+|>\s*|[-*+]\s+|\d+\.\s+)`)
	mdStar     = regexp.MustCompile(`(^|[\s(])[*_]([^*_\s][^*_]*?)[*_]([\s).,;:!?]|$)`)
)

// stripMarkdown removes the Markdown the model may have copied from the
// rendered input: links keep their text, emphasis and code marks go, and
// so do heading, quote and list markers.
func stripMarkdown(s string) string {
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdEmphasis.Replace(s)
	s = mdStar.ReplaceAllString(s, "$1$2$3")
	return mdLeading.ReplaceAllString(s, "")
}

// quoteIn finds q in the normalized post text, as written or without the
// Markdown the model may have copied; it returns the matching form.
func quoteIn(text, q string) (string, bool) {
	for _, cand := range []string{content.Normalize(q), content.Normalize(stripMarkdown(q))} {
		if cand != "" && strings.Contains(text, cand) {
			return cand, true
		}
	}
	return "", false
}

// contextWords is about how many words of context each side of a claim
// the extension needs to tell repeated quotes apart.
const contextWords = 10

// verbatimClaim checks that a claim is a verbatim quote of the normalized
// post text and returns the claim text and context to publish. The context
// is the model's when it is itself verbatim and contains the claim;
// otherwise it is cut from the post around the claim's first occurrence.
func verbatimClaim(text, claim, ctx string) (string, string, bool) {
	c, ok := quoteIn(text, claim)
	if !ok || len([]rune(c)) < 3 {
		return "", "", false
	}
	if cx, ok := quoteIn(text, ctx); ok && strings.Contains(cx, c) {
		return c, cx, true
	}
	i := strings.Index(text, c)
	return c, surrounding(text, i, i+len(c), contextWords), true
}

// surrounding widens text[start:end] by n words each side.
func surrounding(text string, start, end, n int) string {
	for words := 0; start > 0 && words <= n; {
		start--
		if unicode.IsSpace(rune(text[start])) {
			words++
		}
	}
	for start < len(text) && unicode.IsSpace(rune(text[start])) {
		start++
	}
	for words := 0; end < len(text) && words <= n; end++ {
		if unicode.IsSpace(rune(text[end])) {
			words++
		}
	}
	return strings.TrimSpace(text[start:end])
}
