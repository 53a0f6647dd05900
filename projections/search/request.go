package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"

	"github.com/errata-dev/errata/events"
)

// What the searches of both corpora (investigations and analyses) share:
// the paging and text bounds, the request body around their own filters,
// and the answer's hits and highlights.

// invalid is an error wrapping ErrInvalidQuery with what is wrong.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidQuery}, args...)...)
}

// checkPage checks the paging and the text of a query; deeper ends the
// message of a page beyond MaxWindow.
func checkPage(limit, offset int, text, deeper string) error {
	switch {
	case limit < 1 || limit > MaxLimit:
		return invalid("limit must be between 1 and %d (got %d)", MaxLimit, limit)
	case offset < 0:
		return invalid("offset must be >= 0 (got %d)", offset)
	case offset+limit > MaxWindow:
		return invalid("offset + limit must be at most %d (got %d)%s", MaxWindow, offset+limit, deeper)
	case utf8.RuneCountInString(text) > MaxTextRunes:
		return invalid("query text is longer than %d characters", MaxTextRunes)
	case !utf8.ValidString(text):
		return invalid("query text is not valid UTF-8")
	}
	return nil
}

// request is one search of a corpus: its filters (besides status
// COMPLETE), Text matched over fields and highlighted in highlight, the
// page, the order after relevance, and the _source fields a hit needs
// (nil: all of it).
type request struct {
	filter        []any
	text          string
	fields        []string
	highlight     []string
	order         []any
	source        []string
	offset, limit int
}

// term adds a term filter on field when value is set.
func (r *request) term(field, value string) {
	if value != "" {
		r.filter = append(r.filter, map[string]any{"term": map[string]any{field: value}})
	}
}

// body renders the request as a search request body: COMPLETE documents
// passing the filters; with a text, every word must match somewhere
// (precision first; quotes make phrases, - excludes; the syntax never
// fails, whatever the input), the matches are highlighted and relevance
// orders first.
func (r request) body() ([]byte, error) {
	filter := append([]any{map[string]any{"term": map[string]any{"status": events.StatusComplete}}}, r.filter...)
	boolQuery := map[string]any{"filter": filter}
	req := map[string]any{"from": r.offset, "size": r.limit, "track_total_hits": true}
	if r.source != nil {
		req["_source"] = r.source
	}
	var sort []any
	if r.text != "" {
		boolQuery["must"] = []any{map[string]any{"simple_query_string": map[string]any{
			"query": r.text, "fields": r.fields, "default_operator": "and",
		}}}
		sort = append(sort, "_score")
		hl := map[string]any{}
		for _, f := range r.highlight {
			hl[f] = map[string]any{}
		}
		req["highlight"] = map[string]any{
			"encoder": "html", "pre_tags": []string{"<mark>"}, "post_tags": []string{"</mark>"},
			"fragment_size": 160, "number_of_fragments": 3, "fields": hl,
		}
	}
	req["sort"] = append(sort, r.order...)
	req["query"] = map[string]any{"bool": boolQuery}
	return json.Marshal(req)
}

// answer is a search answer whose documents are S.
type answer[S any] struct {
	Hits struct {
		Total struct {
			Value int64 `json:"value"`
		} `json:"total"`
		Hits []struct {
			Source    S                   `json:"_source"`
			Highlight map[string][]string `json:"highlight"`
		} `json:"hits"`
	} `json:"hits"`
}

// search runs r against alias, whose index is named index in the error
// when it does not exist.
func search[S any](ctx context.Context, es *elasticsearch.Client, alias, index string, r request) (answer[S], error) {
	var ans answer[S]
	body, err := r.body()
	if err != nil {
		return ans, err
	}
	res, err := esapi.SearchRequest{Index: []string{alias}, Body: bytes.NewReader(body)}.Do(ctx, es)
	if err != nil {
		return ans, fmt.Errorf("search %s: %w", alias, err)
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return ans, fmt.Errorf("search %s: the %s index does not exist (run `errata migrate`): %w", alias, index, readError(res))
	}
	if res.IsError() {
		return ans, fmt.Errorf("search %s: %w", alias, readError(res))
	}
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return ans, fmt.Errorf("search %s: decode answer: %w", alias, err)
	}
	return ans, nil
}

// highlights appends a hit's snippets to dst, field by field in the
// order of fields, up to maxHighlights in all.
func highlights(dst []string, hl map[string][]string, fields []string) []string {
	for _, f := range fields {
		for _, frag := range hl[f] {
			if len(dst) < maxHighlights {
				dst = append(dst, frag)
			}
		}
	}
	return dst
}

// hasMore says a page of n hits from offset leaves more of total.
func hasMore(offset, n int, total int64) bool { return int64(offset+n) < total }
