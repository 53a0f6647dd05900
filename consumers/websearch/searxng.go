package websearch

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/errata-dev/errata/internal/httpsafe"
)

// SearXNG searches a SearXNG instance: GET {base}/search?format=json. The
// instance must allow the json format (search.formats in its settings.yml;
// otherwise it answers 403). It takes no count parameter, so results are
// cut to the limit here.
type SearXNG struct {
	ep endpoint
}

// NewSearXNG returns a SearXNG searcher for the instance at baseURL
// (required). Note that the SSRF-safe client refuses private and loopback
// addresses, so the instance must be reachable at a public address.
func NewSearXNG(client *httpsafe.Client, baseURL string) (*SearXNG, error) {
	ep, err := newEndpoint(ProviderSearXNG, client, "", baseURL, "", "/search")
	if err != nil {
		return nil, err
	}
	return &SearXNG{ep: ep}, nil
}

// String describes the searcher without its key.
func (s *SearXNG) String() string { return s.ep.String() }

// GoString keeps %#v short and free of the key.
func (s *SearXNG) GoString() string { return s.ep.String() }

// Provider implements Searcher.
func (s *SearXNG) Provider() string { return ProviderSearXNG }

// searxngResponse is the part of SearXNG's JSON output we read.
type searxngResponse struct {
	Results *[]struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
		// PublishedDate is null when the engine gives no date.
		PublishedDate *string `json:"publishedDate"`
	} `json:"results"`
}

// Search implements Searcher.
func (s *SearXNG) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	q, err := checkQuery(query)
	if err != nil {
		return nil, err
	}
	limit = clampLimit(limit)
	params := url.Values{"q": {q}, "format": {"json"}, "categories": {"general"}}
	var resp searxngResponse
	err = s.ep.do(ctx, httpsafe.Request{
		Method: http.MethodGet,
		URL:    s.ep.url + "?" + params.Encode(),
		Header: http.Header{"Accept": {"application/json"}},
	}, &resp, nil)
	var se *StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusForbidden {
		// Not a credential problem: SearXNG refuses formats its settings
		// do not enable.
		se.kind = ErrBadRequest
		se.Detail = "the instance refuses format=json unless search.formats in its settings.yml lists json"
	}
	if err != nil {
		return nil, err
	}
	if resp.Results == nil {
		return nil, s.ep.badShape(`no "results" in the response`)
	}
	raw := make([]Result, 0, len(*resp.Results))
	for _, r := range *resp.Results {
		published := time.Time{}
		if r.PublishedDate != nil {
			published = parseDate(*r.PublishedDate)
		}
		raw = append(raw, Result{Title: r.Title, URL: r.URL, Snippet: r.Content, PublishedAt: published})
	}
	return finish(raw, limit), nil
}
