package httpsafe

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// Client performs SSRF-safe HTTP requests. It is safe for concurrent use and
// should be shared: it pools connections.
type Client struct {
	cfg config
	hc  *http.Client
}

// Request is one outbound request. The body is a byte slice so redirects
// that keep the method (307, 308) can resend it.
type Request struct {
	// Method defaults to GET.
	Method string
	// URL must be an absolute http or https URL without user info.
	URL    string
	Header http.Header
	Body   []byte
	// MaxBytes overrides the client's body size limit when positive.
	MaxBytes int64
}

// Response is a completed response with its whole body.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
	// URL is the final URL, after redirects.
	URL *url.URL
}

// New returns a client; options override the defaults described in the
// package documentation.
func New(opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := newDialer(&policy{ports: cfg.ports, loopbackAny: cfg.loopbackAny, loopbackAddrs: cfg.loopbackAddrs, operatorAddrs: cfg.operatorAddrs}, cfg.resolver)
	transport := &http.Transport{
		// Never a proxy: the environment must not route around the checks,
		// and a proxy would dial for us, out of reach of the dial check.
		Proxy:                  nil,
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    5 * time.Second,
		ResponseHeaderTimeout:  cfg.timeout,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	c := &Client{cfg: cfg}
	c.hc = &http.Client{
		Transport:     transport,
		Timeout:       cfg.timeout,
		CheckRedirect: c.checkRedirect,
	}
	return c, nil
}

// checkRedirect re-validates each hop's URL before it is requested; the
// dial hook then checks its address.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.cfg.maxRedirects {
		return fmt.Errorf("%w: more than %d", ErrTooManyRedirects, c.cfg.maxRedirects)
	}
	return validateURL(req.URL)
}

// validateURL accepts absolute http(s) URLs with a host and no user info.
func validateURL(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%w: %q", ErrBlockedScheme, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: user info is not allowed", ErrInvalidURL)
	case u.Hostname() == "":
		return fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	return nil
}

// Get fetches rawURL with the client's defaults.
func (c *Client) Get(ctx context.Context, rawURL string) (*Response, error) {
	return c.Do(ctx, Request{URL: rawURL})
}

// Do sends the request, follows allowed redirects and reads the whole body.
// A non-2xx status is not an error: the Response says what happened. Every
// error begins with the method and the (redacted) URL.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	target := u.Redacted()
	fail := func(err error) error { return fmt.Errorf("%s %s: %w", method, target, err) }
	if err := validateURL(u); err != nil {
		return nil, fail(err)
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fail(fmt.Errorf("%w: %v", ErrInvalidURL, err))
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", c.cfg.userAgent)
	}

	resp, err := c.hc.Do(req)
	if err != nil {
		// *url.Error would repeat the method and URL; keep what it wraps,
		// naming the redirect hop when the failure happened there.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
			if hop, perr := url.Parse(uerr.URL); perr == nil && hop.String() != u.String() {
				err = fmt.Errorf("redirect to %s: %w", hop.Redacted(), err)
			}
		}
		return nil, fail(classify(err))
	}
	defer resp.Body.Close()
	final := ""
	if resp.Request.URL.String() != u.String() {
		final = " (redirected to " + resp.Request.URL.Redacted() + ")"
	}

	limit := c.cfg.maxBytes
	if r.MaxBytes > 0 {
		limit = r.MaxBytes
	}
	if resp.ContentLength > limit {
		return nil, fail(fmt.Errorf("%w: declared %d bytes, limit %d%s", ErrTooLarge, resp.ContentLength, limit, final))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fail(classify(fmt.Errorf("read body%s: %w", final, err)))
	}
	if int64(len(data)) > limit {
		return nil, fail(fmt.Errorf("%w: more than %d bytes%s", ErrTooLarge, limit, final))
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: data, URL: resp.Request.URL}, nil
}

// classify marks timeouts with ErrTimeout; everything else keeps its chain
// (policy errors from the dial hook and CheckRedirect are already in it).
func classify(err error) error {
	if IsPolicyError(err) {
		return err
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return err
}
