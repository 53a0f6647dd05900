// Package websearch is the web search the investigator offers the model as its
// own tool in the OpenAI-compatible Chat Completions mode, where the
// provider has no native search. Providers (Brave, Tavily, SearXNG) sit
// behind one Searcher interface and are selected by configuration.
//
// Every request goes through the SSRF-safe client (internal/httpsafe) the
// caller passes in. API keys are held as logging.Secret, sent only in
// headers (never in URLs or bodies), and scrubbed from every error, so they
// appear in no error message or log line.
//
// Errors wrap one of ErrUnauthorized, ErrRateLimited, ErrUnavailable,
// ErrBadRequest, ErrBadResponse or ErrInvalidQuery (or an httpsafe error for
// refused or failed transport); Retryable says which are worth retrying.
package websearch

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
)

// Result is one search hit, cleaned to plain text.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// PublishedAt is when the page was published (or last changed), as
	// the provider dates it (UTC); zero when it gives no date.
	PublishedAt time.Time `json:"published_at,omitzero"`
}

// Searcher runs web searches.
type Searcher interface {
	// Search returns at most limit results for query, best first. A limit
	// outside 1..MaxLimit is clamped (0 means DefaultLimit).
	Search(ctx context.Context, query string, limit int) ([]Result, error)
	// Provider names the provider ("brave", "tavily", "searxng").
	Provider() string
}

// Result count limits.
const (
	DefaultLimit = 5
	// MaxLimit is the most results one search returns: what Brave and
	// Tavily accept per request.
	MaxLimit = 20
	// MaxQueryRunes bounds a query; the providers refuse longer ones.
	MaxQueryRunes = 400
	// maxResponseBytes bounds a provider's response body.
	maxResponseBytes = 2 << 20
)

// Provider names.
const (
	ProviderBrave   = "brave"
	ProviderTavily  = "tavily"
	ProviderSearXNG = "searxng"
)

// Config selects and configures a provider.
type Config struct {
	// Provider is ProviderBrave, ProviderTavily or ProviderSearXNG.
	Provider string
	// APIKey is required for Brave and Tavily, unused by SearXNG.
	APIKey logging.Secret
	// BaseURL overrides the provider's default (required for SearXNG, which
	// has none): scheme, host and an optional path prefix.
	BaseURL string
}

// New returns the configured provider's Searcher, sending its requests
// through client.
func New(cfg Config, client *httpsafe.Client) (Searcher, error) {
	switch cfg.Provider {
	case ProviderBrave:
		return NewBrave(client, cfg.APIKey, cfg.BaseURL)
	case ProviderTavily:
		return NewTavily(client, cfg.APIKey, cfg.BaseURL)
	case ProviderSearXNG:
		if cfg.APIKey != "" {
			return nil, fmt.Errorf("search: %s takes no API key", ProviderSearXNG)
		}
		return NewSearXNG(client, cfg.BaseURL)
	default:
		return nil, fmt.Errorf("search: unknown provider %q (want %s, %s or %s)", cfg.Provider, ProviderBrave, ProviderTavily, ProviderSearXNG)
	}
}

// clampLimit maps a requested limit onto 1..MaxLimit.
func clampLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	default:
		return limit
	}
}

// checkQuery trims query and checks it is worth sending.
func checkQuery(query string) (string, error) {
	q := strings.TrimSpace(query)
	switch {
	case q == "":
		return "", fmt.Errorf("%w: empty", ErrInvalidQuery)
	case !utf8.ValidString(q):
		return "", fmt.Errorf("%w: not valid UTF-8", ErrInvalidQuery)
	case utf8.RuneCountInString(q) > MaxQueryRunes:
		return "", fmt.Errorf("%w: %d characters, at most %d", ErrInvalidQuery, utf8.RuneCountInString(q), MaxQueryRunes)
	}
	return q, nil
}
