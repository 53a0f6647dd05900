package canonical

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/retry"
)

// Production endpoints. Placeholders in braces are replaced by validated
// request fields; a test endpoint may leave them out.
const (
	DefaultLessWrongGraphQL = "https://www.lesswrong.com/graphql"
	DefaultWikipediaAPI     = "https://{lang}.wikipedia.org/w/api.php"
	DefaultSubstackPost     = "https://{publication}.substack.com/api/v1/posts/{slug}"
	DefaultBlueskyThread    = "https://public.api.bsky.app/xrpc/app.bsky.feed.getPostThread"
)

// DefaultMaxResponseBytes bounds one platform response. Long Wikipedia
// articles render to a few MiB of HTML; the JSON envelope adds escaping.
const DefaultMaxResponseBytes = 16 << 20

// Endpoints are the platform API URLs. Empty fields take the defaults.
type Endpoints struct {
	// LessWrongGraphQL is the GraphQL endpoint posts are queried from.
	LessWrongGraphQL string
	// WikipediaAPI is the MediaWiki api.php URL; "{lang}" is replaced by
	// the language code.
	WikipediaAPI string
	// SubstackPost is the post API URL; "{publication}" is replaced by the
	// publication subdomain and "{slug}" by the escaped post slug.
	SubstackPost string
	// BlueskyThread is the AppView's app.bsky.feed.getPostThread XRPC
	// endpoint (public, no credentials); the post's AT URI goes in its query.
	BlueskyThread string
}

func (e Endpoints) withDefaults() Endpoints {
	if e.LessWrongGraphQL == "" {
		e.LessWrongGraphQL = DefaultLessWrongGraphQL
	}
	if e.WikipediaAPI == "" {
		e.WikipediaAPI = DefaultWikipediaAPI
	}
	if e.SubstackPost == "" {
		e.SubstackPost = DefaultSubstackPost
	}
	if e.BlueskyThread == "" {
		e.BlueskyThread = DefaultBlueskyThread
	}
	return e
}

// validate checks that each endpoint is an absolute http(s) URL once its
// placeholders are filled, so a misconfiguration fails at start-up.
func (e Endpoints) validate() error {
	fill := strings.NewReplacer("{lang}", "en", "{publication}", "p", "{slug}", "s")
	// In a fixed order, so the first bad endpoint is always the one named.
	for _, ep := range []struct{ name, raw string }{
		{"LessWrongGraphQL", e.LessWrongGraphQL}, {"WikipediaAPI", e.WikipediaAPI}, {"SubstackPost", e.SubstackPost},
		{"BlueskyThread", e.BlueskyThread},
	} {
		u, err := url.Parse(fill.Replace(ep.raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("canonical: endpoint %s %q is not an absolute http(s) URL", ep.name, ep.raw)
		}
	}
	return nil
}

// RetryPolicy says how transient failures (network errors, timeouts, 408,
// 429 and 5xx) are retried.
type RetryPolicy struct {
	// Attempts is the total number of tries, at least 1.
	Attempts int
	// BaseDelay is the wait before the first retry; it doubles each retry,
	// up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the doubling wait (zero: DefaultMaxDelay).
	MaxDelay time.Duration
	// MaxRetryAfter caps how long a server's Retry-After is honoured. A
	// longer one ends the retries: the caller is waiting on this request and
	// falls back to the client's content instead.
	MaxRetryAfter time.Duration
}

// DefaultMaxDelay caps a retry policy's doubling wait: the caller is
// waiting on the request.
const DefaultMaxDelay = 2 * time.Second

// DefaultRetryPolicy is 3 attempts, waiting 200 ms then 400 ms, honouring
// a Retry-After of up to 2 s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Attempts: 3, BaseDelay: 200 * time.Millisecond, MaxDelay: DefaultMaxDelay, MaxRetryAfter: 2 * time.Second}
}

// backoff is the wait after failed attempt n (1-based): exact, without
// jitter (one caller's request, not a crowd retrying in step).
func (p RetryPolicy) backoff(attempt int) time.Duration {
	limit := p.MaxDelay
	if limit == 0 {
		limit = DefaultMaxDelay
	}
	return retry.Exponential{Base: p.BaseDelay, Max: limit}.Delay(attempt)
}

// Option configures a Fetcher.
type Option func(*Fetcher)

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(f *Fetcher) { f.retry = p }
}

// WithMaxResponseBytes replaces DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) Option {
	return func(f *Fetcher) { f.maxBytes = n }
}

// Fetcher fetches canonical post content from the platforms. It is safe for
// concurrent use.
type Fetcher struct {
	client    *httpsafe.Client
	endpoints Endpoints
	log       *slog.Logger
	retry     RetryPolicy
	maxBytes  int64
	// sleep waits between attempts; tests replace it to observe delays.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewFetcher returns a Fetcher that sends every request through client.
// Zero fields of endpoints take the production defaults; a nil logger
// discards.
func NewFetcher(client *httpsafe.Client, endpoints Endpoints, logger *slog.Logger, opts ...Option) (*Fetcher, error) {
	if client == nil {
		return nil, errors.New("canonical: an httpsafe client is required")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &Fetcher{
		client:    client,
		endpoints: endpoints.withDefaults(),
		log:       logger,
		retry:     DefaultRetryPolicy(),
		maxBytes:  DefaultMaxResponseBytes,
		sleep:     retry.Sleep,
	}
	for _, o := range opts {
		o(f)
	}
	if err := f.endpoints.validate(); err != nil {
		return nil, err
	}
	switch {
	case f.retry.Attempts < 1:
		return nil, fmt.Errorf("canonical: retry attempts must be at least 1, got %d", f.retry.Attempts)
	case f.retry.BaseDelay < 0 || f.retry.MaxDelay < 0 || f.retry.MaxRetryAfter < 0:
		return nil, errors.New("canonical: retry delays must not be negative")
	case f.maxBytes <= 0:
		return nil, fmt.Errorf("canonical: max response bytes must be positive, got %d", f.maxBytes)
	}
	return f, nil
}
