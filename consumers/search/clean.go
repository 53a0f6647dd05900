package search

import (
	"html"
	"net/url"
	"regexp"
	"strings"
)

// Bounds of a cleaned result's fields.
const (
	maxTitleRunes   = 300
	maxSnippetRunes = 1000
	maxURLBytes     = 2048
)

var tagPattern = regexp.MustCompile(`<[^>]*>`)

// cleanText turns provider text (Brave marks matches with <strong>, all of
// them may carry entities) into one line of plain text of at most maxRunes.
// Tags are stripped before entities are decoded, so an escaped "&lt;" in
// the text survives as "<".
func cleanText(s string, maxRunes int) string {
	s = tagPattern.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxRunes {
		s = strings.TrimSpace(string(r[:maxRunes-1])) + "…"
	}
	return s
}

// cleanURL returns u if it is an absolute http(s) URL of reasonable length.
func cleanURL(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > maxURLBytes {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	return u.String(), true
}

// finish cleans raw results in order, drops those without a usable URL and
// repeats of an earlier URL, and keeps at most limit.
func finish(raw []Result, limit int) []Result {
	out := make([]Result, 0, min(len(raw), limit))
	seen := map[string]bool{}
	for _, r := range raw {
		if len(out) == limit {
			break
		}
		u, ok := cleanURL(r.URL)
		if !ok || seen[u] {
			continue
		}
		seen[u] = true
		title := cleanText(r.Title, maxTitleRunes)
		if title == "" {
			title = u
		}
		out = append(out, Result{Title: title, URL: u, Snippet: cleanText(r.Snippet, maxSnippetRunes)})
	}
	return out
}
