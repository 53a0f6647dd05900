package graphql_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// analysisFields selects every field of the job JSON.
const analysisFields = `id status
	input { kind url title platform externalId textLength }
	versions { prompts { name version sha256 } provider model registry policy rubric }
	claims { id index text context
		triage { kind specificity timeSensitive currentEvents numeric researched reason }
		queries { query kind results { url title snippet publishedAt } error }
		sources { url domain tier rule origin entail contradict neutral }
		verdict { engine score gate4 truthPercent confidence label band caps { rule cap before } summary } }
	verdict { label band truthPercent confidence caps { rule cap before } summary caveats sources { url title domain tier fromSearch } }
	failure createdAt completedAt`

// fakeAnalysisSearch answers searchAnalyses with one hit and keeps the
// query.
type fakeAnalysisSearch struct {
	mu   sync.Mutex
	last search.AnalysisQuery
}

func (f *fakeAnalysisSearch) Search(_ context.Context, q search.AnalysisQuery) (search.AnalysisResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = q
	if err := q.Validate(); err != nil {
		return search.AnalysisResult{}, err
	}
	return search.AnalysisResult{Total: 3, HasMore: true, Hits: []search.AnalysisHit{{AnalysisID: "a1",
		CompletedAt: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), InputKind: events.AnalysisInputText, Label: events.LabelFalse,
		Band: events.BandMostlyFalse, TruthPercent: 20, Confidence: 55, Summary: "s", ClaimCount: 1, Claims: []string{"c"},
		Highlights: []string{"<mark>c</mark>"}}}}, nil
}

// TestAnalysesFromTheProjections: the fixture's analyses projected into
// the real serving and audit projections answer GraphQL: analysis is the
// job JSON field for field (and value for value), with its public audit
// trail; postAnalyses lists the post's; searchAnalyses maps its
// arguments and hits; the argument and store-field limits hold.
func TestAnalysesFromTheProjections(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := events.NewCatalogRegistry()
	f := analysistest.New("graphql")
	var recs []*kgo.Record
	for _, ev := range f.All() {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		rec := &kgo.Record{Topic: "test.analyses", Offset: int64(len(recs)), Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
		for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		recs = append(recs, rec)
	}
	servingPool, err := postgres.Connect(ctx, url, "serving")
	require.NoError(t, err)
	defer servingPool.Close()
	require.NoError(t, pgproj.Migrate(ctx, servingPool, "serving", serving.Migrations(), logging.Discard()))
	auditPool, err := postgres.Connect(ctx, url, audit.Schema)
	require.NoError(t, err)
	defer auditPool.Close()
	require.NoError(t, pgproj.Migrate(ctx, auditPool, audit.Schema, audit.Migrations(), logging.Discard()))
	for _, p := range []*pgproj.Projector{
		pgproj.NewProjector(serving.ProjectorName, servingPool, reg, serving.NewApplier(2), discardDeadLetters{t}, logging.Discard()),
		pgproj.NewProjector(audit.ProjectorName, auditPool, reg, audit.NewApplier(reg), discardDeadLetters{t}, logging.Discard()),
	} {
		require.NoError(t, p.Handle(ctx, kafka.Batch{Topic: "test.analyses", Records: recs}))
	}
	reader := serving.NewReader(servingPool)
	found := &fakeAnalysisSearch{}
	res := graphql.NewResolver(graphql.Deps{Serving: reader, Search: &fakeSearch{}, Metrics: &fakeMetrics{},
		Analyses: reader, AnalysisSearch: found, AnalysisTrails: audit.NewReader(auditPool, reg)})
	mux := http.NewServeMux()
	mux.Handle("/graphql", graphql.NewHandler(res, graphql.Options{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := &rig{srv: srv}
	query := func(q string, vars map[string]any) map[string]json.RawMessage {
		t.Helper()
		status, _, body := r.post(t, map[string]any{"query": q, "variables": vars})
		require.Equal(t, http.StatusOK, status, body)
		var out struct {
			Data   map[string]json.RawMessage
			Errors []any
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out), body)
		require.Empty(t, out.Errors, body)
		return out.Data
	}

	for _, id := range []string{f.CompleteID, f.OpinionID, f.FailedID} {
		got := query(`query($id: ID!) { analysis(id: $id) { `+analysisFields+` auditTrail } }`, map[string]any{"id": id})
		var a map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got["analysis"], &a))
		var trail audit.AnalysisTrail
		require.NoError(t, json.Unmarshal(a["auditTrail"], &trail))
		delete(a, "auditTrail")
		job, err := reader.Analysis(ctx, id)
		require.NoError(t, err)
		want, err := json.Marshal(job)
		require.NoError(t, err)
		gotJSON, err := json.Marshal(a)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(gotJSON), "GraphQL's analysis is the job JSON")

		require.Equal(t, id, trail.AnalysisID)
		require.Equal(t, job.Status, trail.Status)
		require.NotContains(t, string(a["auditTrail"]), "raw_request")
	}
	got := query(`query($id: ID!) { analysis(id: $id) { id } }`, map[string]any{"id": events.AnalysisID("content:none", "VERDICT", "v1")})
	require.Equal(t, "null", string(got["analysis"]))

	got = query(`query($ext: String!) { postAnalyses(platform: X, externalId: $ext) { id status verdict { label } auditTrail } }`,
		map[string]any{"ext": f.ExternalID})
	var list []struct {
		ID, Status string
		Verdict    struct{ Label string }
		AuditTrail audit.AnalysisTrail
	}
	require.NoError(t, json.Unmarshal(got["postAnalyses"], &list))
	require.Len(t, list, 1)
	require.Equal(t, []string{f.CompleteID, "COMPLETE", "False"}, []string{list[0].ID, list[0].Status, list[0].Verdict.Label})
	require.Equal(t, len(f.Complete), list[0].AuditTrail.Steps)
	got = query(`{ postAnalyses(platform: X, externalId: "nobody") { id } }`, nil)
	require.Equal(t, "[]", string(got["postAnalyses"]))

	got = query(`{ searchAnalyses(query: "eiffel", label: False, limit: 5, offset: 5) {
		total hasMore analyses { id completedAt inputKind platform externalId url title label band truthPercent confidence summary claimCount claims highlights } } }`, nil)
	require.JSONEq(t, `{"total":3,"hasMore":true,"analyses":[{"id":"a1","completedAt":"2026-11-23T09:00:00Z","inputKind":"TEXT","platform":null,
		"externalId":null,"url":null,"title":null,"label":"False","band":"MOSTLY-FALSE","truthPercent":20,"confidence":55,"summary":"s",
		"claimCount":1,"claims":["c"],"highlights":["<mark>c</mark>"]}]}`, string(got["searchAnalyses"]))
	require.Equal(t, search.AnalysisQuery{Text: "eiffel", Label: events.LabelFalse, Limit: 5, Offset: 5}, found.last)

	refused := func(q, code string) {
		t.Helper()
		status, _, body := r.post(t, map[string]any{"query": q})
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, body, `"code":"`+code+`"`)
	}
	refused(`{ searchAnalyses(limit: 101) { total } }`, "BAD_USER_INPUT")
	refused(`{ analysis(id: "`+strings.Repeat("a", 65)+`") { id } }`, "BAD_USER_INPUT")
	refused(`{ postAnalyses(platform: X, externalId: "a\u0000b") { id } }`, "BAD_USER_INPUT")
	refused(`{ a: analysis(id: "1") { id } b: analysis(id: "2") { id } c: postAnalyses(platform: X, externalId: "x") { id }
		d: searchAnalyses { total } e: analysis(id: "3") { auditTrail } }`, "TOO_MANY_STORE_FIELDS")
}
