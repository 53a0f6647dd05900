package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/errata-dev/errata/events"
)

// AnalysisQuery is one search of COMPLETE verdict analyses. Empty fields
// do not filter.
type AnalysisQuery struct {
	// Text is matched against the claims, the verdict's summary and
	// caveats, and the page title, with English analysis.
	Text string
	// Label is one of factSocial's labels (events.Labels).
	Label string
	// Band is one of FactHarbor's bands (events.Bands).
	Band string
	// Platform is an events.Platform* value (posts only).
	Platform string
	// Limit is 1..100; Offset >= 0. Results are ordered by relevance (when
	// Text is set), then completedAt descending, then analysis id.
	Limit, Offset int
}

// AnalysisHit is one COMPLETE analysis matching a query.
type AnalysisHit struct {
	AnalysisID   string
	CompletedAt  time.Time
	InputKind    string
	Platform     string // "" for submissions
	ExternalID   string
	URL          string
	Title        string
	Label        string
	Band         string
	TruthPercent int
	Confidence   int
	Summary      string
	ClaimCount   int
	// Claims are the claims' texts, in extraction order.
	Claims []string
	// Highlights: matched words in <mark>…</mark>, everything else
	// HTML-escaped.
	Highlights []string
}

// AnalysisResult is one page of analysis hits.
type AnalysisResult struct {
	Hits    []AnalysisHit
	Total   int64
	HasMore bool
}

// Validate checks q without running it.
func (q AnalysisQuery) Validate() error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidQuery}, args...)...)
	}
	switch {
	case q.Limit < 1 || q.Limit > MaxLimit:
		return invalid("limit must be between 1 and %d (got %d)", MaxLimit, q.Limit)
	case q.Offset < 0:
		return invalid("offset must be >= 0 (got %d)", q.Offset)
	case q.Offset+q.Limit > MaxWindow:
		return invalid("offset + limit must be at most %d (got %d)", MaxWindow, q.Offset+q.Limit)
	case utf8.RuneCountInString(q.Text) > MaxTextRunes:
		return invalid("query text is longer than %d characters", MaxTextRunes)
	case !utf8.ValidString(q.Text):
		return invalid("query text is not valid UTF-8")
	case q.Label != "" && !slices.Contains(events.Labels, q.Label):
		return invalid("label %q is unknown (known: %v)", q.Label, events.Labels)
	case q.Band != "" && !slices.Contains(events.Bands, q.Band):
		return invalid("band %q is unknown (known: %v)", q.Band, events.Bands)
	case q.Platform != "" && !events.ValidPlatform(q.Platform):
		return invalid("platform %q is unknown (known: %v)", q.Platform, events.Platforms)
	}
	return nil
}

// analysisTextFields are searched by AnalysisQuery.Text, with boosts;
// their matches are highlighted in this order.
var analysisTextFields = []string{"claims.text^3", "summary^2", "caveats", "title"}

var analysisHighlightFields = []string{"claims.text", "summary", "caveats", "title"}

func (q AnalysisQuery) body() ([]byte, error) {
	filter := []any{map[string]any{"term": map[string]any{"status": StatusComplete}}}
	for _, t := range [][2]string{{"label", q.Label}, {"band", q.Band}, {"platform", q.Platform}} {
		if t[1] != "" {
			filter = append(filter, map[string]any{"term": map[string]any{t[0]: t[1]}})
		}
	}
	boolQuery := map[string]any{"filter": filter}
	req := map[string]any{"from": q.Offset, "size": q.Limit, "track_total_hits": true}
	var sort []any
	if q.Text != "" {
		boolQuery["must"] = []any{map[string]any{"simple_query_string": map[string]any{
			"query": q.Text, "fields": analysisTextFields, "default_operator": "and",
		}}}
		sort = append(sort, "_score")
		hl := map[string]any{}
		for _, f := range analysisHighlightFields {
			hl[f] = map[string]any{}
		}
		req["highlight"] = map[string]any{
			"encoder": "html", "pre_tags": []string{"<mark>"}, "post_tags": []string{"</mark>"},
			"fragment_size": 160, "number_of_fragments": 3, "fields": hl,
		}
	}
	req["sort"] = append(sort, map[string]any{"completed_at": "desc"}, map[string]any{"analysis_id": "asc"})
	req["query"] = map[string]any{"bool": boolQuery}
	return json.Marshal(req)
}

// AnalysisSearcher answers analysis searches from the analyses alias.
type AnalysisSearcher struct {
	es    *elasticsearch.Client
	alias string
}

// NewAnalysisSearcher searches through alias (AnalysisAliasName of the
// configured prefix).
func NewAnalysisSearcher(es *elasticsearch.Client, alias string) *AnalysisSearcher {
	return &AnalysisSearcher{es: es, alias: alias}
}

// Search runs q. Invalid queries return an error wrapping ErrInvalidQuery.
func (s *AnalysisSearcher) Search(ctx context.Context, q AnalysisQuery) (AnalysisResult, error) {
	if err := q.Validate(); err != nil {
		return AnalysisResult{}, err
	}
	body, err := q.body()
	if err != nil {
		return AnalysisResult{}, err
	}
	res, err := esapi.SearchRequest{Index: []string{s.alias}, Body: bytes.NewReader(body)}.Do(ctx, s.es)
	if err != nil {
		return AnalysisResult{}, fmt.Errorf("search %s: %w", s.alias, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return AnalysisResult{}, fmt.Errorf("search %s: the analyses index does not exist (run `errata migrate`): %w", s.alias, readError(res))
	}
	if res.IsError() {
		return AnalysisResult{}, fmt.Errorf("search %s: %w", s.alias, readError(res))
	}
	var ans struct {
		Hits struct {
			Total struct {
				Value int64 `json:"value"`
			} `json:"total"`
			Hits []struct {
				Source    AnalysisSource      `json:"_source"`
				Highlight map[string][]string `json:"highlight"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return AnalysisResult{}, fmt.Errorf("search %s: decode answer: %w", s.alias, err)
	}
	out := AnalysisResult{Total: ans.Hits.Total.Value, Hits: make([]AnalysisHit, 0, len(ans.Hits.Hits))}
	for _, h := range ans.Hits.Hits {
		src := h.Source
		done, err := time.Parse(time.RFC3339Nano, src.CompletedAt)
		if err != nil {
			return AnalysisResult{}, fmt.Errorf("search %s: document %s: completed_at: %w", s.alias, src.AnalysisID, err)
		}
		hit := AnalysisHit{AnalysisID: src.AnalysisID, CompletedAt: done, InputKind: src.InputKind,
			Platform: deref(src.Platform), ExternalID: deref(src.ExternalID), URL: deref(src.URL), Title: deref(src.Title),
			Label: src.Label, Band: src.Band, TruthPercent: src.TruthPercent, Confidence: src.Confidence,
			Summary: src.Summary, ClaimCount: src.ClaimCount, Claims: make([]string, len(src.Claims)), Highlights: []string{}}
		for i, c := range src.Claims {
			hit.Claims[i] = c.Text
		}
		for _, f := range analysisHighlightFields {
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
