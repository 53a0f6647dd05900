package search

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/elastic/go-elasticsearch/v8"

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
	if err := checkPage(q.Limit, q.Offset, q.Text, ""); err != nil {
		return err
	}
	switch {
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

// request is q as a search of the analyses (whole documents).
func (q AnalysisQuery) request() request {
	r := request{text: q.Text, fields: analysisTextFields, highlight: analysisHighlightFields,
		order:  []any{map[string]any{"completed_at": "desc"}, map[string]any{"analysis_id": "asc"}},
		offset: q.Offset, limit: q.Limit}
	r.term("label", q.Label)
	r.term("band", q.Band)
	r.term("platform", q.Platform)
	return r
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
	ans, err := search[AnalysisSource](ctx, s.es, s.alias, "analyses", q.request())
	if err != nil {
		return AnalysisResult{}, err
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
		hit.Highlights = highlights(hit.Highlights, h.Highlight, analysisHighlightFields)
		out.Hits = append(out.Hits, hit)
	}
	out.HasMore = hasMore(q.Offset, len(out.Hits), out.Total)
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
