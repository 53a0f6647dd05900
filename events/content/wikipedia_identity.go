package content

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// WikipediaIdentityKind says which part of a Wikipedia URL identifies the page.
type WikipediaIdentityKind string

// A URL names a page either by title (/wiki/Title, index.php?title=) or by
// page id (?curid= or ?pageid=); a page id wins when both are present.
const (
	WikipediaIdentityTitle  WikipediaIdentityKind = "TITLE"
	WikipediaIdentityPageID WikipediaIdentityKind = "PAGE_ID"
)

// WikipediaURLIdentity is the page identity read from a Wikipedia URL.
// ExternalID is "{language}:{title}" or "{language}:{pageId}".
type WikipediaURLIdentity struct {
	Language     string                `json:"language"`
	Title        *string               `json:"title"`
	PageID       *string               `json:"pageId"`
	IdentityKind WikipediaIdentityKind `json:"identityKind"`
	ExternalID   string                `json:"externalId"`
}

// ErrNotWikipediaArticleURL reports a URL that does not name a Wikipedia
// article (another host, a non-article namespace such as Talk: or File:, or
// no title or page id at all).
var ErrNotWikipediaArticleURL = errors.New("not a Wikipedia article URL")

var (
	wikipediaHost      = regexp.MustCompile(`^([a-z0-9-]+)(?:\.m)?\.wikipedia\.org$`)
	wikipediaIndexPath = regexp.MustCompile(`(?i)^/w/index\.php(?:[/?#]|$)`)
)

// nonArticleNamespaces are English namespace prefixes of pages that are not
// articles.
var nonArticleNamespaces = map[string]bool{
	"talk": true, "user": true, "user talk": true, "wikipedia": true,
	"wikipedia talk": true, "file": true, "file talk": true, "mediawiki": true,
	"mediawiki talk": true, "template": true, "template talk": true,
	"help": true, "help talk": true, "category": true, "category talk": true,
	"portal": true, "portal talk": true, "book": true, "book talk": true,
	"draft": true, "draft talk": true, "education program": true,
	"education program talk": true, "timedtext": true, "timedtext talk": true,
	"module": true, "module talk": true, "special": true, "media": true,
}

// WikipediaExternalID is the stored external id of a Wikipedia page,
// "{language}:{pageId}" (for example "en:736").
func WikipediaExternalID(language, pageID string) string {
	return language + ":" + pageID
}

// ParseWikipediaURL reads the page identity from a Wikipedia URL the way the
// extension and API both do, so the two agree on which post a URL denotes.
// Titles use underscores for spaces, with runs of whitespace collapsed.
func ParseWikipediaURL(raw string) (WikipediaURLIdentity, error) {
	u, err := url.Parse(validUTF8(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return WikipediaURLIdentity{}, ErrNotWikipediaArticleURL
	}
	m := wikipediaHost.FindStringSubmatch(strings.ToLower(u.Hostname()))
	if m == nil {
		return WikipediaURLIdentity{}, ErrNotWikipediaArticleURL
	}
	language := m[1]
	query := u.Query()

	pageID := wikipediaPageID(query.Get("curid"))
	if pageID == nil && query.Has("pageid") {
		pageID = wikipediaPageID(query.Get("pageid"))
	}

	path := u.EscapedPath()
	var title *string
	if strings.HasPrefix(strings.ToLower(path), "/wiki/") && len(path) > len("/wiki/") {
		if decoded, ok := decodeURIComponent(path[len("/wiki/"):]); ok {
			title = normalizeWikipediaTitle(decoded)
		}
	} else if wikipediaIndexPath.MatchString(path) && query.Has("title") {
		title = normalizeWikipediaTitle(query.Get("title"))
	}

	if title != nil && !isArticleNamespace(*title) {
		return WikipediaURLIdentity{}, ErrNotWikipediaArticleURL
	}
	switch {
	case pageID != nil:
		return WikipediaURLIdentity{Language: language, Title: title, PageID: pageID,
			IdentityKind: WikipediaIdentityPageID, ExternalID: WikipediaExternalID(language, *pageID)}, nil
	case title != nil:
		return WikipediaURLIdentity{Language: language, Title: title,
			IdentityKind: WikipediaIdentityTitle, ExternalID: language + ":" + *title}, nil
	}
	return WikipediaURLIdentity{}, ErrNotWikipediaArticleURL
}

func wikipediaPageID(raw string) *string {
	id := jsTrim(raw)
	if id == "" {
		return nil
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return nil
		}
	}
	return &id
}

// normalizeWikipediaTitle turns underscores into spaces, collapses and trims
// whitespace, and turns spaces back into underscores; empty titles are nil.
func normalizeWikipediaTitle(raw string) *string {
	t := strings.Join(jsFields(strings.ReplaceAll(raw, "_", " ")), " ")
	if t == "" {
		return nil
	}
	t = strings.ReplaceAll(t, " ", "_")
	return &t
}

func isArticleNamespace(title string) bool {
	prefix, _, found := strings.Cut(title, ":")
	if !found {
		return true
	}
	return !nonArticleNamespaces[jsToLower(jsTrim(strings.ReplaceAll(prefix, "_", " ")))]
}

// decodeURIComponent is JavaScript's decodeURIComponent: it fails on a
// malformed escape or on escapes that do not form valid UTF-8.
func decodeURIComponent(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	if !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
