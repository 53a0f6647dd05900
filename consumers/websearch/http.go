package websearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/retry"
)

// endpoint is what every provider shares: where it sends requests, through
// which client, and the secret to keep out of errors. The key is held
// behind a pointer so that even %#v of a searcher prints an address, not
// the key (fmt cannot call String on unexported fields).
type endpoint struct {
	provider string
	client   *httpsafe.Client
	url      string
	apiKey   *logging.Secret
}

// key returns the API key ("" when the provider takes none).
func (e endpoint) key() string {
	if e.apiKey == nil {
		return ""
	}
	return e.apiKey.Reveal()
}

// String describes the endpoint without its key.
func (e endpoint) String() string { return e.provider + " search at " + e.url }

// newEndpoint resolves baseURL (or defaultBase when empty) plus path.
func newEndpoint(provider string, client *httpsafe.Client, apiKey logging.Secret, baseURL, defaultBase, path string) (endpoint, error) {
	if client == nil {
		return endpoint{}, fmt.Errorf("%s search: an HTTP client is required", provider)
	}
	base := strings.TrimSpace(baseURL)
	if base == "" {
		base = defaultBase
	}
	if base == "" {
		return endpoint{}, fmt.Errorf("%s search: a base URL is required", provider)
	}
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return endpoint{}, fmt.Errorf("%s search: base URL does not parse", provider)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return endpoint{}, fmt.Errorf("%s search: base URL %s must be an absolute http(s) URL", provider, u.Redacted())
	case u.User != nil:
		return endpoint{}, fmt.Errorf("%s search: base URL must not carry credentials", provider)
	case u.RawQuery != "" || u.Fragment != "":
		return endpoint{}, fmt.Errorf("%s search: base URL %s must have no query or fragment", provider, u.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/") + path
	u.RawPath = ""
	return endpoint{provider: provider, client: client, url: u.String(), apiKey: &apiKey}, nil
}

// do sends req, decodes a 2xx JSON body into out, and turns anything else
// into an error free of the API key. detail extracts the provider's own
// error message from a non-2xx body ("" when there is none).
func (e endpoint) do(ctx context.Context, req httpsafe.Request, out any, detail func(body []byte) string) error {
	req.MaxBytes = maxResponseBytes
	resp, err := e.client.Do(ctx, req)
	if err != nil {
		if httpsafe.IsPolicyError(err) || errors.Is(err, httpsafe.ErrTimeout) {
			return fmt.Errorf("%s search: %w", e.provider, err)
		}
		return fmt.Errorf("%s search: %w: %w", e.provider, ErrUnavailable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := ""
		if detail != nil {
			msg = detail(resp.Body)
		}
		if msg == "" {
			msg = cleanText(string(resp.Body), maxDetailRunes)
		}
		wait, _ := retry.After(resp.Header, time.Now())
		return &StatusError{
			Provider:   e.provider,
			StatusCode: resp.StatusCode,
			RetryAfter: wait,
			Detail:     scrub(msg, e.key()),
			kind:       statusKind(resp.StatusCode),
		}
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("%s search: %w: %s", e.provider, ErrBadResponse, scrub(err.Error(), e.key()))
	}
	return nil
}

// badShape reports a 2xx JSON body without the fields the provider always
// sends: most likely the base URL points at something else.
func (e endpoint) badShape(what string) error {
	return fmt.Errorf("%s search: %w: %s", e.provider, ErrBadResponse, what)
}
