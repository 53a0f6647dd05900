package search

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/stretchr/testify/require"
)

// Both corpora's searches build their request bodies one way: status
// COMPLETE and their own filters; with a text, every word must match
// somewhere in their fields, matches are highlighted and relevance orders
// first; then their own order. The bodies are exact (what Elasticsearch
// receives).
func TestRequestBodies(t *testing.T) {
	from := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	to := from.Add(time.Hour)
	for _, tc := range []struct {
		name string
		r    request
		want string
	}{
		{"investigations, no text", Query{Limit: 10}.request(), `{"_source":["investigation_id","post_id","post_version_id","content_hash","checked_at","platform","external_id","url","author_id","author_display_name","provenance","server_verified_at","corroboration_count","claim_count","claims.id","claims.text","claims.summary"],"from":0,"query":{"bool":{"filter":[{"term":{"status":"COMPLETE"}}]}},"size":10,"sort":[{"checked_at":"desc"},{"investigation_id":"asc"}],"track_total_hits":true}`},
		{"investigations, every filter", Query{Text: "eiffel \"tower\" -paris", Platform: "X", AuthorID: "a1", Provenance: "SERVER_VERIFIED",
			MinClaimCount: 2, CheckedFrom: &from, CheckedTo: &to, Limit: 5, Offset: 20}.request(), `{"_source":["investigation_id","post_id","post_version_id","content_hash","checked_at","platform","external_id","url","author_id","author_display_name","provenance","server_verified_at","corroboration_count","claim_count","claims.id","claims.text","claims.summary"],"from":20,"highlight":{"encoder":"html","fields":{"author_display_name":{},"claims.context":{},"claims.reasoning":{},"claims.sources.snippet":{},"claims.sources.title":{},"claims.summary":{},"claims.text":{},"post_excerpt":{}},"fragment_size":160,"number_of_fragments":3,"post_tags":["\u003c/mark\u003e"],"pre_tags":["\u003cmark\u003e"]},"query":{"bool":{"filter":[{"term":{"status":"COMPLETE"}},{"term":{"platform":"X"}},{"term":{"author_id":"a1"}},{"term":{"provenance":"SERVER_VERIFIED"}},{"range":{"claim_count":{"gte":2}}},{"range":{"checked_at":{"gte":"2026-01-02T03:04:05.000000006Z","lt":"2026-01-02T04:04:05.000000006Z"}}}],"must":[{"simple_query_string":{"default_operator":"and","fields":["claims.text^3","claims.summary^2","claims.reasoning","claims.context","claims.sources.title","claims.sources.snippet","post_excerpt","author_display_name"],"query":"eiffel \"tower\" -paris"}}]}},"size":5,"sort":["_score",{"checked_at":"desc"},{"investigation_id":"asc"}],"track_total_hits":true}`},
		{"investigations, text", Query{Text: "x", Limit: 1}.request(), `{"_source":["investigation_id","post_id","post_version_id","content_hash","checked_at","platform","external_id","url","author_id","author_display_name","provenance","server_verified_at","corroboration_count","claim_count","claims.id","claims.text","claims.summary"],"from":0,"highlight":{"encoder":"html","fields":{"author_display_name":{},"claims.context":{},"claims.reasoning":{},"claims.sources.snippet":{},"claims.sources.title":{},"claims.summary":{},"claims.text":{},"post_excerpt":{}},"fragment_size":160,"number_of_fragments":3,"post_tags":["\u003c/mark\u003e"],"pre_tags":["\u003cmark\u003e"]},"query":{"bool":{"filter":[{"term":{"status":"COMPLETE"}}],"must":[{"simple_query_string":{"default_operator":"and","fields":["claims.text^3","claims.summary^2","claims.reasoning","claims.context","claims.sources.title","claims.sources.snippet","post_excerpt","author_display_name"],"query":"x"}}]}},"size":1,"sort":["_score",{"checked_at":"desc"},{"investigation_id":"asc"}],"track_total_hits":true}`},
		{"analyses, no text", AnalysisQuery{Limit: 10}.request(), `{"from":0,"query":{"bool":{"filter":[{"term":{"status":"COMPLETE"}}]}},"size":10,"sort":[{"completed_at":"desc"},{"analysis_id":"asc"}],"track_total_hits":true}`},
		{"analyses, every filter", AnalysisQuery{Text: "vaccines <b>", Label: "FALSE", Band: "MIXED", Platform: "X", Limit: 3, Offset: 7}.request(), `{"from":7,"highlight":{"encoder":"html","fields":{"caveats":{},"claims.text":{},"summary":{},"title":{}},"fragment_size":160,"number_of_fragments":3,"post_tags":["\u003c/mark\u003e"],"pre_tags":["\u003cmark\u003e"]},"query":{"bool":{"filter":[{"term":{"status":"COMPLETE"}},{"term":{"label":"FALSE"}},{"term":{"band":"MIXED"}},{"term":{"platform":"X"}}],"must":[{"simple_query_string":{"default_operator":"and","fields":["claims.text^3","summary^2","caveats","title"],"query":"vaccines \u003cb\u003e"}}]}},"size":3,"sort":["_score",{"completed_at":"desc"},{"analysis_id":"asc"}],"track_total_hits":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.r.body()
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))
		})
	}
}

// A page of the answer: hits in order with their highlights (field order,
// at most maxHighlights), the total and whether more follow; a missing
// index and an unreadable document are errors naming the alias.
func TestSearchAnswers(t *testing.T) {
	var answer, lastBody string
	status := http.StatusOK
	es := fakeElasticsearch(t, func(body string) (int, string) { lastBody = body; return status, answer })

	answer = `{"hits":{"total":{"value":3},"hits":[
		{"_source":{"investigation_id":"i1","checked_at":"2026-01-02T03:04:05.5Z","platform":"X","claims":[{"id":"c1","text":"t","summary":"s"}]},
		 "highlight":{"post_excerpt":["p1"],"claims.text":["a","b","c"],"claims.summary":["d","e","f"]}},
		{"_source":{"investigation_id":"i2","checked_at":"2026-01-01T00:00:00Z","author_id":"a","author_display_name":"A",
		 "server_verified_at":"2026-01-01T00:00:01Z"}}]}}`
	res, err := NewSearcher(es, "errata-search").Search(context.Background(), Query{Text: "x", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, Query{Text: "x", Limit: 2}.mustBody(t), lastBody)
	verified := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	require.Equal(t, Result{Total: 3, HasMore: true, Hits: []Hit{
		{InvestigationID: "i1", CheckedAt: time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC), Platform: "X",
			Claims: []ClaimSummary{{ID: "c1", Text: "t", Summary: "s"}}, Highlights: []string{"a", "b", "c", "d", "e", "f"}},
		{InvestigationID: "i2", CheckedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Author: &Author{ID: "a", DisplayName: "A"},
			ServerVerifiedAt: &verified, Claims: []ClaimSummary{}},
	}}, res)

	answer = `{"hits":{"total":{"value":2},"hits":[
		{"_source":{"analysis_id":"a1","completed_at":"2026-01-02T03:04:05Z","input_kind":"URL","url":"https://example.org/",
		 "title":"T","label":"FALSE","band":"MIXED","truth_percent":20,"confidence":70,"summary":"S","claim_count":1,
		 "claims":[{"id":"c","text":"claim"}]},"highlight":{"title":["<mark>T</mark>"],"claims.text":["<mark>claim</mark>"]}}]}}`
	ares, err := NewAnalysisSearcher(es, "errata-analyses").Search(context.Background(), AnalysisQuery{Limit: 1, Offset: 1})
	require.NoError(t, err)
	require.Equal(t, AnalysisQuery{Limit: 1, Offset: 1}.mustBody(t), lastBody)
	require.Equal(t, AnalysisResult{Total: 2, HasMore: false, Hits: []AnalysisHit{{AnalysisID: "a1",
		CompletedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), InputKind: "URL", URL: "https://example.org/", Title: "T",
		Label: "FALSE", Band: "MIXED", TruthPercent: 20, Confidence: 70, Summary: "S", ClaimCount: 1, Claims: []string{"claim"},
		Highlights: []string{"<mark>claim</mark>", "<mark>T</mark>"}}}}, ares)

	answer = `{"hits":{"total":{"value":0},"hits":[]}}`
	ares, err = NewAnalysisSearcher(es, "errata-analyses").Search(context.Background(), AnalysisQuery{Limit: 1})
	require.NoError(t, err)
	require.Equal(t, AnalysisResult{Hits: []AnalysisHit{}}, ares)

	answer = `{"hits":{"total":{"value":1},"hits":[{"_source":{"analysis_id":"a1","completed_at":"yesterday"}}]}}`
	_, err = NewAnalysisSearcher(es, "errata-analyses").Search(context.Background(), AnalysisQuery{Limit: 1})
	require.ErrorContains(t, err, "search errata-analyses: document a1: completed_at: ")
	answer = `{"hits":{"total":{"value":1},"hits":[{"_source":{"investigation_id":"i1","checked_at":"yesterday"}}]}}`
	_, err = NewSearcher(es, "errata-search").Search(context.Background(), Query{Limit: 1})
	require.ErrorContains(t, err, "search errata-search: document i1: checked_at: ")

	status, answer = http.StatusNotFound, `{"error":{"type":"index_not_found_exception","reason":"no such index [errata-analyses]"},"status":404}`
	_, err = NewAnalysisSearcher(es, "errata-analyses").Search(context.Background(), AnalysisQuery{Limit: 1})
	require.ErrorContains(t, err, "search errata-analyses: the analyses index does not exist (run `errata migrate`): ")
	_, err = NewSearcher(es, "errata-search").Search(context.Background(), Query{Limit: 1})
	require.ErrorContains(t, err, "search errata-search: the search index does not exist (run `errata migrate`): ")
	status, answer = http.StatusOK, `{"hits":`
	_, err = NewSearcher(es, "errata-search").Search(context.Background(), Query{Limit: 1})
	require.ErrorContains(t, err, "search errata-search: decode answer: ")
}

func (q Query) mustBody(t *testing.T) string {
	b, err := q.request().body()
	require.NoError(t, err)
	return string(b)
}

func (q AnalysisQuery) mustBody(t *testing.T) string {
	b, err := q.request().body()
	require.NoError(t, err)
	return string(b)
}

// fakeElasticsearch answers every search with answer(body of the request).
func fakeElasticsearch(t *testing.T, answer func(body string) (int, string)) *elasticsearch.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status, out := answer(string(b))
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, out)
	}))
	t.Cleanup(srv.Close)
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{srv.URL}, DisableRetry: true})
	require.NoError(t, err)
	return es
}
