package websearch

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"time"
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
		out = append(out, Result{Title: title, URL: u, Snippet: cleanText(r.Snippet, maxSnippetRunes), PublishedAt: r.PublishedAt})
	}
	return out
}

// dateLayouts are the date forms providers send: RFC 3339, the same
// without a zone (SearXNG's publishedDate, Brave's page_age), a bare date,
// and HTTP dates (Tavily's news results).
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02", time.RFC1123, time.RFC1123Z}

// Dates outside these years are not dates of a web page.
const (
	minDateYear = 1900
	maxDateYear = 2200
)

// parseDate reads a provider's date (a zone-less one is UTC); anything it
// cannot read, or outside 1900-2200, is the zero time: no date.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < minDateYear || t.Year() > maxDateYear {
				return time.Time{}
			}
			return t.UTC()
		}
	}
	return time.Time{}
}
