package canonical

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/httpsafe"
)

// recordedRequest is what a fake platform received.
type recordedRequest struct {
	Method string
	Path   string
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// fakePlatform is an httptest server standing in for the three platform
// APIs, serving the recorded responses in testdata.
type fakePlatform struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recordedRequest
}

// Paths of the fake endpoints; the placeholders land in the path so tests
// see which language or publication was asked for.
const (
	fakeLessWrongPath = "/lesswrong/graphql"
	fakeWikipediaPath = "/wikipedia/{lang}/w/api.php"
	fakeSubstackPath  = "/substack/{publication}/api/v1/posts/{slug}"
	fakeBlueskyPath   = "/bluesky/xrpc/app.bsky.feed.getPostThread"
)

// newFakePlatform serves recorded responses; handler, when not nil, answers
// instead (tests of failures and odd responses).
func newFakePlatform(t *testing.T, handler http.HandlerFunc) *fakePlatform {
	t.Helper()
	p := &fakePlatform{}
	if handler == nil {
		handler = serveRecorded
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.requests = append(p.requests, recordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		handler(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *fakePlatform) endpoints() Endpoints {
	return Endpoints{
		LessWrongGraphQL: p.URL + fakeLessWrongPath,
		WikipediaAPI:     p.URL + fakeWikipediaPath,
		SubstackPost:     p.URL + fakeSubstackPath,
		BlueskyThread:    p.URL + fakeBlueskyPath,
	}
}

func (p *fakePlatform) recorded() []recordedRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recordedRequest(nil), p.requests...)
}

func (p *fakePlatform) addrPort() netip.AddrPort {
	return netip.MustParseAddrPort(p.Listener.Addr().String())
}

// serveRecorded routes to the testdata file for the requested post, with
// the platform's not-found answer when there is none.
func serveRecorded(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	switch {
	case r.URL.Path == fakeLessWrongPath && r.Method == http.MethodPost:
		var req lessWrongRequestBody
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.Contains(req.Query, "contents") {
			http.Error(w, `{"errors":[{"message":"bad query"}]}`, http.StatusBadRequest)
			return
		}
		serveFile(w, "lesswrong-graphql-"+req.Variables["id"]+".json", `{"data":{"post":{"result":null}}}`, http.StatusOK)
	case strings.HasPrefix(r.URL.Path, "/wikipedia/") && strings.HasSuffix(r.URL.Path, "/w/api.php"):
		lang := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/wikipedia/"), "/w/api.php")
		oldid := r.URL.Query().Get("oldid")
		serveFile(w, "wikipedia-parse-"+lang+"-"+oldid+".json",
			`{"error":{"code":"nosuchrevid","info":"There is no revision with ID `+oldid+`."}}`, http.StatusOK)
	case strings.HasPrefix(r.URL.Path, "/substack/"):
		slug := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		serveFile(w, "substack-post-"+slug+".json", `{"error":"Post not found"}`, http.StatusNotFound)
	case r.URL.Path == fakeBlueskyPath:
		serveBlueskyThread(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveBlueskyThread answers getPostThread like the AppView: the recorded
// thread of the requested AT URI, or XRPC's 400 NotFound.
func serveBlueskyThread(w http.ResponseWriter, r *http.Request) {
	uri := r.URL.Query().Get("uri")
	b, err := os.ReadFile(filepath.Join("testdata", "bluesky-getPostThread-"+filepath.Base(uri[strings.LastIndex(uri, "/")+1:])+".json"))
	var recorded struct {
		Thread struct {
			Post struct {
				URI string `json:"uri"`
			} `json:"post"`
		} `json:"thread"`
	}
	if err != nil || json.Unmarshal(b, &recorded) != nil || recorded.Thread.Post.URI != uri {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"NotFound","message":"Post not found: `+uri+`"}`)
		return
	}
	_, _ = w.Write(b)
}

func serveFile(w http.ResponseWriter, name, missing string, missingStatus int) {
	b, err := os.ReadFile(filepath.Join("testdata", filepath.Base(name)))
	if err != nil {
		w.WriteHeader(missingStatus)
		_, _ = io.WriteString(w, missing)
		return
	}
	_, _ = w.Write(b)
}

// sleepRecorder stands in for the retry wait: it records each delay and
// returns at once (or with the context's error).
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// testFetcher is a Fetcher on fake endpoints whose client may reach
// loopback, with retry waits recorded instead of slept.
type testFetcher struct {
	*Fetcher
	sleeps *sleepRecorder
	logs   *bytes.Buffer
}

func newTestFetcher(t *testing.T, endpoints Endpoints, clientOpts []httpsafe.Option, opts ...Option) testFetcher {
	t.Helper()
	client, err := httpsafe.New(clientOpts...)
	require.NoError(t, err)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f, err := NewFetcher(client, endpoints, logger, opts...)
	require.NoError(t, err)
	rec := &sleepRecorder{}
	f.sleep = rec.sleep
	return testFetcher{Fetcher: f, sleeps: rec, logs: &logs}
}

// loopbackFetcher is the usual test fetcher: any loopback address allowed.
func loopbackFetcher(t *testing.T, p *fakePlatform, opts ...Option) testFetcher {
	return newTestFetcher(t, p.endpoints(), []httpsafe.Option{httpsafe.AllowLoopbackForTests()}, opts...)
}

// requireSameText compares long texts and reports the first difference
// instead of dumping both documents.
func requireSameText(t testing.TB, want, got, label string) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-80)
	t.Fatalf("%s differs at byte %d (want %d bytes, got %d)\nwant: %q\n got: %q",
		label, i, len(want), len(got), want[from:min(len(want), i+120)], got[from:min(len(got), i+120)])
}
