package graphql_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

var update = flag.Bool("update", false, "rewrite the golden answers under testdata/")

const (
	invA = "0a000000-0000-4000-8000-00000000000a"
	invB = "0b000000-0000-4000-8000-00000000000b"
	// invC's only claim was retained from a prior investigation: it has
	// no assessment.
	invC   = "0c000000-0000-4000-8000-00000000000c"
	claimA = "3a000000-0000-4000-8000-00000000003a"
	claimC = "3c000000-0000-4000-8000-00000000003c"
	postA  = "1a000000-0000-4000-8000-00000000001a"
	author = "2a000000-0000-4000-8000-00000000002a"
)

var checked = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

// fakeServing is a serving reader over fixed rows that counts its queries.
type fakeServing struct {
	claimQueries, authorQueries atomic.Int32
	assessmentQueries           atomic.Int32
	assessmentKeys              [][]string
	investigationQueries        atomic.Int32 // PublicInvestigation
	postQueries                 atomic.Int32 // PublicPostInvestigations (two queries on Postgres)
	claimKeys                   [][]string
	mu                          sync.Mutex
}

func (f *fakeServing) PublicInvestigation(_ context.Context, id string) (serving.PublicInvestigation, error) {
	f.investigationQueries.Add(1)
	return f.investigation(id)
}

func (f *fakeServing) investigation(id string) (serving.PublicInvestigation, error) {
	if id != invA && id != invC {
		return serving.PublicInvestigation{}, serving.ErrNotFound
	}
	return serving.PublicInvestigation{ID: id, PostID: postA, ContentHash: "c0ffee", Platform: "LESSWRONG",
		ExternalID: "abc123", URL: "https://www.lesswrong.com/posts/abc123/x", Provenance: "SERVER_VERIFIED",
		ServerVerifiedAt: &checked, CorroborationCount: 2, CheckedAt: checked, PromptVersion: "investigator@3",
		Provider: "openai", Model: "gpt-5", ClaimCount: 1}, nil
}

func (f *fakeServing) PublicPostInvestigations(_ context.Context, platform, externalID string) (serving.PublicPost, []serving.PublicInvestigation, error) {
	f.postQueries.Add(1)
	if platform != "LESSWRONG" || externalID != "abc123" {
		return serving.PublicPost{}, nil, serving.ErrNotFound
	}
	a, _ := f.investigation(invA)
	b := a
	b.ID, b.ClaimCount, b.ContentHash, b.Provenance, b.ServerVerifiedAt = invB, 0, "beef", "CLIENT_FALLBACK", nil
	return serving.PublicPost{ID: postA, Platform: "LESSWRONG", ExternalID: "abc123", URL: a.URL}, []serving.PublicInvestigation{a, b}, nil
}

func (f *fakeServing) ClaimsOfInvestigations(_ context.Context, ids []string) (map[string][]serving.Claim, error) {
	f.claimQueries.Add(1)
	f.mu.Lock()
	f.claimKeys = append(f.claimKeys, append([]string(nil), ids...))
	f.mu.Unlock()
	out := map[string][]serving.Claim{}
	for _, id := range ids {
		out[id] = []serving.Claim{}
		switch id {
		case invA:
			out[id] = []serving.Claim{{ID: claimA, Text: "The bridge opened in 1890.",
				Context: "Built quickly, the bridge opened in 1890.", Summary: "It opened in 1883.",
				Reasoning: "Records show **1883**.", Sources: []events.SourceV1{{URL: "https://example.org/bridge", Title: "Bridge", Snippet: "Opened 1883."}}}}
		case invC:
			out[id] = []serving.Claim{{ID: claimC, Text: "The tower is 300 m tall.", Context: "The tower is 300 m tall.",
				Summary: "It is 330 m tall.", Reasoning: "Retained.", Sources: []events.SourceV1{{URL: "https://example.org/tower", Title: "Tower", Snippet: "330 m."}}}}
		}
	}
	return out, nil
}

// AssessmentsOfClaims knows the assessment that published claimA.
func (f *fakeServing) AssessmentsOfClaims(_ context.Context, ids []string) (map[string]serving.Assessment, error) {
	f.assessmentQueries.Add(1)
	f.mu.Lock()
	f.assessmentKeys = append(f.assessmentKeys, append([]string(nil), ids...))
	f.mu.Unlock()
	out := map[string]serving.Assessment{}
	for _, id := range ids {
		if id != claimA {
			continue
		}
		out[id] = serving.Assessment{SubmissionID: "4a000000-0000-4000-8000-00000000004a", InvestigationID: invA, Series: 1, Attempt: 1,
			Features: serving.AssessmentFeatures{EMax: 0.05, EMean3: 0.04, CMax: 0.94, AgreeDom: 0, RelAvg: 0.9, RecMax: 0.8, NumOK: 0},
			Raw:      -0.0133, Score: 3, Verdict: "REFUTED", Gate4: "MEDIUM", Gate4Sources: 2, Gate4Quality: 0.9, Gate4Agreement: 1,
			RegistryVersion: "starter-v1@0123456789ab", PolicyVersion: "strict-v1@ba9876543210", PublishMode: "strict",
			Published: true, Reason: "published", Failed: []string{}, AssessedAt: checked,
			Sources: []serving.AssessmentSource{
				{URL: "https://www.nps.gov/bridge/history", Domain: "nps.gov", Tier: 1, Rule: "suffix:*.gov", Origin: "search",
					Entail: 0.02, Contradict: 0.94, Neutral: 0.04, Num: "mismatch", Recency: 0.8},
				{URL: "https://www.britannica.com/topic/bridge", Domain: "britannica.com", Tier: 2, Rule: "exact:britannica.com",
					Origin: "investigator", Entail: 0.05, Contradict: 0.9, Neutral: 0.05, Recency: 0.5},
			}}
	}
	return out, nil
}

func (f *fakeServing) AuthorsOfPosts(_ context.Context, ids []string) (map[string]serving.PublicAuthor, error) {
	f.authorQueries.Add(1)
	out := map[string]serving.PublicAuthor{}
	for _, id := range ids {
		if id == postA {
			out[id] = serving.PublicAuthor{ID: author, Platform: "LESSWRONG", DisplayName: "Ada"}
		}
	}
	return out, nil
}

type fakeSearch struct {
	calls atomic.Int32
	mu    sync.Mutex
	last  search.Query
	// delay is how long each search takes (it stops at the context's end).
	delay time.Duration
}

func (f *fakeSearch) Search(ctx context.Context, q search.Query) (search.Result, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.last = q
	f.mu.Unlock()
	if q.Text == "bad" {
		return search.Result{}, search.ErrInvalidQuery
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return search.Result{}, fmt.Errorf("search: %w", ctx.Err())
		}
	}
	return search.Result{Total: 3, HasMore: q.Offset+q.Limit < 3, Hits: []search.Hit{{
		InvestigationID: invA, PostID: postA, ContentHash: "c0ffee", CheckedAt: checked, Platform: "LESSWRONG",
		ExternalID: "abc123", URL: "https://www.lesswrong.com/posts/abc123/x", Author: &search.Author{ID: author, DisplayName: "Ada"},
		Provenance: "SERVER_VERIFIED", ServerVerifiedAt: &checked, CorroborationCount: 2, ClaimCount: 1,
		Claims:     []search.ClaimSummary{{ID: "3a000000-0000-4000-8000-00000000003a", Text: "The bridge opened in 1890.", Summary: "It opened in 1883."}},
		Highlights: []string{"Records show <mark>1883</mark>."},
	}}}, nil
}

type fakeMetrics struct {
	calls atomic.Int32
	mu    sync.Mutex
	last  analytics.Filter
}

func (f *fakeMetrics) Incidence(_ context.Context, fl analytics.Filter) (analytics.Incidence, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.last = fl
	f.mu.Unlock()
	if fl.AuthorID == "bad" {
		return analytics.Incidence{}, analytics.ErrInvalidFilter
	}
	return analytics.Incidence{TotalInvestigatedPosts: 8, InvestigatedPostsWithFlags: 2, FactCheckIncidence: 0.25}, nil
}

type fakeTrails struct{ calls atomic.Int32 }

func (f *fakeTrails) Trail(_ context.Context, id string) (*audit.Trail, error) {
	f.calls.Add(1)
	if id != invA {
		return nil, nil
	}
	return &audit.Trail{InvestigationID: invA, Status: events.StatusComplete}, nil
}

type rig struct {
	serving *fakeServing
	search  *fakeSearch
	metrics *fakeMetrics
	trails  *fakeTrails
	srv     *httptest.Server
}

// storeQueries counts every read of a store: Postgres (postInvestigations
// reads twice), the search index, ClickHouse, the audit projection.
func (r *rig) storeQueries() int {
	return int(r.serving.investigationQueries.Load() + 2*r.serving.postQueries.Load() + r.serving.claimQueries.Load() +
		r.serving.authorQueries.Load() + r.serving.assessmentQueries.Load() + r.search.calls.Load() + r.metrics.calls.Load() + r.trails.calls.Load())
}

func newRig(t *testing.T) *rig { return newRigWith(t, rigOptions{}) }

type rigOptions struct {
	handler graphql.Options
	// searchDelay is how long every search takes.
	searchDelay time.Duration
	// batchWait is the loaders' wait (default 2 ms).
	batchWait time.Duration
}

func newRigWith(t *testing.T, o rigOptions) *rig {
	t.Helper()
	r := &rig{serving: &fakeServing{}, search: &fakeSearch{delay: o.searchDelay}, metrics: &fakeMetrics{}, trails: &fakeTrails{}}
	res := graphql.NewResolver(graphql.Deps{Serving: r.serving, Search: r.search, Metrics: r.metrics, Trails: r.trails, BatchWait: o.batchWait})
	mux := http.NewServeMux()
	mux.Handle("/graphql", graphql.NewHandler(res, o.handler))
	mux.Handle("/graphiql", graphql.ExplorerHandler(nil))
	mux.Handle("/graphiql/", graphql.ExplorerHandler(nil))
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *rig) post(t *testing.T, body map[string]any) (int, http.Header, string) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(r.srv.URL+"/graphql", "application/json", strings.NewReader(string(b)))
	require.NoError(t, err)
	defer resp.Body.Close()
	var out strings.Builder
	_, _ = io(resp, &out)
	return resp.StatusCode, resp.Header, out.String()
}

func io(resp *http.Response, w *strings.Builder) (int64, error) {
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := resp.Body.Read(buf)
		w.Write(buf[:k])
		n += int64(k)
		if err != nil {
			return n, nil
		}
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(got), &v), got)
	pretty, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	path := filepath.Join("testdata", name+".json")
	if *update {
		require.NoError(t, os.WriteFile(path, append(pretty, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(pretty)+"\n")
}

// The spec's queries and the extensions, answered from the read models.
func TestQueries(t *testing.T) {
	tests := []struct {
		name  string
		query string
		vars  map[string]any
	}{
		{"public_investigation", `query($id: ID!) { publicInvestigation(investigationId: $id) {
			investigation { id checkedAt promptVersion provider model corroborationCount origin { provenance serverVerifiedAt } auditTrail }
			post { platform externalId url author { id platform displayName } }
			claims { id text context summary reasoning sources { url title snippet } } } }`, map[string]any{"id": invA}},
		{"public_investigation_missing", `{ publicInvestigation(investigationId: "nope") { investigation { id } } }`, nil},
		{"post_investigations", `{ postInvestigations(platform: LESSWRONG, externalId: "abc123") {
			post { url author { displayName } } investigations { id contentHash claimCount checkedAt corroborationCount
			origin { provenance serverVerifiedAt } claims { text } } } }`, nil},
		{"post_investigations_unknown", `{ postInvestigations(platform: X, externalId: "1") { post { url } investigations { id } } }`, nil},
		{"search", `{ searchInvestigations(query: "bridge", platform: LESSWRONG, limit: 2, offset: 0, minClaimCount: 1,
			authorId: "` + author + `", provenance: SERVER_VERIFIED, checkedAfter: "2026-11-01T00:00:00Z", checkedBefore: "2026-12-01T00:00:00Z") {
			total hasMore investigations { id contentHash checkedAt platform externalId url claimCount corroborationCount
			origin { provenance serverVerifiedAt } author { id displayName platform } claims { id text summary } highlights } } }`, nil},
		{"public_metrics", `{ publicMetrics(platform: X, windowStart: "2026-11-01T00:00:00Z") { totalInvestigatedPosts investigatedPostsWithFlags factCheckIncidence } }`, nil},
		{"claim_assessments", `{ a: publicInvestigation(investigationId: "` + invA + `") { claims { id assessment {
			score verdict gate4 policyVersion registryVersion publishMode
			features { eMax eMean3 cMax agreeDom relAvg recMax numOk }
			sources { url domain tier rule origin entail contradict neutral } } } }
			c: publicInvestigation(investigationId: "` + invC + `") { claims { id assessment { score } } } }`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			status, hdr, body := r.post(t, map[string]any{"query": tc.query, "variables": tc.vars})
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, "no-store", hdr.Get("Cache-Control"))
			golden(t, tc.name, body)
		})
	}
}

// Bad input gets a clear error and runs nothing.
func TestInvalidArguments(t *testing.T) {
	const withMetrics = `query($limit: Int, $offset: Int) { publicMetrics { factCheckIncidence }
		...Page
		publicInvestigation(investigationId: "` + invA + `") { investigation { id } } }
		fragment Page on Query { searchInvestigations(limit: $limit, offset: $offset) { total } }`
	tests := []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"limit 0", `{ searchInvestigations(limit: 0) { total } }`, nil, "limit must be between 1 and 100, got 0"},
		{"limit 101", `{ searchInvestigations(limit: 101) { total } }`, nil, "limit must be between 1 and 100, got 101"},
		{"offset -1", `{ searchInvestigations(offset: -1) { total } }`, nil, "offset must be >= 0, got -1"},
		{"minClaimCount -1", `{ searchInvestigations(minClaimCount: -1) { total } }`, nil, "minClaimCount must be >= 0"},
		{"window", `{ searchInvestigations(checkedAfter: "2026-12-01T00:00:00Z", checkedBefore: "2026-11-01T00:00:00Z") { total } }`, nil, "checkedAfter must be before checkedBefore"},
		{"bad platform", `{ searchInvestigations(platform: MASTODON) { total } }`, nil, "MASTODON"},
		{"bad date", `{ publicMetrics(windowStart: "yesterday") { factCheckIncidence } }`, nil, "RFC3339"},
		// Beside other fields, through a fragment, from variables: the whole
		// operation is refused before any of it runs.
		{"variable limit 0 beside other fields", withMetrics, map[string]any{"limit": 0}, "limit must be between 1 and 100, got 0"},
		{"variable limit 101 beside other fields", withMetrics, map[string]any{"limit": 101}, "limit must be between 1 and 100, got 101"},
		{"variable offset -1 beside other fields", withMetrics, map[string]any{"offset": -1}, "offset must be >= 0, got -1"},
		{"aliased second page out of range", `{ ok: searchInvestigations(limit: 5) { total } bad: searchInvestigations(limit: 5, offset: -5) { total } }`, nil, "offset must be >= 0, got -5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			_, _, body := r.post(t, map[string]any{"query": tc.query, "variables": tc.vars})
			var out struct {
				Data   any `json:"data"`
				Errors []struct {
					Message string `json:"message"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &out))
			require.Len(t, out.Errors, 1, body)
			require.Contains(t, out.Errors[0].Message, tc.want)
			require.Nil(t, out.Data)
			require.Zero(t, r.search.calls.Load(), "nothing executed")
			require.Zero(t, r.metrics.calls.Load(), "nothing executed")
			require.Zero(t, r.serving.claimQueries.Load(), "nothing executed")
		})
	}
	r := newRig(t)
	_, _, body := r.post(t, map[string]any{"query": `{ searchInvestigations(query: "bad") { total } }`})
	require.Contains(t, body, "invalid search query")
	_, _, body = r.post(t, map[string]any{"query": `{ publicMetrics(authorId: "bad") { factCheckIncidence } }`})
	require.Contains(t, body, "invalid metrics filter")
}

// Too costly operations are refused before any resolver runs;
// introspection is allowed.
func TestComplexityLimit(t *testing.T) {
	r := newRig(t)
	fine := `{ searchInvestigations(limit: 10) { investigations { id origin { provenance } author { id } claims { id } } } }`
	_, _, body := r.post(t, map[string]any{"query": fine})
	require.NotContains(t, body, "errors")
	calls := r.search.calls.Load()

	costly := `{ a: searchInvestigations(limit: 100) { investigations { id contentHash checkedAt platform externalId url claimCount corroborationCount
		origin { provenance serverVerifiedAt } author { id displayName platform } claims { id text summary } highlights } } }`
	_, _, body = r.post(t, map[string]any{"query": costly})
	require.Contains(t, body, "operation has complexity")
	require.Equal(t, calls, r.search.calls.Load(), "nothing executed")

	intro := `{ __schema { types { name fields { name type { name kind ofType { name kind ofType { name kind ofType { name kind ofType { name kind ofType { name kind } } } } } } } } } }`
	_, _, body = r.post(t, map[string]any{"query": intro})
	require.NotContains(t, body, "errors")
	require.Contains(t, body, "SearchInvestigationsResult")
}

// Lists of investigations load their claims and authors in one batch each.
func TestLoadersBatch(t *testing.T) {
	r := newRig(t)
	_, _, body := r.post(t, map[string]any{"query": `{
		a: postInvestigations(platform: LESSWRONG, externalId: "abc123") { post { author { id } } investigations { id claims { id } } }
		b: postInvestigations(platform: LESSWRONG, externalId: "abc123") { post { author { id } } investigations { id claims { id } } } }`})
	require.NotContains(t, body, "errors", body)
	require.EqualValues(t, 1, r.serving.claimQueries.Load(), "claims of every investigation in one query: %v", r.serving.claimKeys)
	require.ElementsMatch(t, []string{invA, invB}, r.serving.claimKeys[0], "each key once")
	require.EqualValues(t, 1, r.serving.authorQueries.Load())
}

// The assessments of every claim of every investigation come in one
// batch; a claim without one (retained, or published before assessments)
// answers null.
func TestAssessmentsBatch(t *testing.T) {
	r := newRigWith(t, rigOptions{batchWait: 200 * time.Millisecond})
	status, _, body := r.post(t, map[string]any{"query": `{
		a: publicInvestigation(investigationId: "` + invA + `") { claims { id assessment { score verdict sources { domain tier } } } }
		c: publicInvestigation(investigationId: "` + invC + `") { claims { id assessment { score } } }
		p: postInvestigations(platform: LESSWRONG, externalId: "abc123") { investigations { id claims { id assessment { verdict gate4 } } } } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.EqualValues(t, 1, r.serving.assessmentQueries.Load(), "every claim's assessment in one query: %v", r.serving.assessmentKeys)
	require.ElementsMatch(t, []string{claimA, claimC}, r.serving.assessmentKeys[0], "each key once")
	var out struct {
		Data struct {
			A, C struct {
				Claims []struct {
					ID         string
					Assessment *struct {
						Score   int
						Verdict string
						Sources []struct {
							Domain string
							Tier   int
						}
					}
				}
			}
			P struct {
				Investigations []struct {
					Claims []struct {
						Assessment *struct{ Verdict, Gate4 string }
					}
				}
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	require.Empty(t, out.Errors)
	require.Len(t, out.Data.A.Claims, 1)
	a := out.Data.A.Claims[0].Assessment
	require.NotNil(t, a)
	require.Equal(t, 3, a.Score)
	require.Equal(t, "REFUTED", a.Verdict)
	require.Equal(t, "nps.gov", a.Sources[0].Domain)
	require.Equal(t, 1, a.Sources[0].Tier)
	require.Equal(t, 2, a.Sources[1].Tier)
	require.Len(t, out.Data.C.Claims, 1)
	require.Nil(t, out.Data.C.Claims[0].Assessment, "a retained claim has no assessment")
	require.Equal(t, "REFUTED", out.Data.P.Investigations[0].Claims[0].Assessment.Verdict)
	require.Equal(t, "MEDIUM", out.Data.P.Investigations[0].Claims[0].Assessment.Gate4)
	require.Empty(t, out.Data.P.Investigations[1].Claims)
}

// GET answers (persisted queries) are cacheable with an ETag; APQ works.
func TestPersistedQueriesAndCaching(t *testing.T) {
	r := newRig(t)
	query := `{ publicMetrics { totalInvestigatedPosts factCheckIncidence } }`
	sum := sha256.Sum256([]byte(query))
	hash := hex.EncodeToString(sum[:])
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hash + `"}}`
	get := func(vals url.Values, header http.Header) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodGet, r.srv.URL+"/graphql?"+vals.Encode(), nil)
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = io(resp, &b)
		return resp, b.String()
	}
	resp, body := get(url.Values{"extensions": {ext}}, nil)
	require.Contains(t, body, "PersistedQueryNotFound")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	_, _, body = r.post(t, map[string]any{"query": query, "extensions": json.RawMessage(ext)})
	require.Contains(t, body, `"factCheckIncidence":0.25`)

	resp, body = get(url.Values{"extensions": {ext}}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `"totalInvestigatedPosts":8`)
	require.Equal(t, "public, max-age=30", resp.Header.Get("Cache-Control"))
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)

	resp, body = get(url.Values{"extensions": {ext}}, http.Header{"If-None-Match": {etag}})
	require.Equal(t, http.StatusNotModified, resp.StatusCode)
	require.Empty(t, body)
}

// The explorer page and its assets come from this server only.
func TestExplorer(t *testing.T) {
	r := newRig(t)
	resp, err := http.Get(r.srv.URL + "/graphiql")
	require.NoError(t, err)
	var page strings.Builder
	_, _ = io(resp, &page)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'self'")
	require.Contains(t, csp, "script-src 'self';")
	require.NotContains(t, page.String(), "http://")
	require.NotContains(t, page.String(), "https://")
	for _, asset := range []string{"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js", "init.js"} {
		resp, err := http.Get(r.srv.URL + "/graphiql/" + asset)
		require.NoError(t, err)
		var b strings.Builder
		_, _ = io(resp, &b)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, asset)
		require.Greater(t, b.Len(), 100, asset) // the client un-gzips transparently
	}
	// A client that does not take gzip gets the plain asset.
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+"/graphiql/react.production.min.js", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var plain strings.Builder
	_, _ = io(resp, &plain)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Content-Encoding"))
	require.Contains(t, plain.String(), "React")

	resp, err = http.Get(r.srv.URL + "/graphiql/other.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Every search argument reaches the index query.
func TestSearchArguments(t *testing.T) {
	r := newRig(t)
	_, _, body := r.post(t, map[string]any{"query": `{ searchInvestigations(query: "bridge", platform: X, limit: 5, offset: 10,
		authorId: "` + author + `", provenance: CLIENT_FALLBACK, minClaimCount: 2,
		checkedAfter: "2026-11-01T00:00:00Z", checkedBefore: "2026-12-01T00:00:00Z") { total } }`})
	require.NotContains(t, body, "errors")
	after, before := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	q := r.search.last
	require.True(t, q.CheckedFrom.Equal(after) && q.CheckedTo.Equal(before), "%v %v", q.CheckedFrom, q.CheckedTo)
	q.CheckedFrom, q.CheckedTo = nil, nil
	require.Equal(t, search.Query{Text: "bridge", Platform: "X", AuthorID: author, Provenance: "CLIENT_FALLBACK",
		MinClaimCount: 2, Limit: 5, Offset: 10}, q)

	_, _, body = r.post(t, map[string]any{"query": `{ searchInvestigations { total } }`})
	require.NotContains(t, body, "errors")
	require.Equal(t, search.Query{Limit: 20}, r.search.last, "spec defaults: limit 20, offset 0")
}
