package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/internal/testkit/fixtures"
	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/projections/serving"
)

// submit POSTs a submission body (raw JSON) to the workbench API.
func submit(t testing.TB, s *Server, body string, headers map[string]string) response {
	t.Helper()
	return do(t, s, request{path: "/api/v1/analyses", body: []byte(body), headers: headers, noVersion: true})
}

// apiErrorOf checks a workbench API refusal: exactly {"error":{"code","message"}}.
func apiErrorOf(t *testing.T, r response) (code, message string) {
	t.Helper()
	var top map[string]map[string]string
	require.NoError(t, json.Unmarshal(r.body, &top), "body: %s", r.body)
	require.Len(t, top, 1, "body: %s", r.body)
	e, ok := top["error"]
	require.True(t, ok, "body: %s", r.body)
	require.Len(t, e, 2, "body: %s", r.body)
	require.NotEmpty(t, e["message"])
	return e["code"], e["message"]
}

func analysisIDOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", hex.EncodeToString(sum[:])),
		events.AnalysisTypeVerdict, testPromptVersion)
}

// A text submission appends one request of the normalised text and
// answers 202 with the analysis id derived from it; the page's requests
// are recorded as the workbench's, other callers' as the API's.
func TestSubmitText(t *testing.T) {
	w := newBench(t, benchOpts{})
	raw := "  The Eiffel Tower was completed in 1925.\n\n“It is 330 m tall”\u00a0— says the guide.  "
	norm := `The Eiffel Tower was completed in 1925. "It is 330 m tall" - says the guide.`
	body, _ := json.Marshal(map[string]string{"text": raw})
	r := submit(t, w.server, string(body), nil)
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	id := analysisIDOf(norm)
	require.JSONEq(t, `{"id":"`+id+`"}`, string(r.body))

	reqs := w.requests(t)
	require.Len(t, reqs, 1)
	got := reqs[0]
	require.Equal(t, id, got.AnalysisID)
	require.Equal(t, norm, got.Text)
	require.Equal(t, events.AnalysisInputText, got.InputKind)
	require.Equal(t, events.AnalysisSourceAPI, got.Source)
	require.Equal(t, testPromptVersion, got.PromptVersion)
	require.Regexp(t, hex64, got.RequesterKey)
	require.Empty(t, got.URL)

	// From the page: another text, recorded as the workbench's.
	r = submit(t, w.server, `{"text":"Water boils at 90 degrees at sea level."}`, map[string]string{HeaderClient: "workbench"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	reqs = w.requests(t)
	require.Len(t, reqs, 2)
	sources := map[string]string{}
	for _, p := range reqs {
		sources[p.Text] = p.Source
	}
	require.Equal(t, events.AnalysisSourceWorkbench, sources["Water boils at 90 degrees at sea level."])
}

// The same normalised content is the same job: before the projection has
// it the request is appended again (the analyst starts the analysis once);
// once the projection has it, the answer is 200 with its id and nothing is
// appended.
func TestSubmitDuplicate(t *testing.T) {
	w := newBench(t, benchOpts{})
	r := submit(t, w.server, `{"text":"The moon is made of cheese."}`, nil)
	require.Equal(t, http.StatusAccepted, r.status)
	id := analysisIDOf("The moon is made of cheese.")
	require.JSONEq(t, `{"id":"`+id+`"}`, string(r.body))
	w.analyses.set(serving.Analysis{ID: id, Status: events.StatusRunning, CreatedAt: time.Now()})
	before := w.records(t)
	for _, text := range []string{"The moon is made of cheese.", "  The  moon is\tmade of cheese. ", "The moon is made of cheese.\u200b"} {
		body, _ := json.Marshal(map[string]string{"text": text})
		r = submit(t, w.server, string(body), nil)
		require.Equal(t, http.StatusOK, r.status, "%q: %s", text, r.body)
		require.JSONEq(t, `{"id":"`+id+`"}`, string(r.body))
		require.Equal(t, "/api/v1/analyses/"+id, r.header("Location"))
	}
	require.Equal(t, before, w.records(t))
}

// Every refused submission answers its exact status and code, and appends
// nothing.
func TestSubmitRefusals(t *testing.T) {
	w := newBench(t, benchOpts{maxPageBytes: 64 << 10, pages: pageHandler(t)})
	port := strings.TrimPrefix(w.pageURL, "http://127.0.0.1")
	long := strings.Repeat("a", 32001)
	tests := []struct {
		name, body  string
		contentType string
		status      int
		code        string
		message     string // a part of the message, when checked
	}{
		{name: "empty text", body: `{"text":""}`, status: 400, code: "TEXT_EMPTY"},
		{name: "blank text", body: `{"text":" \n\t\u00a0\u2028 "}`, status: 400, code: "TEXT_EMPTY"},
		{name: "zero-width only", body: `{"text":"\u200b\ufeff"}`, status: 400, code: "TEXT_EMPTY"},
		{name: "32,001 characters", body: `{"text":"` + long + `"}`, status: 400, code: "TEXT_TOO_LONG", message: "32,001 characters"},
		{name: "NUL", body: `{"text":"a\u0000b"}`, status: 400, code: "TEXT_CONTROL_CHARACTERS", message: "NUL (U+0000)"},
		{name: "bell", body: `{"text":"a\u0007b"}`, status: 400, code: "TEXT_CONTROL_CHARACTERS", message: "U+0007"},
		{name: "C1 control", body: `{"text":"a\u0085b"}`, status: 400, code: "TEXT_CONTROL_CHARACTERS", message: "U+0085"},
		{name: "escape", body: `{"text":"\u001b[31mred"}`, status: 400, code: "TEXT_CONTROL_CHARACTERS"},
		{name: "both", body: `{"text":"a claim","url":"https://example.org/"}`, status: 400, code: "INPUT_AMBIGUOUS"},
		{name: "neither", body: `{}`, status: 400, code: "INPUT_MISSING"},
		{name: "null text", body: `{"text":null}`, status: 400, code: "INPUT_MISSING"},
		{name: "malformed JSON", body: `{"text":`, status: 400, code: "INVALID_JSON"},
		{name: "not an object", body: `["text"]`, status: 400, code: "INVALID_JSON"},
		{name: "text not a string", body: `{"text":5}`, status: 400, code: "INVALID_JSON"},
		{name: "unknown field", body: `{"txt":"a claim"}`, status: 400, code: "INVALID_JSON", message: "unknown field"},
		{name: "trailing data", body: `{"text":"a"} {}`, status: 400, code: "INVALID_JSON"},
		{name: "not JSON", body: `{"text":"a"}`, contentType: "text/plain", status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "form", body: `text=a`, contentType: "application/x-www-form-urlencoded", status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "empty url", body: `{"url":"  "}`, status: 400, code: "URL_INVALID"},
		{name: "relative url", body: `{"url":"/etc/passwd"}`, status: 400, code: "URL_INVALID"},
		{name: "scheme-relative url", body: `{"url":"//example.org/a"}`, status: 400, code: "URL_INVALID"},
		{name: "file url", body: `{"url":"file:///etc/passwd"}`, status: 400, code: "URL_SCHEME"},
		{name: "javascript url", body: `{"url":"javascript:alert(1)"}`, status: 400, code: "URL_SCHEME"},
		{name: "gopher url", body: `{"url":"gopher://127.0.0.1:6379/_FLUSHALL"}`, status: 400, code: "URL_SCHEME"},
		{name: "credentials", body: `{"url":"http://admin:secret@pages.test` + port + `/"}`, status: 400, code: "URL_INVALID", message: "password"},
		{name: "space in host", body: `{"url":"http://exa mple.org/"}`, status: 400, code: "URL_INVALID"},
		{name: "control in url", body: `{"url":"http://pages.test/\u0000"}`, status: 400, code: "URL_INVALID"},
		{name: "bad port", body: `{"url":"http://pages.test:99999/"}`, status: 400, code: "URL_INVALID"},
		{name: "bad host", body: `{"url":"http://a..b/"}`, status: 400, code: "URL_INVALID"},
		{name: "2,001 characters", body: `{"url":"https://example.org/` + strings.Repeat("a", 1981) + `"}`, status: 400, code: "URL_TOO_LONG"},
		{name: "private address", body: `{"url":"http://10.0.0.1/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "loopback", body: `{"url":"http://127.0.0.1/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "loopback, other port", body: `{"url":"http://127.0.0.2` + port + `/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "IPv6 loopback", body: `{"url":"http://[::1]/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "IPv4-mapped IPv6", body: `{"url":"http://[::ffff:192.168.0.1]/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "cloud metadata", body: `{"url":"http://169.254.169.254/latest/meta-data/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "name of a private address", body: `{"url":"https://intranet.test/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "name of metadata", body: `{"url":"http://metadata.test/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "rebinding name", body: `{"url":"http://rebind.test/"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "redirect to a private address", body: `{"url":"` + w.pageURL + `/redirect-private"}`, status: 400, code: "URL_PRIVATE_ADDRESS"},
		{name: "redirect to file", body: `{"url":"` + w.pageURL + `/redirect-file"}`, status: 400, code: "URL_SCHEME"},
		{name: "other port", body: `{"url":"http://public.test:8080/"}`, status: 400, code: "URL_PORT"},
		{name: "unknown host", body: `{"url":"https://nowhere.test/"}`, status: 422, code: "URL_UNREACHABLE", message: "does not exist"},
		{name: "not found", body: `{"url":"` + w.pageURL + `/missing"}`, status: 422, code: "URL_HTTP_STATUS", message: "HTTP 404 Not Found"},
		{name: "server error", body: `{"url":"` + w.pageURL + `/broken"}`, status: 422, code: "URL_HTTP_STATUS", message: "HTTP 500"},
		{name: "pdf", body: `{"url":"` + w.pageURL + `/paper.pdf"}`, status: 422, code: "URL_NOT_HTML", message: "application/pdf"},
		{name: "image", body: `{"url":"` + w.pageURL + `/photo.png"}`, status: 422, code: "URL_NOT_HTML", message: "image/png"},
		{name: "plain text", body: `{"url":"` + w.pageURL + `/notes.txt"}`, status: 422, code: "URL_NOT_HTML", message: "text/plain"},
		{name: "binary posing as html", body: `{"url":"` + w.pageURL + `/binary"}`, status: 422, code: "URL_NOT_HTML"},
		{name: "too large", body: `{"url":"` + w.pageURL + `/huge"}`, status: 422, code: "URL_TOO_LARGE"},
		{name: "no text", body: `{"url":"` + w.pageURL + `/app-shell"}`, status: 422, code: "URL_NO_TEXT"},
		{name: "empty page", body: `{"url":"` + w.pageURL + `/empty"}`, status: 422, code: "URL_NO_TEXT"},
		{name: "redirect loop", body: `{"url":"` + w.pageURL + `/loop"}`, status: 422, code: "URL_UNREACHABLE", message: "redirects too many times"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := w.records(t)
			h := map[string]string{}
			if tc.contentType != "" {
				h["Content-Type"] = tc.contentType
			}
			r := submit(t, w.server, tc.body, h)
			require.Equal(t, tc.status, r.status, "body: %s", r.body)
			code, msg := apiErrorOf(t, r)
			require.Equal(t, tc.code, code, "message: %s", msg)
			if tc.message != "" {
				require.Contains(t, msg, tc.message)
			}
			require.Equal(t, before, w.records(t), "a refused submission appends nothing")
		})
	}
}

// A body over the limit is refused before it is read, in the API's form.
func TestSubmitOversizedBody(t *testing.T) {
	w := newBench(t, benchOpts{})
	body, _ := json.Marshal(map[string]string{"text": strings.Repeat("word ", MaxBodyBytes/5+1)})
	r := submit(t, w.server, string(body), nil)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	code, _ := apiErrorOf(t, r)
	require.Equal(t, "BODY_TOO_LARGE", code)
	require.Zero(t, w.records(t))
}

// Exactly 32,000 characters (after whitespace is collapsed; multibyte
// characters count once) are accepted.
func TestSubmitLongestText(t *testing.T) {
	w := newBench(t, benchOpts{})
	text := strings.Repeat("é", 31990) + "    " + strings.Repeat("z", 9)
	body, _ := json.Marshal(map[string]string{"text": text})
	r := submit(t, w.server, string(body), nil)
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	reqs := w.requests(t)
	require.Len(t, reqs, 1)
	require.Equal(t, 32000, utf8.RuneCountInString(reqs[0].Text))
}

// pageHandler serves the pages the URL submissions fetch: a saved real
// page (Wikipedia's Einstein article from the shared fixtures) and every
// way a page can be unusable.
func pageHandler(t *testing.T) http.Handler {
	einstein := fixtures.Read(t, "wikipedia-albert-einstein-trimmed.html")
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/article", html(`<!doctype html><html><head><title>Tower facts &amp; myths</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<main><h1>Tower facts</h1><p>The Eiffel Tower was completed in <b>1889</b>.</p>
<p>It is “330 metres” tall.<script>document.write("injected")</script></p><aside>Subscribe!</aside></main>
<footer>© Example</footer></body></html>`))
	mux.HandleFunc("/hostile", html(`<html><head><title>"><script>alert(1)</script></title></head><body><main>
<p>&lt;script&gt;alert('x')&lt;/script&gt; The sky is green.</p><img src=x onerror="alert(2)"></main></body></html>`))
	mux.HandleFunc("/einstein", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		_, _ = w.Write(einstein)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		_, _ = w.Write([]byte("<html><body><p>Caf\xe9 cr\xe8me costs 3 \x80.</p></body></html>"))
	})
	mux.HandleFunc("/redirect-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/admin", http.StatusFound)
	})
	mux.HandleFunc("/redirect-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/paper.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"))
	})
	mux.HandleFunc("/photo.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "The Eiffel Tower was completed in 1925.")
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("\x00\x01\x02\x03<html><p>x</p></html>"))
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>"+strings.Repeat("Lorem ipsum dolor sit amet. ", 4000)+"</p></body></html>")
	})
	mux.HandleFunc("/app-shell", html(`<!doctype html><html><head><title></title><script src="/bundle.js"></script></head><body><div id="root"></div><noscript>Enable JavaScript.</noscript></body></html>`))
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Content-Type", "text/html") })
	return mux
}

// A page is fetched through the SSRF-safe client and its main text is
// analysed: navigation, asides, scripts and footers left out, the title
// kept, its charset honoured, names in any script resolved to punycode.
func TestSubmitURL(t *testing.T) {
	w := newBench(t, benchOpts{pages: pageHandler(t)})
	port := strings.TrimPrefix(w.pageURL, "http://127.0.0.1")
	tests := []struct {
		name, url, fetched, title, text string
	}{
		{"article", w.pageURL + "/article#section", w.pageURL + "/article", "Tower facts & myths",
			`# Tower facts The Eiffel Tower was completed in 1889. It is "330 metres" tall.`},
		{"hostile", w.pageURL + "/hostile", w.pageURL + "/hostile", `"><script>alert(1)</script>`,
			`<script>alert('x')</script> The sky is green.`},
		{"latin-1", w.pageURL + "/latin1", w.pageURL + "/latin1", "", "Café crème costs 3 €."},
		{"IDN host", "http://BÜCHER.test" + port + "/article", "http://xn--bcher-kva.test" + port + "/article", "Tower facts & myths",
			`# Tower facts The Eiffel Tower was completed in 1889. It is "330 metres" tall.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"url": tc.url})
			r := submit(t, w.server, string(body), map[string]string{HeaderClient: "workbench"})
			require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
			var out idOutput
			require.NoError(t, json.Unmarshal(r.body, &out))
			var got *events.AnalysisRequestedV1
			for _, p := range w.requests(t) {
				if p.AnalysisID == out.ID {
					got = p
				}
			}
			require.NotNil(t, got)
			require.Equal(t, events.AnalysisInputURL, got.InputKind)
			require.Equal(t, tc.fetched, got.URL)
			require.Equal(t, tc.title, got.Title)
			require.Equal(t, tc.text, got.Text)
			sum := sha256.Sum256([]byte(tc.text))
			require.Equal(t, hex.EncodeToString(sum[:]), got.ContentSHA256)
			require.Equal(t, events.AnalysisSourceWorkbench, got.Source)
		})
	}

	// The same text as a text submission is the same job.
	r := submit(t, w.server, `{"text":"Café crème costs 3 €."}`, nil)
	require.Equal(t, http.StatusAccepted, r.status)
	require.JSONEq(t, `{"id":"`+analysisIDOf("Café crème costs 3 €.")+`"}`, string(r.body))

	// A real saved page (Wikipedia's Einstein article): its article text,
	// cut to 32,000 characters at a word.
	r = submit(t, w.server, `{"url":"`+w.pageURL+`/einstein"}`, nil)
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	var out idOutput
	require.NoError(t, json.Unmarshal(r.body, &out))
	for _, p := range w.requests(t) {
		if p.AnalysisID != out.ID {
			continue
		}
		require.Equal(t, "Albert Einstein - Wikipedia", p.Title)
		require.True(t, strings.HasPrefix(p.Text, "# Albert Einstein "), "text starts %q", p.Text[:80])
		require.Contains(t, p.Text, "theory of relativity")
		require.NotContains(t, p.Text, "Jump to content")
		n := utf8.RuneCountInString(p.Text)
		require.LessOrEqual(t, n, 32000)
		require.Greater(t, n, 31800)
		require.False(t, strings.HasSuffix(p.Text, " "))
	}
}

// Submissions are rationed per client, charged when a page is fetched or
// a request appended; a valid instance API key draws on its own, larger
// budget. An over-limit submission appends nothing; refused input and
// analyses that exist already cost nothing.
func TestSubmitRateLimit(t *testing.T) {
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	anon, err := ratelimit.New(ratelimit.Limit{PerSecond: 1.0 / 60, Burst: 3}, 100, now)
	require.NoError(t, err)
	keyed, err := ratelimit.New(ratelimit.Limit{PerSecond: 1.0 / 6, Burst: 20}, 100, now)
	require.NoError(t, err)
	w := newBench(t, benchOpts{submitLimit: anon, keySubmitLimit: keyed, pages: pageHandler(t)})
	for i := range 2 {
		r := submit(t, w.server, fmt.Sprintf(`{"text":"claim number %d"}`, i), nil)
		require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	}
	// Refusals of the input cost nothing.
	for range 5 {
		require.Equal(t, http.StatusBadRequest, submit(t, w.server, `{"text":""}`, nil).status)
		require.Equal(t, http.StatusBadRequest, submit(t, w.server, `{"url":"ftp://example.org/"}`, nil).status)
	}
	// A fetch is charged, whatever the page holds.
	r := submit(t, w.server, `{"url":"`+w.pageURL+`/missing"}`, nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	before := w.records(t)
	r = submit(t, w.server, `{"text":"claim number 2"}`, nil)
	require.Equal(t, http.StatusTooManyRequests, r.status)
	code, msg := apiErrorOf(t, r)
	require.Equal(t, "RATE_LIMITED", code)
	require.Contains(t, msg, "retry in 60 s")
	require.Equal(t, "60", r.header("Retry-After"))
	r = submit(t, w.server, `{"url":"`+w.pageURL+`/article"}`, nil)
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, before, w.records(t))
	// An analysis the projection has is answered, free.
	w.analyses.set(serving.Analysis{ID: analysisIDOf("claim number 0"), Status: events.StatusComplete, CreatedAt: clock})
	r = submit(t, w.server, `{"text":"claim number 0"}`, nil)
	require.Equal(t, http.StatusOK, r.status)

	// A revoked or unknown key is no key: still limited.
	w.reader.keys[apikeys.Hash("revoked-key")] = false
	r = submit(t, w.server, `{"text":"claim number 2"}`, map[string]string{HeaderAPIKey: "revoked-key"})
	require.Equal(t, http.StatusTooManyRequests, r.status)
	// A valid key: its own budget.
	w.reader.keys[apikeys.Hash("valid-key")] = true
	for i := range 20 {
		r = submit(t, w.server, fmt.Sprintf(`{"text":"keyed claim %d"}`, i), map[string]string{HeaderAPIKey: " valid-key "})
		require.Equal(t, http.StatusAccepted, r.status, "submission %d: %s", i, r.body)
	}
	r = submit(t, w.server, `{"text":"keyed claim 20"}`, map[string]string{HeaderAPIKey: "valid-key"})
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, "6", r.header("Retry-After"))
	require.Equal(t, before+20, w.records(t))
	// Time refills the anonymous budget.
	clock = clock.Add(time.Minute)
	r = submit(t, w.server, `{"text":"claim number 2"}`, nil)
	require.Equal(t, http.StatusAccepted, r.status)
}

// GET /api/v1/analyses/{id}: the job JSON; 404 for an unknown id, 400 for
// a malformed one.
func TestGetAnalysis(t *testing.T) {
	w := newBench(t, benchOpts{})
	job := sampleJob()
	w.analyses.set(job)
	r := do(t, w.server, request{method: http.MethodGet, path: "/api/v1/analyses/" + job.ID, noVersion: true})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "no-store", r.header("Cache-Control"))
	want, err := json.Marshal(job)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(r.body))
	golden(t, "analyses/job.json", indentJSON(t, r.body))

	// Upper case is the same id.
	r = do(t, w.server, request{method: http.MethodGet, path: "/api/v1/analyses/" + strings.ToUpper(job.ID), noVersion: true})
	require.Equal(t, http.StatusOK, r.status)

	for _, tc := range []struct {
		path, code string
		status     int
	}{
		{"/api/v1/analyses/" + analysisIDOf("never submitted"), "NOT_FOUND", 404},
		{"/api/v1/analyses/not-a-uuid", "INVALID_ID", 400},
		{"/api/v1/analyses/" + strings.ReplaceAll(job.ID, "-", ""), "INVALID_ID", 400},
		{"/api/v1/analyses/%27%20OR%201%3D1--", "INVALID_ID", 400},
		{"/api/v1/analyses/" + job.ID + "/events/extra", "NOT_FOUND", 404},
		{"/api/v1/nothing", "NOT_FOUND", 404},
	} {
		r := do(t, w.server, request{method: http.MethodGet, path: tc.path, noVersion: true})
		require.Equal(t, tc.status, r.status, "%s: %s", tc.path, r.body)
		code, _ := apiErrorOf(t, r)
		require.Equal(t, tc.code, code, tc.path)
	}
}

func indentJSON(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, raw, "", "  "))
	return b.Bytes()
}

// sampleJob is a complete analysis of a text with hostile strings in
// every field a page shows.
func sampleJob() serving.Analysis {
	str := func(s string) *string { return &s }
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	completed := created.Add(42 * time.Second)
	text := `The Eiffel Tower was completed in 1925. <script>alert("claim")</script>`
	id := analysisIDOf(text)
	claim0 := events.AnalysisClaimID(id, 1, 0)
	claim1 := events.AnalysisClaimID(id, 1, 1)
	return serving.Analysis{
		ID: id, Status: events.StatusComplete,
		Input: serving.AnalysisInput{Kind: "TEXT", TextLength: utf8.RuneCountInString(text)},
		Versions: serving.AnalysisVersions{
			Prompts: []serving.AnalysisPrompt{{Name: "verdict-extract", Version: "v1", SHA256: strings.Repeat("ab", 32)},
				{Name: "verdict-summary", Version: "v1", SHA256: strings.Repeat("cd", 32)}},
			Provider: "openai-responses", Model: "gpt-5", Registry: "starter-2026-11", Policy: "strict-v1", Rubric: "factsocial-v1",
		},
		Claims: []serving.AnalysisClaim{
			{ID: claim0, Index: 0, Text: "The Eiffel Tower was completed in 1925.", Context: text,
				Triage: &serving.ClaimTriage{Kind: "FACTUAL", Specificity: 0.9, Numeric: true, Researched: true, Reason: "a dated, checkable fact"},
				Queries: []serving.ClaimQuery{{Query: "Eiffel Tower completion year", Kind: "keyword", Results: []serving.QueryResult{
					{URL: "https://www.britannica.com/topic/Eiffel-Tower", Title: "Eiffel Tower | Britannica", Snippet: "completed in 1889", PublishedAt: str("2024-01-02T00:00:00Z")},
					{URL: "javascript:alert('result')", Title: `<img src=x onerror=alert("title")>`, Snippet: "<b>bold</b>"},
				}}},
				Sources: []serving.ClaimSource{
					{URL: "https://www.britannica.com/topic/Eiffel-Tower", Domain: "britannica.com", Tier: 2, Rule: "britannica.com", Origin: "search", Entail: 0.02, Contradict: 0.95, Neutral: 0.03},
					{URL: "https://www.toureiffel.paris/en/the-monument/history", Domain: "toureiffel.paris", Tier: 1, Rule: "toureiffel.paris", Origin: "search", Entail: 0.01, Contradict: 0.97, Neutral: 0.02},
				},
				Verdict: &serving.ClaimVerdict{Engine: str("REFUTED"), Score: 12, Gate4: str("HIGH"), TruthPercent: 5, Confidence: 88,
					Label: "False", Band: "FALSE", Caps: []serving.VerdictCap{}, Summary: "Completed in 1889, not 1925."}},
			{ID: claim1, Index: 1, Text: `<script>alert("claim")</script> is the best tower`, Context: text,
				Triage:  &serving.ClaimTriage{Kind: "OPINION", Specificity: 0.1, Researched: false, Reason: "a matter of taste"},
				Queries: []serving.ClaimQuery{}, Sources: []serving.ClaimSource{},
				Verdict: &serving.ClaimVerdict{TruthPercent: 50, Confidence: 85, Label: "Opinion", Band: "UNVERIFIED", Caps: []serving.VerdictCap{}, Summary: "An opinion."}},
		},
		Verdict: &serving.PostVerdict{Label: "False", Band: "FALSE", TruthPercent: 8, Confidence: 70,
			Caps:    []serving.VerdictCap{{Rule: "single_low_tier_source", Cap: 50, Before: 72}},
			Summary: `The tower was completed in 1889. </p><script>alert("summary")</script>`,
			Caveats: []string{"Only the completion year was checked.", `<iframe src="https://evil.example">`},
			Sources: []serving.VerdictSource{{URL: "https://www.britannica.com/topic/Eiffel-Tower", Title: "Eiffel Tower", Domain: "britannica.com", Tier: 2},
				{URL: "javascript:alert('source')", Title: "evil", Domain: "evil.example", Tier: 5, FromSearch: true}}},
		CreatedAt: created, CompletedAt: &completed,
	}
}

// A text submission, answered 202 once appended (in-process Kafka).
func BenchmarkSubmitText(b *testing.B) {
	w := newBench(b, benchOpts{})
	i := 0
	for b.Loop() {
		i++
		r := submit(b, w.server, fmt.Sprintf(`{"text":"Benchmark claim number %d: the tower is %d metres tall."}`, i, i), nil)
		if r.status != http.StatusAccepted {
			b.Fatalf("HTTP %d: %s", r.status, r.body)
		}
	}
}
