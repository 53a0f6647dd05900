package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// MaxResponseBytes bounds a response body; a larger one is an
// invalid_response error.
const MaxResponseBytes = 64 << 20

// exchange records one HTTP round trip exactly as it went over the wire.
type exchange struct {
	request     []byte
	sent        time.Time
	status      int
	header      http.Header
	body        []byte
	bodyErr     error
	tooLarge    bool
	headersSeen bool
	done        time.Time
}

// middleware captures the request body the SDK serialized and the whole
// response body, handing the SDK an identical copy.
func (x *exchange) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		x.request = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
		req.ContentLength = int64(len(b))
	}
	x.sent = time.Now()
	res, err := next(req)
	if err != nil {
		x.done = time.Now()
		return res, err
	}
	x.headersSeen = true
	x.status = res.StatusCode
	x.header = res.Header.Clone()
	body, rerr := io.ReadAll(io.LimitReader(res.Body, MaxResponseBytes+1))
	_ = res.Body.Close()
	x.done = time.Now()
	x.body = body
	if rerr != nil {
		x.bodyErr = rerr
		return nil, rerr
	}
	if len(body) > MaxResponseBytes {
		x.tooLarge = true
		x.body = body[:MaxResponseBytes]
		return nil, errTooLarge
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	res.ContentLength = int64(len(body))
	return res, nil
}

var errTooLarge = errors.New("response body larger than MaxResponseBytes")

func (x *exchange) duration() time.Duration {
	if x.sent.IsZero() || x.done.IsZero() {
		return 0
	}
	return x.done.Sub(x.sent)
}

// requestOptions are the SDK options of one call: no environment, no SDK
// retries (the orchestrator retries), the capture middleware, the caller's
// base URL, key and HTTP client.
func requestOptions(cred Credentials, client *http.Client, x *exchange) ([]option.RequestOption, error) {
	base := strings.TrimSpace(cred.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL is not an absolute http(s) URL")
	}
	if client == nil {
		client = defaultHTTPClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		option.WithMiddleware(x.middleware),
	}
	if key := cred.APIKey.Reveal(); key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	return opts, nil
}

// defaultHTTPClient has no overall timeout (calls are bounded by their
// context) but bounds connection set-up and the wait for headers.
var defaultHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	MaxIdleConnsPerHost:   16,
	IdleConnTimeout:       90 * time.Second,
	TLSHandshakeTimeout:   15 * time.Second,
	ResponseHeaderTimeout: 10 * time.Minute,
	ForceAttemptHTTP2:     true,
}}

// response starts the normalized Response of one exchange (audit bytes with
// the key redacted, status, request id, duration) and classifies a failed
// call. A nil error means the provider's body can be decoded.
func (x *exchange) response(ctx context.Context, provider string, red redactor, callErr error) (*Response, error) {
	out := &Response{Provider: provider, RawRequest: json.RawMessage(x.request), RawResponse: json.RawMessage(red.bytes(x.body)), HTTPStatus: x.status, Duration: x.duration()}
	if x.header != nil {
		out.RequestID = x.header.Get("x-request-id")
	}
	if len(x.request) == 0 {
		out.RawRequest = nil
	}
	if len(x.body) == 0 {
		out.RawResponse = nil
	}
	if callErr == nil {
		return out, nil
	}
	switch {
	case x.status >= 400:
		return out, httpError(provider, x.status, x.header, x.body, red)
	case x.headersSeen && x.bodyErr == nil:
		return out, bodyError(provider, x)
	default:
		return out, transportError(ctx, provider, callErr, x.headersSeen, red)
	}
}
