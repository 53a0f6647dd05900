package websearch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
)

// DefaultTavilyBaseURL is Tavily's API origin.
const DefaultTavilyBaseURL = "https://api.tavily.com"

// Tavily searches with the Tavily API: POST /search with a JSON body, the
// key as a bearer token (never in the body, which errors could echo).
type Tavily struct {
	ep endpoint
}

// NewTavily returns a Tavily searcher; baseURL "" means DefaultTavilyBaseURL.
func NewTavily(client *httpsafe.Client, apiKey logging.Secret, baseURL string) (*Tavily, error) {
	if err := requireKey(ProviderTavily, apiKey); err != nil {
		return nil, err
	}
	ep, err := newEndpoint(ProviderTavily, client, apiKey, baseURL, DefaultTavilyBaseURL, "/search")
	if err != nil {
		return nil, err
	}
	return &Tavily{ep: ep}, nil
}

// String describes the searcher without its key.
func (t *Tavily) String() string { return t.ep.String() }

// GoString keeps %#v short and free of the key.
func (t *Tavily) GoString() string { return t.ep.String() }

// Provider implements Searcher.
func (t *Tavily) Provider() string { return ProviderTavily }

type tavilyRequest struct {
	Query             string `json:"query"`
	MaxResults        int    `json:"max_results"`
	SearchDepth       string `json:"search_depth"`
	Topic             string `json:"topic"`
	IncludeAnswer     bool   `json:"include_answer"`
	IncludeRawContent bool   `json:"include_raw_content"`
	IncludeImages     bool   `json:"include_images"`
}

// tavilyResponse is the part of Tavily's search response we read; results
// is always present, so its absence means a wrong endpoint.
type tavilyResponse struct {
	Results *[]struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
		// PublishedDate comes with topic "news" only.
		PublishedDate string `json:"published_date"`
	} `json:"results"`
}

// Search implements Searcher.
func (t *Tavily) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	q, err := checkQuery(query)
	if err != nil {
		return nil, err
	}
	limit = clampLimit(limit)
	body, err := json.Marshal(tavilyRequest{Query: q, MaxResults: limit, SearchDepth: "basic", Topic: "general"})
	if err != nil {
		return nil, fmt.Errorf("tavily search: encode request: %w", err)
	}
	var resp tavilyResponse
	err = t.ep.do(ctx, httpsafe.Request{
		Method: http.MethodPost,
		URL:    t.ep.url,
		Header: http.Header{
			"Accept":        {"application/json"},
			"Content-Type":  {"application/json"},
			"Authorization": {"Bearer " + t.ep.key()},
		},
		Body: body,
	}, &resp, tavilyErrorDetail)
	if err != nil {
		return nil, err
	}
	if resp.Results == nil {
		return nil, t.ep.badShape(`no "results" in the response`)
	}
	raw := make([]Result, 0, len(*resp.Results))
	for _, r := range *resp.Results {
		raw = append(raw, Result{Title: r.Title, URL: r.URL, Snippet: r.Content, PublishedAt: parseDate(r.PublishedDate)})
	}
	return finish(raw, limit), nil
}

// tavilyErrorDetail reads Tavily's error body: {"detail": {"error": "..."}}
// or {"detail": "..."}.
func tavilyErrorDetail(body []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Detail) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Detail, &s) == nil {
		return s
	}
	var obj struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(e.Detail, &obj) == nil {
		return obj.Error
	}
	return ""
}
