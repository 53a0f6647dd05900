package fetchurl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// page is one canned response of the test server.
type page struct {
	status      int
	contentType string // "-" sends no Content-Type at all
	body        string
	location    string
	hang        bool
}

func newServer(t *testing.T, pages map[string]page) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p.hang {
			<-r.Context().Done()
			return
		}
		switch p.contentType {
		case "-":
			w.Header()["Content-Type"] = nil // suppress sniffing by net/http
		case "":
		default:
			w.Header().Set("Content-Type", p.contentType)
		}
		if p.location != "" {
			w.Header().Set("Location", p.location)
		}
		if p.status != 0 {
			w.WriteHeader(p.status)
		}
		_, _ = w.Write([]byte(p.body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func loopbackClient(t *testing.T, opts ...httpsafe.Option) *httpsafe.Client {
	t.Helper()
	c, err := httpsafe.New(append([]httpsafe.Option{httpsafe.AllowLoopbackForTests()}, opts...)...)
	require.NoError(t, err)
	return c
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func TestFetchHTMLOutputGolden(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{
		"/news/bridge": {contentType: "text/html; charset=utf-8", body: readTestdata(t, "html/article.html")},
	})
	f := New(loopbackClient(t), Options{})
	res := f.Fetch(context.Background(), srv.URL+"/news/bridge")
	require.Empty(t, res.Error)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "text/html", res.ContentType)
	require.Equal(t, "Harbour bridge opens – City News", res.Title)
	require.False(t, res.Truncated)
	out := strings.ReplaceAll(res.ToolOutput(), srv.URL, "http://test.example")
	require.True(t, json.Valid([]byte(out)))
	golden(t, "output-html.golden.json", out+"\n")
}

func TestFetchCases(t *testing.T) {
	t.Parallel()
	// windows-1252: "café" with é as the single byte 0xE9.
	latin1 := "<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><p>Caf\xe9 cr\xe8me</p></body></html>"
	srv := newServer(t, map[string]page{
		"/old":       {status: http.StatusMovedPermanently, location: "/new"},
		"/new":       {contentType: "text/html", body: "<title>New</title><p>Moved here.</p>"},
		"/loop":      {status: http.StatusFound, location: "/loop"},
		"/missing":   {status: http.StatusNotFound, contentType: "text/html", body: "<title>Not found</title>"},
		"/error":     {status: http.StatusInternalServerError, body: "boom"},
		"/plain":     {contentType: "text/plain; charset=utf-8", body: "Line one.  \r\n\r\n\r\n\r\nLine two.\x07\n"},
		"/json":      {contentType: "application/ld+json", body: `{"name": "<b>bridge</b>", "length_km": 1.2}`},
		"/png":       {contentType: "image/png", body: "\x89PNG\r\n\x1a\n...."},
		"/pdf":       {contentType: "application/pdf", body: "%PDF-1.7\n"},
		"/bin":       {contentType: "application/octet-stream", body: "\x00\x01\x02\x03binary"},
		"/lying":     {contentType: "text/plain", body: "\x00\x00\x00\x00GIF-ish"},
		"/untyped":   {contentType: "-", body: "<!DOCTYPE html><html><title>Sniffed</title><p>Found by sniffing.</p></html>"},
		"/generic":   {contentType: "application/octet-stream", body: "<html><title>Generic</title><p>HTML behind a generic type.</p></html>"},
		"/latin1":    {contentType: "text/html", body: latin1},
		"/latin1hdr": {contentType: "text/plain; charset=iso-8859-1", body: "na\xefve"},
		"/empty":     {contentType: "text/html", body: "<html><body><script>render()</script></body></html>"},
	})
	f := New(loopbackClient(t), Options{})
	tests := []struct {
		path    string
		want    Result // URL and FinalURL are filled in from path
		noFinal bool
	}{
		{path: "/old", want: Result{Status: 200, ContentType: "text/html", Title: "New", Text: "Moved here."}},
		{path: "/loop", noFinal: true, want: Result{Error: "too many redirects"}},
		{path: "/missing", want: Result{Status: 404, ContentType: "text/html", Error: "the server answered HTTP 404 Not Found; no page text"}},
		{path: "/error", want: Result{Status: 500, ContentType: "text/plain", Error: "the server answered HTTP 500 Internal Server Error; no page text"}},
		{path: "/plain", want: Result{Status: 200, ContentType: "text/plain", Text: "Line one.\n\nLine two."}},
		{path: "/json", want: Result{Status: 200, ContentType: "application/ld+json", Text: `{"name": "<b>bridge</b>", "length_km": 1.2}`}},
		{path: "/png", want: Result{Status: 200, ContentType: "image/png", Error: "this is an image (image/png), not a page with text"}},
		{path: "/pdf", want: Result{Status: 200, ContentType: "application/pdf", Error: "this is a PDF document, which fetch_url cannot read; look for an HTML version of the source"}},
		{path: "/bin", want: Result{Status: 200, ContentType: "application/octet-stream", Error: "unsupported content type application/octet-stream: only HTML, plain text and JSON can be read"}},
		{path: "/lying", want: Result{Status: 200, ContentType: "text/plain", Error: "unsupported content type text/plain: only HTML, plain text and JSON can be read"}},
		{path: "/untyped", want: Result{Status: 200, ContentType: "text/html", Title: "Sniffed", Text: "Found by sniffing."}},
		{path: "/generic", want: Result{Status: 200, ContentType: "text/html", Title: "Generic", Text: "HTML behind a generic type."}},
		{path: "/latin1", want: Result{Status: 200, ContentType: "text/html", Title: "Café", Text: "Café crème"}},
		{path: "/latin1hdr", want: Result{Status: 200, ContentType: "text/plain", Text: "naïve"}},
		{path: "/empty", want: Result{Status: 200, ContentType: "text/html", Error: "the page has no readable text (it may need JavaScript to show its content)"}},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			want := tc.want
			want.URL = srv.URL + tc.path
			if !tc.noFinal {
				want.FinalURL = srv.URL + tc.path
				if tc.path == "/old" {
					want.FinalURL = srv.URL + "/new"
				}
			}
			require.Equal(t, want, f.Fetch(context.Background(), srv.URL+tc.path))
		})
	}
}

func TestFetchRefused(t *testing.T) {
	t.Parallel()
	target := newServer(t, map[string]page{"/": {contentType: "text/plain", body: "secret internal data"}})
	entry := newServer(t, map[string]page{"/jump": {status: http.StatusFound, location: target.URL + "/"}})

	// Only the entry server is reachable: its redirect to another loopback
	// port must be refused.
	client, err := httpsafe.New(httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(entry.Listener.Addr().String())))
	require.NoError(t, err)
	f := New(client, Options{})
	production, err := httpsafe.New()
	require.NoError(t, err)

	tests := []struct {
		name    string
		fetcher *Fetcher
		url     string
		want    string
	}{
		{"redirect to internal address", f, entry.URL + "/jump", "the address is not on the public internet (private, local or reserved network) and cannot be fetched"},
		{"loopback", New(production, Options{}), target.URL + "/", "the address is not on the public internet (private, local or reserved network) and cannot be fetched"},
		{"metadata endpoint", f, "http://169.254.169.254/latest/meta-data/", "the address is not on the public internet (private, local or reserved network) and cannot be fetched"},
		{"file scheme", f, "file:///etc/passwd", "only http and https URLs can be fetched"},
		{"ftp scheme", f, "ftp://example.com/file.txt", "only http and https URLs can be fetched"},
		{"user info", f, "http://user:pw@example.com/", "not a valid absolute http or https URL"},
		{"relative", f, "/just/a/path", "only http and https URLs can be fetched"},
		{"garbage", f, "http://[::1", "not a valid absolute http or https URL"},
		{"port", New(production, Options{}), "http://93.184.216.34:8080/", "only the standard web ports 80 and 443 can be fetched"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.fetcher.Fetch(context.Background(), tc.url)
			require.Equal(t, tc.want, res.Error)
			require.Empty(t, res.Text)
			require.NotContains(t, res.ToolOutput(), "secret internal data")
		})
	}
}

func TestFetchSizeLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{"/big": {contentType: "text/plain", body: strings.Repeat("x", 4096)}})
	f := New(loopbackClient(t), Options{MaxBytes: 1024})
	res := f.Fetch(context.Background(), srv.URL+"/big")
	require.Equal(t, "the page is larger than 1024 bytes and was not read", res.Error)
	require.Empty(t, res.Text)

	f = New(loopbackClient(t), Options{MaxBytes: 1 << 20})
	res = f.Fetch(context.Background(), srv.URL+"/big")
	require.Empty(t, res.Error)
	require.Len(t, res.Text, 4096)
}

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{"/slow": {hang: true}})
	f := New(loopbackClient(t), Options{Timeout: 100 * time.Millisecond})
	start := time.Now()
	res := f.Fetch(context.Background(), srv.URL+"/slow")
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "the server did not deliver the page within 100ms", res.Error)
}

func TestFetchTruncatesOnRuneBoundary(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{
		"/long":  {contentType: "text/plain; charset=utf-8", body: strings.Repeat("é", 15)},
		"/exact": {contentType: "text/plain; charset=utf-8", body: strings.Repeat("é", 10)},
	})
	f := New(loopbackClient(t), Options{MaxChars: 10})
	res := f.Fetch(context.Background(), srv.URL+"/long")
	require.True(t, res.Truncated)
	require.True(t, utf8.ValidString(res.Text))
	require.Equal(t, strings.Repeat("é", 10), res.Text)
	require.Contains(t, res.ToolOutput(), `"truncated":true`)

	res = f.Fetch(context.Background(), srv.URL+"/exact")
	require.False(t, res.Truncated)
	require.Equal(t, strings.Repeat("é", 10), res.Text)
	require.NotContains(t, res.ToolOutput(), "truncated")
}

func TestFetchCanceled(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{"/slow": {hang: true}})
	f := New(loopbackClient(t), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	res := f.Fetch(ctx, srv.URL+"/slow")
	require.Equal(t, "the fetch was canceled", res.Error)

	_, err := f.Call(ctx, llm.ToolCall{CallID: "call_1", Name: prompts.ToolFetchURL, Arguments: `{"url":"` + srv.URL + `/slow"}`})
	require.ErrorIs(t, err, context.Canceled)
}

func TestCall(t *testing.T) {
	t.Parallel()
	srv := newServer(t, map[string]page{"/a": {contentType: "text/plain", body: "hello <world> & more"}})
	f := New(loopbackClient(t), Options{})
	ctx := context.Background()

	out, err := f.Call(ctx, llm.ToolCall{CallID: "call_1", Name: "fetch_url", JSON: json.RawMessage(`{"url":"` + srv.URL + `/a"}`)})
	require.NoError(t, err)
	require.Equal(t, "call_1", out.CallID)
	require.Equal(t, `{"url":"`+srv.URL+`/a","final_url":"`+srv.URL+`/a","status":200,"content_type":"text/plain","text":"hello <world> & more"}`, out.Output)

	// Without checked JSON the raw arguments are used.
	out, err = f.Call(ctx, llm.ToolCall{CallID: "call_2", Name: "fetch_url", Arguments: `{"url":"` + srv.URL + `/a"}`})
	require.NoError(t, err)
	require.Contains(t, out.Output, "hello")

	// Bad arguments: an error for the model, not for the orchestrator.
	for _, args := range []string{``, `{}`, `{"url":""}`, `not json`, `{"url": 5}`} {
		out, err = f.Call(ctx, llm.ToolCall{CallID: "call_3", Name: "fetch_url", Arguments: args})
		require.NoError(t, err, args)
		var res Result
		require.NoError(t, json.Unmarshal([]byte(out.Output), &res))
		require.Equal(t, `the arguments must be a JSON object with the page address in "url"`, res.Error, args)
	}

	_, err = f.Call(ctx, llm.ToolCall{CallID: "call_4", Name: "submit_correction", Arguments: `{}`})
	require.Error(t, err)
}

func TestTool(t *testing.T) {
	f := New(loopbackClient(t), Options{})
	tool := f.Tool()
	require.Equal(t, prompts.ToolFetchURL, tool.Name)
	require.NoError(t, tool.Parameters.CheckStrict())
	require.Equal(t, []string{"url"}, tool.Parameters.Required)

	def, err := json.MarshalIndent(struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Parameters  any    `json:"parameters"`
	}{tool.Name, tool.Description, tool.Parameters}, "", "  ")
	require.NoError(t, err)
	golden(t, "tool.golden.json", string(def)+"\n")
}

func TestToolOutputShape(t *testing.T) {
	require.Equal(t, `{"url":"https://x.test/"}`, Result{URL: "https://x.test/"}.ToolOutput())
	require.Equal(t, `{"url":"u","error":"a < b"}`, Result{URL: "u", Error: "a < b"}.ToolOutput())
	var back Result
	full := Result{URL: "u", FinalURL: "f", Status: 200, ContentType: "text/html", Title: "t", Text: "x", Truncated: true}
	require.NoError(t, json.Unmarshal([]byte(full.ToolOutput()), &back))
	require.Equal(t, full, back)
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"", 5, "", false},
		{"abc", 3, "abc", false},
		{"abcd", 3, "abc", true},
		{"日本語テキスト", 3, "日本語", true},
		{"a😀b", 2, "a😀", true},
	}
	for _, tc := range tests {
		got, cut := truncate(tc.in, tc.n)
		require.Equal(t, tc.want, got)
		require.Equal(t, tc.cut, cut)
	}
}
