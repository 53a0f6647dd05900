// Package search is the corpus-search read model: complete investigations
// with their claims, post excerpt, author and trust signals, indexed in
// Elasticsearch for full-text queries by researchers (public GraphQL
// searchInvestigations).
package search

import "time"

// ProjectorName names the search projector (consumer group, checkpoints,
// `errata worker --projectors search`, `errata replay --projection search`).
const ProjectorName = "search"

// Query is one corpus search. Empty fields do not filter.
type Query struct {
	// Text is matched against claims (text, summary, reasoning), source
	// titles and snippets, and the post excerpt, with English analysis.
	Text string
	// Platform is an events.Platform* value (LESSWRONG, X, SUBSTACK, WIKIPEDIA, BLUESKY, THREADS).
	Platform string
	// AuthorID is an events.AuthorID value.
	AuthorID string
	// Provenance is SERVER_VERIFIED or CLIENT_FALLBACK.
	Provenance string
	// MinClaimCount keeps investigations with at least this many claims.
	MinClaimCount int
	// CheckedFrom and CheckedTo bound the completion time: [from, to).
	CheckedFrom, CheckedTo *time.Time
	// Limit is 1..100; Offset >= 0. Pagination is stable: results are
	// ordered by relevance (when Text is set), then checkedAt descending,
	// then investigation id.
	Limit, Offset int
}

// Author is a post's author as one platform identity.
type Author struct {
	ID          string
	DisplayName string
}

// ClaimSummary is the short form of a claim shown on a search result.
type ClaimSummary struct {
	ID      string
	Text    string
	Summary string
}

// Hit is one complete investigation matching a query.
type Hit struct {
	InvestigationID    string
	PostID             string
	PostVersionID      string
	ContentHash        string
	CheckedAt          time.Time
	Platform           string
	ExternalID         string
	URL                string
	Author             *Author
	Provenance         string
	ServerVerifiedAt   *time.Time
	CorroborationCount int
	ClaimCount         int
	Claims             []ClaimSummary
	// Highlights are matching snippets with the matched words wrapped in
	// <mark>…</mark>; all other text is HTML-escaped.
	Highlights []string
}

// Result is one page of hits.
type Result struct {
	Hits []Hit
	// Total counts every match (not just this page).
	Total int64
	// HasMore says a further page exists.
	HasMore bool
}
