package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/projections/serving"
)

const testVersionID = "4a1b7c52-2f0e-5b6e-8d1a-3c9e0f7b2d44"

// registered puts a registered X post version into the fake projection.
func (w *bench) registered(versionID, text string) serving.Source {
	src := serving.Source{
		Version: serving.Version{ID: versionID, PostID: events.PostID(events.PlatformX, "1790000000000000000"),
			Platform: events.PlatformX, ExternalID: "1790000000000000000", ContentHash: strings.Repeat("0", 64)},
		URL: "https://x.com/a/status/1790000000000000000", Text: text,
	}
	w.analyses.mu.Lock()
	w.analyses.versions[src.ID] = src
	w.analyses.mu.Unlock()
	return src
}

func postAnalysisID(versionID string) string {
	return events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputPost, versionID, ""), events.AnalysisTypeVerdict, testPromptVersion)
}

// verdict.request appends a POST analysis of the registered version's
// text (source EXTENSION) and answers its id and status; once the
// projection has the analysis, a repeat appends nothing.
func TestVerdictRequest(t *testing.T) {
	w := newBench(t, benchOpts{})
	src := w.registered(testVersionID, "Water boils at 90 degrees at sea level. Cats are better than dogs.")
	body := `{"platform":"X","externalId":"1790000000000000000","postVersionId":"` + testVersionID + `"}`
	r := post(t, w.server, "verdict.request", []byte(body))
	id := postAnalysisID(testVersionID)
	require.JSONEq(t, `{"analysisId":"`+id+`","status":"PENDING"}`, string(resultOf(t, r)))
	reqs := w.requests(t)
	require.Len(t, reqs, 1)
	got := reqs[0]
	require.Equal(t, events.AnalysisRequestedV1{
		AnalysisID: id, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: testPromptVersion,
		InputKind: events.AnalysisInputPost, Platform: "X", ExternalID: src.ExternalID, PostID: src.PostID,
		PostVersionID: testVersionID, URL: src.URL, Text: src.Text, ContentSHA256: got.ContentSHA256,
		Source: events.AnalysisSourceExtension, RequesterKey: got.RequesterKey,
	}, *got)
	require.Regexp(t, hex64, got.ContentSHA256)
	require.Regexp(t, hex64, got.RequesterKey)

	w.analyses.set(serving.Analysis{ID: id, Status: events.StatusRunning, CreatedAt: time.Now()})
	r = post(t, w.server, "verdict.request", []byte(body))
	require.JSONEq(t, `{"analysisId":"`+id+`","status":"RUNNING"}`, string(resultOf(t, r)))
	require.Len(t, w.requests(t), 1)
}

// verdict.request refuses what names no registered version, or not the
// one it says, with the contract's error envelopes; nothing is appended.
func TestVerdictRequestRefusals(t *testing.T) {
	limit, err := ratelimit.New(ratelimit.Limit{PerSecond: 1.0 / 3600, Burst: 1}, 100, nil)
	require.NoError(t, err)
	w := newBench(t, benchOpts{submitLimit: limit})
	w.registered(testVersionID, "A short post.")
	ok := func(f func(m map[string]any)) string {
		m := map[string]any{"platform": "X", "externalId": "1790000000000000000", "postVersionId": testVersionID}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, body, code string
	}{
		{"malformed JSON", `{"platform":`, "PARSE_ERROR"},
		{"unknown field", ok(func(m map[string]any) { m["text"] = "x" }), "BAD_REQUEST"},
		{"unknown platform", ok(func(m map[string]any) { m["platform"] = "MYSPACE" }), "BAD_REQUEST"},
		{"no external id", ok(func(m map[string]any) { m["externalId"] = "" }), "BAD_REQUEST"},
		{"long external id", ok(func(m map[string]any) { m["externalId"] = strings.Repeat("9", 257) }), "BAD_REQUEST"},
		{"malformed version id", ok(func(m map[string]any) { m["postVersionId"] = "v1" }), "BAD_REQUEST"},
		{"unknown version", ok(func(m map[string]any) { m["postVersionId"] = "4a1b7c52-2f0e-5b6e-8d1a-3c9e0f7b2d45" }), "NOT_FOUND"},
		{"another post's version", ok(func(m map[string]any) { m["externalId"] = "1" }), "BAD_REQUEST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, w.server, "verdict.request", []byte(tc.body))
			expectError(t, r, tc.code, "verdict.request")
			require.Zero(t, w.records(t))
		})
	}

	// The contract's version gate applies.
	r := do(t, w.server, request{path: "/trpc/verdict.request", body: []byte(ok(func(map[string]any) {})), noVersion: true})
	data := expectError(t, r, "PRECONDITION_FAILED", "verdict.request")
	require.Equal(t, "UPGRADE_REQUIRED", data["openerrataCode"])

	// A post too long for a verdict.
	w.registered(testVersionID, strings.Repeat("word ", 7000))
	r = post(t, w.server, "verdict.request", []byte(ok(func(map[string]any) {})))
	expectError(t, r, "BAD_REQUEST", "verdict.request")
	require.Zero(t, w.records(t))

	// Each request appended counts against the client's submissions;
	// refusals and analyses that exist cost nothing.
	w.registered(testVersionID, "A short post.")
	r = post(t, w.server, "verdict.request", []byte(ok(func(map[string]any) {})))
	resultOf(t, r)
	require.EqualValues(t, 1, w.records(t))
	w.analyses.set(serving.Analysis{ID: postAnalysisID(testVersionID), Status: events.StatusPending, CreatedAt: time.Now()})
	r = post(t, w.server, "verdict.request", []byte(ok(func(map[string]any) {})))
	resultOf(t, r)
	other := w.registered("4a1b7c52-2f0e-5b6e-8d1a-3c9e0f7b2d46", "Another post.")
	r = post(t, w.server, "verdict.request", []byte(ok(func(m map[string]any) { m["postVersionId"] = other.ID })))
	data = expectError(t, r, "TOO_MANY_REQUESTS", "verdict.request")
	require.Equal(t, float64(3600), data["retryAfterSeconds"])
	require.Equal(t, "3600", r.header("Retry-After"))
	require.EqualValues(t, 1, w.records(t))
}

// verdict.get answers the same job JSON as GET /api/v1/analyses/{id}.
func TestVerdictGet(t *testing.T) {
	w := newBench(t, benchOpts{})
	job := sampleJob()
	w.analyses.set(job)
	r := get(t, w.server, queryPath("verdict.get", map[string]string{"analysisId": job.ID}), nil)
	rest := do(t, w.server, request{method: http.MethodGet, path: "/api/v1/analyses/" + job.ID, noVersion: true})
	require.Equal(t, http.StatusOK, rest.status)
	require.JSONEq(t, string(rest.body), string(resultOf(t, r)))

	for _, tc := range []struct {
		name string
		path string
		code string
	}{
		{"unknown", queryPath("verdict.get", map[string]string{"analysisId": analysisIDOf("nothing")}), "NOT_FOUND"},
		{"no input", queryPath("verdict.get", nil), "BAD_REQUEST"},
		{"malformed id", queryPath("verdict.get", map[string]string{"analysisId": "x"}), "BAD_REQUEST"},
		{"unknown field", queryPath("verdict.get", map[string]string{"analysisId": job.ID, "x": "y"}), "BAD_REQUEST"},
		{"not JSON", queryPath("verdict.get", "{"), "PARSE_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			expectError(t, get(t, w.server, tc.path, nil), tc.code, "verdict.get")
		})
	}
}
