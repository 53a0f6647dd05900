package websearch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
)

var update = flag.Bool("update", false, "rewrite the golden result files under testdata/")

// testKey is distinctive so that any leak is easy to find.
const testKey = logging.Secret("tk-LEAKCHECK-7f3a9c1e5b")

const query = "boiling point of water at sea level celsius"

// captured is one request the fake provider received.
type captured struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         []byte
}

// fakeProvider serves respond and records every request.
type fakeProvider struct {
	*httptest.Server
	mu       sync.Mutex
	requests []captured
}

func newFake(t *testing.T, respond http.HandlerFunc) *fakeProvider {
	t.Helper()
	f := &fakeProvider{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, captured{method: r.Method, path: r.URL.Path, query: r.URL.Query(), header: r.Header.Clone(), body: body})
		f.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProvider) last(t *testing.T) captured {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.requests, "the provider received no request")
	return f.requests[len(f.requests)-1]
}

// serve answers with status, the given body and headers.
func serve(status int, body []byte, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

func fixture(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", path))
	require.NoError(t, err)
	return b
}

func loopbackClient(t *testing.T, opts ...httpsafe.Option) *httpsafe.Client {
	t.Helper()
	c, err := httpsafe.New(append([]httpsafe.Option{httpsafe.AllowLoopbackForTests()}, opts...)...)
	require.NoError(t, err)
	return c
}

// provider describes one provider's wire protocol for the shared tests.
type provider struct {
	name    string
	config  func(base string) websearch.Config
	dir     string
	fixture string
	// checkRequest asserts the request's protocol details.
	checkRequest func(t *testing.T, r captured)
	// requestedCount is the result count the request asked for ("" when the
	// provider takes none).
	requestedCount func(t *testing.T, r captured) string
	// unauthorized and rateLimited are the provider's own error bodies.
	unauthorized, rateLimited string
}

var providers = []provider{
	{
		name: websearch.ProviderBrave,
		config: func(base string) websearch.Config {
			return websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey, BaseURL: base}
		},
		dir:     "brave",
		fixture: "brave/web_search.json",
		checkRequest: func(t *testing.T, r captured) {
			require.Equal(t, http.MethodGet, r.method)
			require.Equal(t, "/res/v1/web/search", r.path)
			require.Equal(t, testKey.Reveal(), r.header.Get("X-Subscription-Token"))
			require.Equal(t, "application/json", r.header.Get("Accept"))
			require.Equal(t, []string{query}, r.query["q"])
			require.Equal(t, []string{"web"}, r.query["result_filter"])
		},
		requestedCount: func(t *testing.T, r captured) string { return strings.Join(r.query["count"], ",") },
		unauthorized:   "brave/error_401.json",
		rateLimited:    "brave/error_429.json",
	},
	{
		name: websearch.ProviderTavily,
		config: func(base string) websearch.Config {
			return websearch.Config{Provider: websearch.ProviderTavily, APIKey: testKey, BaseURL: base}
		},
		dir:     "tavily",
		fixture: "tavily/search.json",
		checkRequest: func(t *testing.T, r captured) {
			require.Equal(t, http.MethodPost, r.method)
			require.Equal(t, "/search", r.path)
			require.Equal(t, "Bearer "+testKey.Reveal(), r.header.Get("Authorization"))
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.NotContains(t, string(r.body), testKey.Reveal(), "the key travels in a header, never in the body")
			var body map[string]any
			require.NoError(t, json.Unmarshal(r.body, &body))
			require.Equal(t, query, body["query"])
			require.Equal(t, false, body["include_answer"])
			require.Equal(t, false, body["include_raw_content"])
		},
		requestedCount: func(t *testing.T, r captured) string {
			var body struct {
				MaxResults json.Number `json:"max_results"`
			}
			require.NoError(t, json.Unmarshal(r.body, &body))
			return body.MaxResults.String()
		},
		unauthorized: "tavily/error_401.json",
		rateLimited:  "tavily/error_429.json",
	},
	{
		name: websearch.ProviderSearXNG,
		config: func(base string) websearch.Config {
			return websearch.Config{Provider: websearch.ProviderSearXNG, BaseURL: base + "/searx/"}
		},
		dir:     "searxng",
		fixture: "searxng/search.json",
		checkRequest: func(t *testing.T, r captured) {
			require.Equal(t, http.MethodGet, r.method)
			require.Equal(t, "/searx/search", r.path, "the base URL's path prefix is kept")
			require.Equal(t, []string{"json"}, r.query["format"])
			require.Equal(t, []string{query}, r.query["q"])
			require.Empty(t, r.header.Get("Authorization"))
		},
		requestedCount: func(*testing.T, captured) string { return "" },
	},
}

func newSearcher(t *testing.T, p provider, base string, client *httpsafe.Client) websearch.Searcher {
	t.Helper()
	s, err := websearch.New(p.config(base), client)
	require.NoError(t, err)
	require.Equal(t, p.name, s.Provider())
	return s
}

// TestRecordedResponses replays each provider's recorded response and
// compares the results with testdata/<provider>/results.golden.json.
func TestRecordedResponses(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			fake := newFake(t, serve(http.StatusOK, fixture(t, p.fixture)))
			s := newSearcher(t, p, fake.URL, loopbackClient(t))
			results, err := s.Search(context.Background(), "  "+query+"\n", websearch.MaxLimit)
			require.NoError(t, err)
			p.checkRequest(t, fake.last(t))

			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			require.NoError(t, enc.Encode(results))
			got := buf.Bytes()
			golden := filepath.Join("testdata", p.dir, "results.golden.json")
			if *update {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./consumers/websearch -update to create golden files")
			require.Equal(t, string(want), string(got))
			for _, r := range results {
				require.NotEmpty(t, r.Title)
				require.True(t, strings.HasPrefix(r.URL, "https://"))
				require.NotContains(t, r.Snippet, "<strong>")
			}
		})
	}
}

func TestResultLimits(t *testing.T) {
	tests := []struct {
		limit     int
		wantCount string // requested from the provider
		wantLen   int    // each recorded fixture has 3 to 5 distinct results; -1: all of them
	}{
		{limit: 2, wantCount: "2", wantLen: 2},
		{limit: 1, wantCount: "1", wantLen: 1},
		{limit: 0, wantCount: fmt.Sprint(websearch.DefaultLimit), wantLen: -1},
		{limit: -3, wantCount: fmt.Sprint(websearch.DefaultLimit), wantLen: -1},
		{limit: 500, wantCount: fmt.Sprint(websearch.MaxLimit), wantLen: -1},
	}
	for _, p := range providers {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/limit=%d", p.name, tt.limit), func(t *testing.T) {
				fake := newFake(t, serve(http.StatusOK, fixture(t, p.fixture)))
				s := newSearcher(t, p, fake.URL, loopbackClient(t))
				results, err := s.Search(context.Background(), query, tt.limit)
				require.NoError(t, err)
				if tt.wantLen >= 0 {
					require.Len(t, results, tt.wantLen)
				} else {
					require.LessOrEqual(t, len(results), websearch.MaxLimit)
					require.GreaterOrEqual(t, len(results), 3)
				}
				if count := p.requestedCount(t, fake.last(t)); count != "" {
					require.Equal(t, tt.wantCount, count)
				}
			})
		}
	}
}

func TestProviderErrors(t *testing.T) {
	leaky := []byte(`{"detail": "key ` + testKey.Reveal() + ` is not valid", "error": {"code": "BAD", "detail": "token ` + testKey.Reveal() + ` refused"}}`)
	type errCase struct {
		name       string
		status     int
		body       []byte
		header     []string
		want       error
		retryable  bool
		retryAfter time.Duration
		detail     string
	}
	for _, p := range providers {
		cases := []errCase{
			{name: "401 echoing the key", status: 401, body: leaky, want: websearch.ErrUnauthorized},
			{name: "429", status: 429, body: []byte(`{}`), header: []string{"Retry-After", "7"}, want: websearch.ErrRateLimited, retryable: true, retryAfter: 7 * time.Second},
			{name: "500", status: 500, body: []byte("internal error"), want: websearch.ErrUnavailable, retryable: true, detail: "internal error"},
			{name: "502 html", status: 502, body: []byte("<html><body><h1>Bad Gateway</h1></body></html>"), header: []string{"Content-Type", "text/html"}, want: websearch.ErrUnavailable, retryable: true, detail: "Bad Gateway"},
			{name: "503", status: 503, body: nil, want: websearch.ErrUnavailable, retryable: true},
			{name: "422", status: 422, body: leaky, want: websearch.ErrBadRequest},
			{name: "malformed JSON", status: 200, body: []byte(`{"type": "search", "results": [`), want: websearch.ErrBadResponse},
			{name: "not JSON at all", status: 200, body: []byte("<html>welcome</html>"), want: websearch.ErrBadResponse},
			{name: "JSON of another shape", status: 200, body: []byte(`{"hello": "world"}`), want: websearch.ErrBadResponse},
			{name: "wrong field types", status: 200, body: []byte(`{"type": "search", "web": {"results": "x"}, "results": "x"}`), want: websearch.ErrBadResponse},
		}
		if p.unauthorized != "" {
			cases = append(cases,
				errCase{name: "recorded 401", status: 401, body: fixture(t, p.unauthorized), want: websearch.ErrUnauthorized, detail: map[string]string{
					websearch.ProviderBrave:  "SUBSCRIPTION_TOKEN_INVALID: The provided subscription token is invalid.",
					websearch.ProviderTavily: "Unauthorized: missing or invalid API key.",
				}[p.name]},
				errCase{name: "recorded 429", status: 429, body: fixture(t, p.rateLimited), want: websearch.ErrRateLimited, retryable: true, detail: map[string]string{
					websearch.ProviderBrave:  "RATE_LIMITED: Request rate limit exceeded for plan.",
					websearch.ProviderTavily: "excessive requests",
				}[p.name]},
			)
		} else {
			cases = append(cases, errCase{name: "403 json format disabled", status: 403, body: []byte("Forbidden"), want: websearch.ErrBadRequest, detail: "search.formats"})
		}
		for _, tc := range cases {
			t.Run(p.name+"/"+tc.name, func(t *testing.T) {
				fake := newFake(t, serve(tc.status, tc.body, tc.header...))
				s := newSearcher(t, p, fake.URL, loopbackClient(t))
				results, err := s.Search(context.Background(), query, 3)
				require.Nil(t, results)
				require.ErrorIs(t, err, tc.want)
				require.Equal(t, tc.retryable, websearch.Retryable(err))
				if p.config("").APIKey != "" { // SearXNG has no key to leak
					require.NotContains(t, err.Error(), testKey.Reveal())
				}
				require.Contains(t, err.Error(), p.name+" search")
				var se *websearch.StatusError
				if tc.status != http.StatusOK {
					require.ErrorAs(t, err, &se)
					require.Equal(t, tc.status, se.StatusCode)
					require.Equal(t, tc.retryAfter, se.RetryAfter)
					if tc.detail != "" {
						require.Contains(t, se.Detail, tc.detail)
					}
				} else {
					require.False(t, errors.As(err, &se))
				}
			})
		}
	}
}

func TestTransportFailures(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name+"/timeout", func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			fake := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			s := newSearcher(t, p, fake.URL, loopbackClient(t, httpsafe.WithTimeout(100*time.Millisecond)))
			_, err := s.Search(context.Background(), query, 3)
			require.ErrorIs(t, err, httpsafe.ErrTimeout)
			require.True(t, websearch.Retryable(err))
			require.NotContains(t, err.Error(), testKey.Reveal())
		})
		t.Run(p.name+"/connection refused", func(t *testing.T) {
			fake := newFake(t, serve(200, nil))
			base := fake.URL
			fake.Close()
			s := newSearcher(t, p, base, loopbackClient(t))
			_, err := s.Search(context.Background(), query, 3)
			require.ErrorIs(t, err, websearch.ErrUnavailable)
			require.True(t, websearch.Retryable(err))
		})
		t.Run(p.name+"/ssrf policy applies", func(t *testing.T) {
			fake := newFake(t, serve(200, fixture(t, p.fixture)))
			strict, err := httpsafe.New() // no loopback: the fake is an internal address
			require.NoError(t, err)
			s := newSearcher(t, p, fake.URL, strict)
			_, err = s.Search(context.Background(), query, 3)
			require.True(t, httpsafe.IsPolicyError(err), "got %v", err)
			require.False(t, websearch.Retryable(err))
			fake.mu.Lock()
			defer fake.mu.Unlock()
			require.Empty(t, fake.requests, "a refused request never reaches the server")
		})
		t.Run(p.name+"/response too large", func(t *testing.T) {
			huge := bytes.Repeat([]byte(" "), 3<<20)
			fake := newFake(t, serve(200, huge))
			s := newSearcher(t, p, fake.URL, loopbackClient(t))
			_, err := s.Search(context.Background(), query, 3)
			require.ErrorIs(t, err, httpsafe.ErrTooLarge)
		})
	}
}

func TestInvalidQueries(t *testing.T) {
	fake := newFake(t, serve(200, nil))
	for _, p := range providers {
		s := newSearcher(t, p, fake.URL, loopbackClient(t))
		for _, q := range []string{"", "   \n", strings.Repeat("é", websearch.MaxQueryRunes+1), "bad \xff utf-8"} {
			_, err := s.Search(context.Background(), q, 3)
			require.ErrorIs(t, err, websearch.ErrInvalidQuery, "%s %q", p.name, q)
			require.False(t, websearch.Retryable(err))
		}
		_, err := s.Search(context.Background(), strings.Repeat("é", websearch.MaxQueryRunes), 3)
		require.NotErrorIs(t, err, websearch.ErrInvalidQuery, "a query of exactly the limit is sent")
	}
}

func TestConfig(t *testing.T) {
	client := loopbackClient(t)
	tests := []struct {
		name    string
		cfg     websearch.Config
		client  *httpsafe.Client
		wantErr string
	}{
		{name: "brave default base", cfg: websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey}},
		{name: "tavily default base", cfg: websearch.Config{Provider: websearch.ProviderTavily, APIKey: testKey}},
		{name: "searxng", cfg: websearch.Config{Provider: websearch.ProviderSearXNG, BaseURL: "https://search.example.org"}},
		{name: "unknown provider", cfg: websearch.Config{Provider: "bing", APIKey: testKey}, wantErr: `unknown provider "bing"`},
		{name: "brave without key", cfg: websearch.Config{Provider: websearch.ProviderBrave}, wantErr: "an API key is required"},
		{name: "tavily without key", cfg: websearch.Config{Provider: websearch.ProviderTavily, APIKey: " "}, wantErr: "an API key is required"},
		{name: "key with a newline", cfg: websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey + "\n"}, wantErr: "control characters"},
		{name: "searxng without base", cfg: websearch.Config{Provider: websearch.ProviderSearXNG}, wantErr: "a base URL is required"},
		{name: "searxng with a key", cfg: websearch.Config{Provider: websearch.ProviderSearXNG, APIKey: testKey, BaseURL: "https://s.example.org"}, wantErr: "takes no API key"},
		{name: "relative base", cfg: websearch.Config{Provider: websearch.ProviderSearXNG, BaseURL: "search.example.org"}, wantErr: "absolute http(s) URL"},
		{name: "ftp base", cfg: websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey, BaseURL: "ftp://x.example.org"}, wantErr: "absolute http(s) URL"},
		{name: "base with query", cfg: websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey, BaseURL: "https://x.example.org/?a=b"}, wantErr: "no query"},
		{name: "base with credentials", cfg: websearch.Config{Provider: websearch.ProviderSearXNG, BaseURL: "https://user:" + testKey.Reveal() + "@x.example.org"}, wantErr: "must not carry credentials"},
		{name: "no client", cfg: websearch.Config{Provider: websearch.ProviderBrave, APIKey: testKey}, client: nil, wantErr: "HTTP client is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client
			if tt.name == "no client" {
				c = tt.client
			}
			s, err := websearch.New(tt.cfg, c)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tt.cfg.Provider, s.Provider())
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.NotContains(t, err.Error(), testKey.Reveal())
		})
	}
}

func TestSearchersNeverPrintTheKey(t *testing.T) {
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "debug")
	require.NoError(t, err)
	for _, p := range providers[:2] {
		cfg := p.config("https://api.example.org")
		s, err := websearch.New(cfg, loopbackClient(t))
		require.NoError(t, err)
		log.Info("searcher", "searcher", s, "config", cfg)
		fmt.Fprintf(&buf, "%v %+v %#v %v %+v %#v\n", s, s, s, cfg, cfg, cfg)
		switch v := s.(type) {
		case *websearch.Brave:
			fmt.Fprintf(&buf, "%v %+v %#v\n", *v, *v, *v)
		case *websearch.Tavily:
			fmt.Fprintf(&buf, "%v %+v %#v\n", *v, *v, *v)
		}
	}
	require.Contains(t, buf.String(), "brave search at https://api.example.org/res/v1/web/search")
	require.NotContains(t, buf.String(), testKey.Reveal())
}
