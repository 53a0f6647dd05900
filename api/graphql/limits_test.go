package graphql_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/internal/ratelimit"
)

// gqlAnswer is a GraphQL answer with the parts the limit tests read.
type gqlAnswer struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func decode(t *testing.T, body string) gqlAnswer {
	t.Helper()
	var a gqlAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &a), body)
	return a
}

// refusal asserts a whole-operation refusal: the status, one error with
// code and a message containing want, no data.
func refusal(t *testing.T, status int, body string, wantStatus int, code, want string) {
	t.Helper()
	require.Equal(t, wantStatus, status, body)
	a := decode(t, body)
	require.Len(t, a.Errors, 1, body)
	require.Equal(t, code, a.Errors[0].Extensions["code"], body)
	require.Contains(t, a.Errors[0].Message, want)
	require.Nil(t, a.Data)
}

func (r *rig) get(t *testing.T, vals url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(r.srv.URL + "/graphql?" + vals.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = io(resp, &b)
	return resp, b.String()
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func aliases(n int, field string) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range n {
		fmt.Fprintf(&b, "a%d: %s ", i, field)
	}
	b.WriteString("}")
	return b.String()
}

// fragmentBomb spreads each fragment twice in the next: 2^levels
// selections from a document of a few hundred bytes.
func fragmentBomb(levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ ...F%d } fragment F0 on Query { __typename } ", levels)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d } ", i, i-1, i-1)
	}
	return b.String()
}

// Documents whose validation would grow out of bounds are refused before
// gqlgen parses or validates them, with a 400 that says which bound, and
// nothing runs.
func TestDocumentLimits(t *testing.T) {
	var spreads strings.Builder
	spreads.WriteString("{ ")
	for i := range graphql.MaxSpreadsPerSelection + 1 {
		fmt.Fprintf(&spreads, "...S%d ", i)
	}
	spreads.WriteString("} ")
	for i := range graphql.MaxSpreadsPerSelection + 1 {
		fmt.Fprintf(&spreads, "fragment S%d on Query { s%d: __typename } ", i, i)
	}
	// Each level selects "a" twice: 1 + 2 + ... + 32 = 63 repetitions, which
	// validation would compare pairwise down the tree (4^6 comparisons).
	repeatTree := "__typename"
	for range 6 {
		repeatTree = "a { " + repeatTree + " } a { " + repeatTree + " }"
	}
	tests := []struct {
		name, query, want string
	}{
		{"the issue's 5,400 fields", "{ " + strings.Repeat("__typename ", 5400) + "}", "the document is 59403 bytes; at most 32768 are allowed"},
		{"a 512 KiB document", "{ " + strings.Repeat("__typename ", (512<<10)/11) + "}", "at most 32768 are allowed"},
		{"a full-size document of fields", "{ " + strings.Repeat("__typename ", 2978) + "}", "the document selects 2978 fields and fragments (fragments expanded); at most 1000 are allowed"},
		{"too many tokens", "{ __typename " + strings.Repeat("@skip(if: false) ", 700) + "}", "more than 4000 tokens"},
		{"fragment bomb", fragmentBomb(60), "the document selects more than 1099511627776 fields"},
		{"repeated field", "{ " + strings.Repeat("__typename ", 52) + "}", "repeats a response name already selected in the same selection set 51 times"},
		{"repeated through inline fragments", "{ " + strings.Repeat("... on Query { __typename } ", 52) + "}", "51 times"},
		{"repeated alias, other arguments", "{ " + strings.Repeat("x: searchInvestigations(limit: 1) { total } x: searchInvestigations(limit: 2) { total } ", 26) + "}", "51 times"},
		{"repeated through a fragment", "{ ...R ...R } fragment R on Query { " + strings.Repeat("__typename ", 26) + "}", "repeats a response name"},
		{"repeats nested in repeats", "{ " + repeatTree + "}", "63 times"},
		{"too many spreads", spreads.String(), "a selection set spreads 33 fragments; at most 32 are allowed"},
		{"the issue's 1,000 aliases", aliases(1000, "searchInvestigations(limit: 1) { total }"), "at most 32768 are allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			status, hdr, body := r.post(t, map[string]any{"query": tc.query})
			refusal(t, status, body, http.StatusBadRequest, "DOCUMENT_TOO_LARGE", tc.want)
			require.Equal(t, "no-store", hdr.Get("Cache-Control"))
			require.Zero(t, r.storeQueries(), "nothing ran")
		})
	}

	// By GET too, and an oversized persisted query is never stored.
	r := newRig(t)
	big := "{ " + strings.Repeat("__typename ", 3000) + "}"
	resp, body := r.get(t, url.Values{"query": {big}})
	refusal(t, resp.StatusCode, body, http.StatusBadRequest, "DOCUMENT_TOO_LARGE", "at most 32768 are allowed")
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + sha256Hex(big) + `"}}`
	status, _, body := r.post(t, map[string]any{"query": big, "extensions": json.RawMessage(ext)})
	refusal(t, status, body, http.StatusBadRequest, "DOCUMENT_TOO_LARGE", "at most 32768 are allowed")
	resp, body = r.get(t, url.Values{"extensions": {ext}})
	require.Contains(t, body, "PersistedQueryNotFound")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	// A document gqlgen cannot parse is a 400 as well (gqlgen says 422).
	status, _, body = r.post(t, map[string]any{"query": "{ searchInvestigations("})
	refusal(t, status, body, http.StatusBadRequest, "GRAPHQL_PARSE_FAILED", "Expected Name")
	status, _, body = r.post(t, map[string]any{"query": "{ nosuchfield }"})
	refusal(t, status, body, http.StatusBadRequest, "GRAPHQL_VALIDATION_FAILED", `Cannot query field "nosuchfield"`)
}

// Introspection stays on: GraphiQL's full introspection query (with its
// nine-level TypeRef fragment) is well within the limits.
func TestIntrospectionWithinLimits(t *testing.T) {
	r := newRig(t)
	q, err := os.ReadFile("testdata/introspection.graphql")
	require.NoError(t, err)
	status, _, body := r.post(t, map[string]any{"query": string(q)})
	require.Equal(t, http.StatusOK, status)
	a := decode(t, body)
	require.Empty(t, a.Errors)
	require.Contains(t, body, `"name":"SearchInvestigationsResult"`)
	require.Contains(t, body, `"name":"auditTrail"`)
}

// hostileDocuments are documents that cost the old server seconds (the
// issue measured 4.3 s for 5,400 repeated fields; validation is quadratic
// in repeated fields) or never finished (the fragment bomb); each is
// refused before gqlgen validates it. admittedDocuments are the most
// expensive documents within the limits. BenchmarkDocuments measures both.
func hostileDocuments() []struct{ name, query string } {
	return []struct{ name, query string }{
		{"5,400 fields (59 KiB)", "{ " + strings.Repeat("__typename ", 5400) + "}"},
		{"max-size document (32 KiB, 2,978 fields)", "{ " + strings.Repeat("__typename ", 2978) + "}"},
		{"1,000 fields", "{ " + strings.Repeat("__typename ", 1000) + "}"},
		{"fragment bomb (2^60)", fragmentBomb(60)},
	}
}

func admittedDocuments() []struct{ name, query string } {
	var spreads strings.Builder // 14 selection sets of 32 spreads each
	spreads.WriteString("{ ")
	for i := range 14 {
		fmt.Fprintf(&spreads, "s%d: __schema { types { ", i)
		for j := range 32 {
			fmt.Fprintf(&spreads, "...F%d ", j)
		}
		spreads.WriteString("} } ")
	}
	spreads.WriteString("} ")
	for j := range 32 {
		fmt.Fprintf(&spreads, "fragment F%d on __Type { n%d: name } ", j, j)
	}
	var intro strings.Builder // 110 aliases under every field of every type: a 1 MB answer
	intro.WriteString("{ __schema { types { fields { ")
	for i := range 110 {
		fmt.Fprintf(&intro, "a%d: type { kind name ofType { kind name ofType { kind name } } } ", i)
	}
	intro.WriteString("} } } }")
	return []struct{ name, query string }{
		{"50 repeated fields", "{ " + strings.Repeat("__typename ", 51) + "}"},
		{"999 distinct aliases", aliases(999, "__typename")},
		{"14 sets of 32 fragment spreads", spreads.String()},
		{"40 repeated introspection subtrees", "{ " + strings.Repeat("__schema { types { name kind description fields { name description "+
			"isDeprecated deprecationReason args { name description defaultValue } } } } ", 40) + "}"},
		{"110 aliased introspection subtrees", intro.String()},
	}
}

// The hostile documents are refused with a 400 naming the bound, and the
// expensive ones within the limits are answered in full.
func TestHostileAndExpensiveDocuments(t *testing.T) {
	r := newRig(t)
	for _, tc := range hostileDocuments() {
		status, _, body := r.post(t, map[string]any{"query": tc.query})
		require.Equal(t, http.StatusBadRequest, status, tc.name)
		code := decode(t, body).Errors[0].Extensions["code"]
		require.Equal(t, "DOCUMENT_TOO_LARGE", code, tc.name+": "+body)
	}
	for _, tc := range admittedDocuments() {
		status, _, body := r.post(t, map[string]any{"query": tc.query})
		require.Equal(t, http.StatusOK, status, body)
		require.Empty(t, decode(t, body).Errors, tc.name)
	}
}

// BenchmarkDocuments reports the cost of each hostile and admitted
// document through the whole handler (refusals cost about a millisecond;
// the old server took 4.3 s for the first and never finished the bomb).
func BenchmarkDocuments(b *testing.B) {
	res := graphql.NewResolver(graphql.Deps{Serving: &fakeServing{}, Search: &fakeSearch{}, Metrics: &fakeMetrics{}, Trails: &fakeTrails{}})
	h := graphql.NewHandler(res, graphql.Options{})
	run := func(b *testing.B, query string, want int) {
		for i := 0; b.Loop(); i++ {
			// Unique text each time: gqlgen's query cache must not answer.
			body, _ := json.Marshal(map[string]any{"query": query + strings.Repeat(" ", i%64)})
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want {
				b.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body.String())
			}
		}
	}
	for _, tc := range hostileDocuments() {
		b.Run("refused/"+tc.name, func(b *testing.B) { run(b, tc.query, http.StatusBadRequest) })
	}
	for _, tc := range admittedDocuments() {
		b.Run("admitted/"+tc.name, func(b *testing.B) { run(b, tc.query, http.StatusOK) })
	}
}

// One operation reaches the stores at most MaxStoreFields times, however
// it is written (aliases, fragments, auditTrail below an investigation);
// claims, their assessments and authors of every result come in one
// batched query each.
func TestStoreFieldLimit(t *testing.T) {
	refused := []struct{ name, query string }{
		{"six searches", aliases(6, "searchInvestigations(limit: 1) { total }")},
		{"the issue's 100 publicMetrics", aliases(100, "publicMetrics { factCheckIncidence }")},
		{"through a fragment spread twice", `{ ...M a: publicMetrics { factCheckIncidence } } fragment M on Query {
			m1: publicMetrics { factCheckIncidence } m2: publicMetrics { factCheckIncidence } m3: publicMetrics { factCheckIncidence }
			m4: publicMetrics { factCheckIncidence } m5: publicMetrics { factCheckIncidence } }`},
		{"audit trails count", aliases(3, `publicInvestigation(investigationId: "`+invA+`") { investigation { auditTrail } }`)},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			status, _, body := r.post(t, map[string]any{"query": tc.query})
			refusal(t, status, body, http.StatusBadRequest, "TOO_MANY_STORE_FIELDS", "at most 5 are allowed")
			require.Zero(t, r.storeQueries(), "nothing ran")
		})
	}

	r := newRig(t)
	status, _, body := r.post(t, map[string]any{"query": aliases(5, "searchInvestigations(limit: 1) { total }")})
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, decode(t, body).Data, 5)
	require.EqualValues(t, 5, r.search.calls.Load())
	require.Equal(t, 5, r.storeQueries())

	// Five store fields of every kind: exactly one query each (the post
	// lookup two), plus one batch of claims, one of their assessments and
	// one of authors. (A batch
	// gathers the keys asked for within the loaders' wait, here longer than
	// the request needs; gqlgen resolves some fields after others, so in
	// general it is at most one batch of each per store field.)
	r = newRigWith(t, rigOptions{batchWait: 200 * time.Millisecond})
	status, _, body = r.post(t, map[string]any{"query": `{
		publicInvestigation(investigationId: "` + invA + `") { investigation { auditTrail } claims { id assessment { score } } post { author { id } } }
		postInvestigations(platform: LESSWRONG, externalId: "abc123") { post { url } investigations { claims { id assessment { verdict } } } }
		searchInvestigations(limit: 1) { total }
		publicMetrics { factCheckIncidence } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, decode(t, body).Errors, body)
	require.EqualValues(t, 1, r.serving.investigationQueries.Load())
	require.EqualValues(t, 1, r.serving.postQueries.Load())
	require.EqualValues(t, 1, r.trails.calls.Load())
	require.EqualValues(t, 1, r.search.calls.Load())
	require.EqualValues(t, 1, r.metrics.calls.Load())
	require.EqualValues(t, 1, r.serving.claimQueries.Load(), "claims of both root fields in one batch: %v", r.serving.claimKeys)
	require.EqualValues(t, 1, r.serving.authorQueries.Load(), "authors in one batch")
	require.EqualValues(t, 1, r.serving.assessmentQueries.Load(), "assessments of every claim in one batch: %v", r.serving.assessmentKeys)
	require.Equal(t, 9, r.storeQueries())
}

// Every String and ID argument is checked before anything runs: NUL (the
// issue's postInvestigations(externalId:"a\u0000b"), which Postgres would
// refuse), invalid UTF-8 (a GET query string can carry any byte), and
// values longer than anything stored.
func TestStringArguments(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"NUL in externalId", `{ postInvestigations(platform: X, externalId: "a\u0000b") { post { url } } }`, nil,
			"postInvestigations: argument externalId must not contain NUL (U+0000)"},
		{"NUL in externalId from a variable", `query($id: String!) { postInvestigations(platform: X, externalId: $id) { post { url } } }`,
			map[string]any{"id": "a\x00b"}, "argument externalId must not contain NUL"},
		{"NUL in investigationId", `{ publicInvestigation(investigationId: "\u0000") { post { url } } }`, nil,
			"publicInvestigation: argument investigationId must not contain NUL"},
		{"NUL in search text", `{ searchInvestigations(query: "bridge\u0000") { total } }`, nil, "searchInvestigations: argument query must not contain NUL"},
		{"NUL in search authorId", `{ searchInvestigations(authorId: "\u0000") { total } }`, nil, "argument authorId must not contain NUL"},
		{"NUL in metrics authorId", `{ publicMetrics(authorId: "a\u0000") { factCheckIncidence } }`, nil, "publicMetrics: argument authorId must not contain NUL"},
		{"externalId too long", `{ postInvestigations(platform: X, externalId: "` + long(257) + `") { post { url } } }`, nil,
			"argument externalId is longer than 256 characters"},
		{"search text too long", `{ searchInvestigations(query: "` + long(1001) + `") { total } }`, nil, "argument query is longer than 1000 characters"},
		{"id too long", `query($id: ID!) { publicInvestigation(investigationId: $id) { post { url } } }`, map[string]any{"id": long(65)},
			"argument investigationId is longer than 64 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			status, _, body := r.post(t, map[string]any{"query": tc.query, "variables": tc.vars})
			refusal(t, status, body, http.StatusBadRequest, "BAD_USER_INPUT", tc.want)
			require.Zero(t, r.storeQueries(), "nothing ran")
		})
	}

	r := newRig(t)
	resp, body := r.get(t, url.Values{"query": {"{ postInvestigations(platform: X, externalId: \"a\xffb\") { post { url } } }"}})
	refusal(t, resp.StatusCode, body, http.StatusBadRequest, "BAD_USER_INPUT", "argument externalId is not valid UTF-8")
	require.Zero(t, r.storeQueries())

	// At the limits, the values are used.
	status, _, body := r.post(t, map[string]any{"query": `{ postInvestigations(platform: X, externalId: "` + long(256) + `") { post { url } }
		searchInvestigations(query: "` + strings.Repeat("é", 1000) + `") { total } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.Empty(t, decode(t, body).Errors)
	require.EqualValues(t, 1, r.serving.postQueries.Load())
	require.Equal(t, strings.Repeat("é", 1000), r.search.last.Text)
}

// Each request has a deadline that resolvers respect: a store that does not
// answer in time stops the field with a clear error (logged as a warning,
// not an internal error). searchInvestigations is non-null, so its error
// nulls the whole answer, as GraphQL requires.
func TestRequestDeadline(t *testing.T) {
	r := newRigWith(t, rigOptions{handler: graphql.Options{Timeout: 200 * time.Millisecond}, searchDelay: time.Minute})
	start := time.Now()
	status, _, body := r.post(t, map[string]any{"query": `{ searchInvestigations(query: "x") { total } publicMetrics { factCheckIncidence } }`})
	elapsed := time.Since(start)
	require.Equal(t, http.StatusOK, status, body)
	require.Less(t, elapsed, 5*time.Second, "stopped at the deadline, not after the store's minute")
	require.GreaterOrEqual(t, elapsed, 200*time.Millisecond)
	a := decode(t, body)
	require.Len(t, a.Errors, 1, body)
	require.Equal(t, "searchInvestigations was stopped: the request took longer than its time limit", a.Errors[0].Message)
	require.Nil(t, a.Data)
}

// Each client has a budget of cost points: 10 per request before anything
// is parsed, then the operation's estimated cost before it runs, then one
// per millisecond it took. Over budget: 429 with Retry-After and a JSON
// errors body; other clients are not affected.
func TestRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	lim, err := ratelimit.New(ratelimit.Limit{PerSecond: 1, Burst: 100}, 100, clock)
	require.NoError(t, err)
	r := newRigWith(t, rigOptions{handler: graphql.Options{RateLimit: lim, Now: clock,
		ClientKey: func(req *http.Request) string { return req.Header.Get("X-Client") }}})
	post := func(client, query string) (int, http.Header, string) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"query": query})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/graphql", strings.NewReader(string(b)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Client", client)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out strings.Builder
		_, _ = io(resp, &out)
		return resp.StatusCode, resp.Header, out.String()
	}
	tooMany := func(status int, hdr http.Header, body, want string) int {
		t.Helper()
		refusal(t, status, body, http.StatusTooManyRequests, "RATE_LIMITED", want)
		secs, err := strconv.Atoi(hdr.Get("Retry-After"))
		require.NoError(t, err, hdr)
		require.EqualValues(t, secs, decode(t, body).Errors[0].Extensions["retryAfterSeconds"])
		require.Equal(t, "no-store", hdr.Get("Cache-Control"))
		return secs
	}
	const metrics = `{ publicMetrics { factCheckIncidence } }` // estimated cost 52: 50 + 1 + 1

	// 100 - 10 - 52 - 0 (no time passes on the stopped clock) leaves 38.
	status, _, body := post("a", metrics)
	require.Equal(t, http.StatusOK, status, body)
	// 10 more on arrival leaves 28 < 52: refused before it runs.
	status, hdr, body := post("a", metrics)
	secs := tooMany(status, hdr, body, "this operation costs 52 and your budget is spent")
	require.Equal(t, 24, secs, "52 - (100 - 10 - 52 - 10) points at 1 a second")
	require.EqualValues(t, 1, r.metrics.calls.Load(), "the refused operation did not run")
	// A cheap operation (estimated cost 1) still fits (17 left); an
	// invalid document is charged its arrival (7 left) and refused as
	// invalid; then the arrival charge itself is refused, before the
	// document is parsed.
	status, _, body = post("a", `{ __typename }`)
	require.Equal(t, http.StatusOK, status, body)
	status, _, body = post("a", `{ __typename`)
	require.Equal(t, http.StatusBadRequest, status, body)
	status, hdr, body = post("a", `{ __typename`)
	require.Equal(t, 3, tooMany(status, hdr, body, "rate limit: too many requests"), "10 - 7 points at 1 a second")
	// Another client has its own budget.
	status, _, body = post("b", metrics)
	require.Equal(t, http.StatusOK, status, body)
	require.EqualValues(t, 2, r.metrics.calls.Load())
	// The budget refills at its rate.
	now = now.Add(100 * time.Second)
	status, _, body = post("a", metrics)
	require.Equal(t, http.StatusOK, status, body)
}

// The time a request took is charged after it ran: an operation that kept
// the server busy leaves its client in debt, so the next one waits.
func TestRateLimitChargesTime(t *testing.T) {
	lim, err := ratelimit.New(ratelimit.Limit{PerSecond: 1, Burst: 400}, 100, nil)
	require.NoError(t, err)
	r := newRigWith(t, rigOptions{handler: graphql.Options{RateLimit: lim, ClientKey: func(*http.Request) string { return "a" }},
		searchDelay: 300 * time.Millisecond})
	const search = `{ searchInvestigations(limit: 1) { total } }` // estimated cost 52
	status, _, body := r.post(t, map[string]any{"query": search})
	require.Equal(t, http.StatusOK, status, body)
	// 400 - 10 - 52 - at least 300 for the time: under 40 left.
	status, _, body = r.post(t, map[string]any{"query": search})
	require.Equal(t, http.StatusTooManyRequests, status, body)
	require.EqualValues(t, 1, r.search.calls.Load())
}
