package canonical

import (
	"fmt"
	"time"

	"github.com/errata-dev/errata/events/content"
)

// Result is a successfully fetched canonical version of a post.
type Result struct {
	// Platform is one of the events.Platform* constants.
	Platform string
	// SourceURL is the API URL the content came from (no credentials).
	SourceURL string
	// HTML is the canonical body HTML exactly as the platform served it;
	// empty for Bluesky, whose posts are plain text.
	HTML string
	// Text is HTML's normalized canonical text; ContentHash its hash.
	Text        string
	ContentHash string
	// Exactly one of these is set, matching Platform: what the platform
	// reported about the post's identity.
	LessWrong *LessWrongIdentity
	Wikipedia *WikipediaIdentity
	Substack  *SubstackIdentity
	Bluesky   *BlueskyIdentity
	// Mismatches lists identity fields where the platform disagrees with the
	// client's claim. The server's values (above) are authoritative; the
	// caller records each as an IDENTITY_MISMATCH anomaly.
	Mismatches []IdentityMismatch
}

// IdentityMismatch is one identity field the client and the platform
// disagree on. Field uses the anomaly event's naming (page_id, ...).
type IdentityMismatch struct {
	Field    string
	Observed string
	Server   string
}

// LessWrongIdentity is what LessWrong's GraphQL API reports for a post.
// Empty strings are fields the API did not return.
type LessWrongIdentity struct {
	PostID            string
	Slug              string
	Title             string
	AuthorSlug        string
	AuthorDisplayName string
}

// WikipediaIdentity is what the MediaWiki parse API reports for a revision.
type WikipediaIdentity struct {
	Language   string
	PageID     string
	RevisionID string
	// Title is the page title with spaces ("Albert Einstein"), as the API
	// returns it; clients send underscores.
	Title string
	// DisplayTitleHTML is the API's displaytitle, which is HTML.
	DisplayTitleHTML string
}

// ExternalID is the post's external id under the server's page id,
// "{language}:{pageId}".
func (w WikipediaIdentity) ExternalID() string {
	return content.WikipediaExternalID(w.Language, w.PageID)
}

// SubstackIdentity is what Substack's post API reports.
type SubstackIdentity struct {
	PostID       string
	Slug         string
	Title        string
	Subtitle     string
	Audience     string
	CanonicalURL string
	// PostDate is nil when absent or unparsable.
	PostDate *time.Time
}

// newResult derives text and hash from html with the platform's extractor.
func newResult(platform, sourceURL, html string, toText func(string) (string, error)) (Result, error) {
	text, err := toText(html)
	if err != nil {
		return Result{}, err
	}
	if text == "" {
		return Result{}, fmt.Errorf("%w: the body has no text", ErrNoContent)
	}
	return Result{
		Platform: platform, SourceURL: sourceURL, HTML: html,
		Text: text, ContentHash: content.ContentHash(text),
	}, nil
}
