package search

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/elastic/go-elasticsearch/v8"

	"github.com/errata-dev/errata/events"
)

// Limits of a Query.
const (
	MaxLimit = 100
	// MaxWindow is the deepest result reachable by offset + limit
	// (Elasticsearch's max_result_window).
	MaxWindow = 10000
	// MaxTextRunes bounds the full-text query.
	MaxTextRunes = 1000
	// maxHighlights bounds the snippets of one hit.
	maxHighlights = 6
)

// ErrInvalidQuery marks a query the caller must change (a client error);
// its message says what is wrong.
var ErrInvalidQuery = errors.New("invalid search query")

// Searcher answers corpus searches from the search alias.
type Searcher struct {
	es    *elasticsearch.Client
	alias string
}

// NewSearcher searches through alias (AliasName of the configured prefix).
func NewSearcher(es *elasticsearch.Client, alias string) *Searcher {
	return &Searcher{es: es, alias: alias}
}

// Validate checks q without running it.
func (q Query) Validate() error {
	if err := checkPage(q.Limit, q.Offset, q.Text, "; narrow the search with filters instead of paging deeper"); err != nil {
		return err
	}
	switch {
	case q.Platform != "" && !events.ValidPlatform(q.Platform):
		return invalid("platform %q is unknown (known: %v)", q.Platform, events.Platforms)
	case q.Provenance != "" && q.Provenance != events.ProvenanceServerVerified && q.Provenance != events.ProvenanceClientFallback:
		return invalid("provenance %q is unknown (known: %s, %s)", q.Provenance, events.ProvenanceServerVerified, events.ProvenanceClientFallback)
	case q.MinClaimCount < 0:
		return invalid("minimum claim count must be >= 0 (got %d)", q.MinClaimCount)
	case q.CheckedFrom != nil && q.CheckedTo != nil && !q.CheckedFrom.Before(*q.CheckedTo):
		return invalid("the checked-at window is empty: from %s is not before to %s",
			q.CheckedFrom.UTC().Format(time.RFC3339Nano), q.CheckedTo.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// textFields are searched by Query.Text, with their boosts.
var textFields = []string{
	"claims.text^3", "claims.summary^2", "claims.reasoning", "claims.context",
	"claims.sources.title", "claims.sources.snippet", "post_excerpt", "author_display_name",
}

// highlightFields are the fields whose matches are shown, in the order
// their snippets are listed.
var highlightFields = []string{
	"claims.text", "claims.summary", "claims.reasoning", "claims.context",
	"claims.sources.title", "claims.sources.snippet", "post_excerpt", "author_display_name",
}

// sourceFields are what a hit needs from _source.
var sourceFields = []string{
	"investigation_id", "post_id", "post_version_id", "content_hash", "checked_at", "platform", "external_id",
	"url", "author_id", "author_display_name", "provenance", "server_verified_at", "corroboration_count",
	"claim_count", "claims.id", "claims.text", "claims.summary",
}

// request is q as a search of the investigations.
func (q Query) request() request {
	r := request{text: q.Text, fields: textFields, highlight: highlightFields, source: sourceFields,
		order:  []any{map[string]any{"checked_at": "desc"}, map[string]any{"investigation_id": "asc"}},
		offset: q.Offset, limit: q.Limit}
	r.term("platform", q.Platform)
	r.term("author_id", q.AuthorID)
	r.term("provenance", q.Provenance)
	if q.MinClaimCount > 0 {
		r.filter = append(r.filter, map[string]any{"range": map[string]any{"claim_count": map[string]any{"gte": q.MinClaimCount}}})
	}
	if q.CheckedFrom != nil || q.CheckedTo != nil {
		bounds := map[string]any{}
		if q.CheckedFrom != nil {
			bounds["gte"] = formatNanos(*q.CheckedFrom)
		}
		if q.CheckedTo != nil {
			bounds["lt"] = formatNanos(*q.CheckedTo)
		}
		r.filter = append(r.filter, map[string]any{"range": map[string]any{"checked_at": bounds}})
	}
	return r
}

// formatNanos renders a bound for a date_nanos field.
func formatNanos(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// Search runs q. Invalid queries return an error wrapping ErrInvalidQuery.
func (s *Searcher) Search(ctx context.Context, q Query) (Result, error) {
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	ans, err := search[Source](ctx, s.es, s.alias, "search", q.request())
	if err != nil {
		return Result{}, err
	}
	out := Result{Total: ans.Hits.Total.Value, Hits: make([]Hit, 0, len(ans.Hits.Hits))}
	for _, h := range ans.Hits.Hits {
		hit, err := hitOf(h.Source)
		if err != nil {
			return Result{}, fmt.Errorf("search %s: %w", s.alias, err)
		}
		hit.Highlights = highlights(hit.Highlights, h.Highlight, highlightFields)
		out.Hits = append(out.Hits, hit)
	}
	out.HasMore = hasMore(q.Offset, len(out.Hits), out.Total)
	return out, nil
}

func hitOf(s Source) (Hit, error) {
	checked, err := time.Parse(time.RFC3339Nano, s.CheckedAt)
	if err != nil {
		return Hit{}, fmt.Errorf("document %s: checked_at: %w", s.InvestigationID, err)
	}
	h := Hit{
		InvestigationID: s.InvestigationID, PostID: s.PostID, PostVersionID: s.PostVersionID,
		ContentHash: s.ContentHash, CheckedAt: checked, Platform: s.Platform, ExternalID: s.ExternalID,
		URL: s.URL, Provenance: s.Provenance, CorroborationCount: s.CorroborationCount, ClaimCount: s.ClaimCount,
		Claims: make([]ClaimSummary, len(s.Claims)),
	}
	if s.AuthorID != nil {
		h.Author = &Author{ID: *s.AuthorID}
		if s.AuthorDisplayName != nil {
			h.Author.DisplayName = *s.AuthorDisplayName
		}
	}
	if s.ServerVerifiedAt != nil {
		v, err := time.Parse(time.RFC3339Nano, *s.ServerVerifiedAt)
		if err != nil {
			return Hit{}, fmt.Errorf("document %s: server_verified_at: %w", s.InvestigationID, err)
		}
		h.ServerVerifiedAt = &v
	}
	for i, c := range s.Claims {
		h.Claims[i] = ClaimSummary{ID: c.ID, Text: c.Text, Summary: c.Summary}
	}
	return h, nil
}
