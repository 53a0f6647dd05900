package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

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
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidQuery}, args...)...)
	}
	switch {
	case q.Limit < 1 || q.Limit > MaxLimit:
		return invalid("limit must be between 1 and %d (got %d)", MaxLimit, q.Limit)
	case q.Offset < 0:
		return invalid("offset must be >= 0 (got %d)", q.Offset)
	case q.Offset+q.Limit > MaxWindow:
		return invalid("offset + limit must be at most %d (got %d); narrow the search with filters instead of paging deeper",
			MaxWindow, q.Offset+q.Limit)
	case utf8.RuneCountInString(q.Text) > MaxTextRunes:
		return invalid("query text is longer than %d characters", MaxTextRunes)
	case !utf8.ValidString(q.Text):
		return invalid("query text is not valid UTF-8")
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

// body renders q as a search request body.
func (q Query) body() ([]byte, error) {
	filter := []any{map[string]any{"term": map[string]any{"status": StatusComplete}}}
	term := func(field, value string) {
		if value != "" {
			filter = append(filter, map[string]any{"term": map[string]any{field: value}})
		}
	}
	term("platform", q.Platform)
	term("author_id", q.AuthorID)
	term("provenance", q.Provenance)
	if q.MinClaimCount > 0 {
		filter = append(filter, map[string]any{"range": map[string]any{"claim_count": map[string]any{"gte": q.MinClaimCount}}})
	}
	if q.CheckedFrom != nil || q.CheckedTo != nil {
		r := map[string]any{}
		if q.CheckedFrom != nil {
			r["gte"] = formatNanos(*q.CheckedFrom)
		}
		if q.CheckedTo != nil {
			r["lt"] = formatNanos(*q.CheckedTo)
		}
		filter = append(filter, map[string]any{"range": map[string]any{"checked_at": r}})
	}
	boolQuery := map[string]any{"filter": filter}
	var sort []any
	req := map[string]any{
		"from":             q.Offset,
		"size":             q.Limit,
		"track_total_hits": true,
		"_source":          sourceFields,
	}
	if q.Text != "" {
		// Every word must match somewhere (precision first); quotes make
		// phrases, - excludes; the syntax never fails, whatever the input.
		boolQuery["must"] = []any{map[string]any{"simple_query_string": map[string]any{
			"query": q.Text, "fields": textFields, "default_operator": "and",
		}}}
		sort = append(sort, "_score")
		hl := map[string]any{}
		for _, f := range highlightFields {
			hl[f] = map[string]any{}
		}
		req["highlight"] = map[string]any{
			"encoder": "html", "pre_tags": []string{"<mark>"}, "post_tags": []string{"</mark>"},
			"fragment_size": 160, "number_of_fragments": 3, "fields": hl,
		}
	}
	sort = append(sort, map[string]any{"checked_at": "desc"}, map[string]any{"investigation_id": "asc"})
	req["query"] = map[string]any{"bool": boolQuery}
	req["sort"] = sort
	return json.Marshal(req)
}

// formatNanos renders a bound for a date_nanos field.
func formatNanos(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

type searchAnswer struct {
	Hits struct {
		Total struct {
			Value int64 `json:"value"`
		} `json:"total"`
		Hits []struct {
			Source    Source              `json:"_source"`
			Highlight map[string][]string `json:"highlight"`
		} `json:"hits"`
	} `json:"hits"`
}

// Search runs q. Invalid queries return an error wrapping ErrInvalidQuery.
func (s *Searcher) Search(ctx context.Context, q Query) (Result, error) {
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	body, err := q.body()
	if err != nil {
		return Result{}, err
	}
	res, err := esapi.SearchRequest{Index: []string{s.alias}, Body: bytes.NewReader(body)}.Do(ctx, s.es)
	if err != nil {
		return Result{}, fmt.Errorf("search %s: %w", s.alias, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return Result{}, fmt.Errorf("search %s: the search index does not exist (run `errata migrate`): %w", s.alias, readError(res))
	}
	if res.IsError() {
		return Result{}, fmt.Errorf("search %s: %w", s.alias, readError(res))
	}
	var ans searchAnswer
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return Result{}, fmt.Errorf("search %s: decode answer: %w", s.alias, err)
	}
	out := Result{Total: ans.Hits.Total.Value, Hits: make([]Hit, 0, len(ans.Hits.Hits))}
	for _, h := range ans.Hits.Hits {
		hit, err := hitOf(h.Source)
		if err != nil {
			return Result{}, fmt.Errorf("search %s: %w", s.alias, err)
		}
		for _, f := range highlightFields {
			for _, frag := range h.Highlight[f] {
				if len(hit.Highlights) < maxHighlights {
					hit.Highlights = append(hit.Highlights, frag)
				}
			}
		}
		out.Hits = append(out.Hits, hit)
	}
	out.HasMore = int64(q.Offset+len(out.Hits)) < out.Total
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
