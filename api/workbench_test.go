package api

import (
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api/workbench"
)

const wantCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// The page is the same document at /app and at every permalink, served
// with the strict policy; its assets come from the binary.
func TestWorkbenchPage(t *testing.T) {
	w := newBench(t, benchOpts{})
	for _, path := range []string{"/app", "/app/", "/app/analyses/" + analysisIDOf("x"), "/app/analyses/not-an-id"} {
		r := do(t, w.server, request{method: http.MethodGet, path: path, noVersion: true})
		require.Equal(t, http.StatusOK, r.status, path)
		require.Equal(t, "text/html; charset=utf-8", r.header("Content-Type"))
		require.Equal(t, wantCSP, r.header("Content-Security-Policy"))
		require.Equal(t, "DENY", r.header("X-Frame-Options"))
		require.Equal(t, "nosniff", r.header("X-Content-Type-Options"))
		require.Equal(t, string(workbench.Index()), string(r.body))
	}
	for name, ctype := range map[string]string{"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8"} {
		r := do(t, w.server, request{method: http.MethodGet, path: "/app/assets/" + name, noVersion: true})
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, ctype, r.header("Content-Type"))
		require.Equal(t, "nosniff", r.header("X-Content-Type-Options"))
		want, err := fs.ReadFile(workbench.Assets(), name)
		require.NoError(t, err)
		require.Equal(t, string(want), string(r.body))
	}
	for _, path := range []string{"/app/assets/index.html", "/app/assets/missing.js", "/app/assets/..%2fworkbench.go", "/app/assets/%2e%2e"} {
		r := do(t, w.server, request{method: http.MethodGet, path: path, noVersion: true})
		require.Equal(t, http.StatusNotFound, r.status, path)
	}
	// Without the workbench there is no page.
	plain, _ := newFakeServer(t)
	r := do(t, plain, request{method: http.MethodGet, path: "/app", noVersion: true})
	require.Equal(t, http.StatusNotFound, r.status)
}

// The page's files keep to the policy by construction: nothing inline,
// nothing from elsewhere, and the script never turns strings into markup
// or code.
func TestWorkbenchAssetsAreStrict(t *testing.T) {
	read := func(name string) string {
		b, err := fs.ReadFile(workbench.Assets(), name)
		require.NoError(t, err)
		return string(b)
	}
	html, js, css := read("index.html"), read("app.js"), read("app.css")
	for _, m := range regexp.MustCompile(`(?is)<script\b([^>]*)>(.*?)</script>`).FindAllStringSubmatch(html, -1) {
		require.Contains(t, m[1], `src="/app/assets/`, "every script is a file of ours")
		require.Empty(t, strings.TrimSpace(m[2]), "no inline script")
	}
	require.NotRegexp(t, `(?i)<style\b`, html, "no inline style element")
	require.NotRegexp(t, `(?i)\sstyle\s*=`, html, "no style attribute")
	require.NotRegexp(t, `(?i)\son[a-z]+\s*=`, html, "no event handler attribute")
	require.NotRegexp(t, `(?i)javascript:`, html)
	for _, m := range regexp.MustCompile(`(?i)\s(?:src|href|action)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(html, -1) {
		require.True(t, strings.HasPrefix(m[1], "/") && !strings.HasPrefix(m[1], "//"), "%q is not a path of ours", m[1])
	}
	for name, src := range map[string]string{"app.js": js, "app.css": css} {
		require.NotRegexp(t, `(?i)https?://|['"(]//`, src, "%s refers to another host", name)
		require.NotRegexp(t, `@import|url\(`, src, "%s loads a resource", name)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute(\"on", ".srcdoc"} {
		require.NotContains(t, js, sink, "app.js must not use %s", sink)
	}
}

// The report is a download of a self-contained document in which every
// string of the job is text: hostile claims, titles, summaries and links
// stay inert.
func TestWorkbenchReport(t *testing.T) {
	w := newBench(t, benchOpts{})
	job := sampleJob()
	w.analyses.set(job)
	r := do(t, w.server, request{method: http.MethodGet, path: "/api/v1/analyses/" + job.ID + "/report", noVersion: true})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "text/html; charset=utf-8", r.header("Content-Type"))
	require.Equal(t, `attachment; filename="errata-analysis-`+job.ID+`.html"`, r.header("Content-Disposition"))
	require.Equal(t, workbench.ReportContentSecurityPolicy, r.header("Content-Security-Policy"))
	body := string(r.body)
	for _, bad := range []string{"<script", "<img", "<iframe", `href="javascript:`, "</p><script>"} {
		require.NotContains(t, body, bad)
	}
	for _, escaped := range []string{
		"&lt;script&gt;alert(&#34;claim&#34;)&lt;/script&gt; is the best tower",
		"&lt;img src=x onerror=alert(&#34;title&#34;)&gt;",
		"&lt;/p&gt;&lt;script&gt;alert(&#34;summary&#34;)&lt;/script&gt;",
		"&lt;iframe src=&#34;https://evil.example&#34;&gt;",
		`href="#ZgotmplZ"`,
		`href="http://example.com/app/analyses/` + job.ID + `"`,
	} {
		require.Contains(t, body, escaped)
	}

	r = do(t, w.server, request{method: http.MethodGet, path: "/api/v1/analyses/" + analysisIDOf("none") + "/report", noVersion: true})
	require.Equal(t, http.StatusNotFound, r.status)
	code, _ := apiErrorOf(t, r)
	require.Equal(t, "NOT_FOUND", code)
}
