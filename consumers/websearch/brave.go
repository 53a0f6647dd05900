package websearch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
)

// DefaultBraveBaseURL is Brave Search API's origin.
const DefaultBraveBaseURL = "https://api.search.brave.com"

// Brave searches with the Brave Search API: GET /res/v1/web/search, the
// key in the X-Subscription-Token header.
type Brave struct {
	ep endpoint
}

// NewBrave returns a Brave searcher; baseURL "" means DefaultBraveBaseURL.
func NewBrave(client *httpsafe.Client, apiKey logging.Secret, baseURL string) (*Brave, error) {
	if err := requireKey(ProviderBrave, apiKey); err != nil {
		return nil, err
	}
	ep, err := newEndpoint(ProviderBrave, client, apiKey, baseURL, DefaultBraveBaseURL, "/res/v1/web/search")
	if err != nil {
		return nil, err
	}
	return &Brave{ep: ep}, nil
}

// String describes the searcher without its key.
func (b *Brave) String() string { return b.ep.String() }

// GoString keeps %#v short and free of the key.
func (b *Brave) GoString() string { return b.ep.String() }

// Provider implements Searcher.
func (b *Brave) Provider() string { return ProviderBrave }

// braveResponse is the part of Brave's WebSearchApiResponse we read. Brave
// omits "web" when nothing matched.
type braveResponse struct {
	Type string `json:"type"`
	Web  *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			PageAge     string `json:"page_age"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements Searcher.
func (b *Brave) Search(ctx context.Context, query string, limit int) ([]Result, error) {
	q, err := checkQuery(query)
	if err != nil {
		return nil, err
	}
	limit = clampLimit(limit)
	params := url.Values{
		"q":                {q},
		"count":            {strconv.Itoa(limit)},
		"result_filter":    {"web"},
		"text_decorations": {"false"},
	}
	var resp braveResponse
	err = b.ep.do(ctx, httpsafe.Request{
		Method: http.MethodGet,
		URL:    b.ep.url + "?" + params.Encode(),
		Header: http.Header{
			"Accept":               {"application/json"},
			"X-Subscription-Token": {b.ep.key()},
		},
	}, &resp, braveErrorDetail)
	if err != nil {
		return nil, err
	}
	if resp.Type != "search" {
		return nil, b.ep.badShape(`no "type": "search" in the response`)
	}
	if resp.Web == nil {
		return []Result{}, nil
	}
	raw := make([]Result, 0, len(resp.Web.Results))
	for _, r := range resp.Web.Results {
		raw = append(raw, Result{Title: r.Title, URL: r.URL, Snippet: r.Description, PublishedAt: parseDate(r.PageAge)})
	}
	return finish(raw, limit), nil
}

// braveErrorDetail reads Brave's ErrorResponse: {"error": {"code", "detail"}}.
func braveErrorDetail(body []byte) string {
	var e struct {
		Error struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return strings.Join(nonEmpty(e.Error.Code, e.Error.Detail), ": ")
}
