package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// gql posts a GraphQL operation to the stack's /graphql and returns the
// decoded data and errors.
func (s *stack) gql(t *testing.T, query string, vars map[string]any) (map[string]any, []map[string]any) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	resp, err := http.Post(s.base+"/graphql", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "POST answers are never cached")
	var out struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	return out.Data, out.Errors
}

// expectedIncidence computes publicMetrics from the events alone: posts
// with >= 1 complete investigation completed in [from, to), and those
// with >= 1 claim, optionally for one author.
func expectedIncidence(evs []events.Event, authorID string, from, to time.Time) (total, flagged int) {
	authorOf := map[string]string{}
	investigated := map[string]bool{}
	withFlags := map[string]bool{}
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			if p.Author != nil {
				authorOf[p.PostID] = events.AuthorID(p.Platform, p.Author.PlatformUserID)
			}
		case *events.InvestigationCompletedV1:
			if ev.Time.Before(from) || !ev.Time.Before(to) {
				continue
			}
			investigated[p.PostID] = true
			if len(p.Claims) > 0 {
				withFlags[p.PostID] = true
			}
		}
	}
	for post := range investigated {
		if authorID != "" && authorOf[post] != authorID {
			continue
		}
		total++
		if withFlags[post] {
			flagged++
		}
	}
	return total, flagged
}

// The public GraphQL API over HTTP against the real stack (serve + worker
// on Kafka, Postgres, Elasticsearch and the ClickHouse stand-in): the
// spec's queries, the researcher's search with paging, the analyst's
// metrics against counts computed from the events, the audit trail.
func TestGraphQLOverTheRealStack(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := newStack(t, ctx, "OPENAI_API_KEY="+"sk-instance-test-0123456789")
	s.fake.RequireAPIKey("sk-instance-test-0123456789")
	s.start(t)
	// Added once the worker runs: `apikey add` then waits until the
	// serving projection has the key, whatever topic order the projector
	// catches up in.
	key := addInstanceKey(t, s.env)

	workload := mixedWorkload(t)
	require.NoError(t, s.rig.append(ctx, workload, 250))
	versionID := s.registerTweet(t)
	status, data := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID},
		map[string]string{"x-api-key": key})
	require.Equal(t, http.StatusOK, status, string(data))
	investigationID := events.InvestigationID(versionID)
	s.waitInvestigated(t, investigationID, time.Minute)

	// publicInvestigation: the complete one with claims, sources, trust
	// signals and its audit trail; pending and failed ones are null.
	const one = `query($id: ID!) { publicInvestigation(investigationId: $id) {
		investigation { id checkedAt promptVersion provider model corroborationCount origin { provenance serverVerifiedAt } auditTrail }
		post { platform externalId url author { id displayName platform } }
		claims { id text context summary reasoning sources { url title snippet } } } }`
	// The audit projection applies the log on its own schedule: its trail
	// appears once it has read the completion (the serving one already has).
	var got map[string]any
	var errs []map[string]any
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		got, errs = s.gql(t, one, map[string]any{"id": investigationID})
		if len(errs) > 0 || got["publicInvestigation"] == nil {
			return false, string(mustJSON(t, errs))
		}
		trail := got["publicInvestigation"].(map[string]any)["investigation"].(map[string]any)["auditTrail"]
		return trail != nil, "auditTrail is null: the audit projection has not read the completion yet"
	})
	res := got["publicInvestigation"].(map[string]any)
	inv := res["investigation"].(map[string]any)
	require.Equal(t, investigationID, inv["id"])
	require.Equal(t, "gpt-test", inv["model"])
	require.Equal(t, map[string]any{"provenance": "CLIENT_FALLBACK", "serverVerifiedAt": nil}, inv["origin"])
	require.Equal(t, "X", res["post"].(map[string]any)["platform"])
	claims := res["claims"].([]any)
	require.Len(t, claims, 1)
	claim := claims[0].(map[string]any)
	require.Equal(t, tweetClaim, claim["text"])
	require.Equal(t, "The Eiffel Tower was completed in 1889.", claim["summary"])
	require.Equal(t, "https://www.toureiffel.paris/en/the-monument/history", claim["sources"].([]any)[0].(map[string]any)["url"])
	trail, err := json.Marshal(inv["auditTrail"])
	require.NoError(t, err)
	require.Contains(t, string(trail), investigationID)
	require.Contains(t, string(trail), "The tower was finished for the 1889 Exposition Universelle.")
	require.NotContains(t, string(trail), "sk-instance-test", "no secrets in the public trail")

	final := map[string]string{}
	for _, ev := range workload {
		switch p := ev.Payload.(type) {
		case *events.InvestigationRequestedV1:
			if final[p.InvestigationID] == "" {
				final[p.InvestigationID] = "PENDING"
			}
		case *events.InvestigationFailedV1:
			if final[p.InvestigationID] != "COMPLETE" {
				final[p.InvestigationID] = "FAILED"
			}
		case *events.InvestigationCompletedV1:
			final[p.InvestigationID] = "COMPLETE"
		}
	}
	// (Requested-only investigations of the workload are run by this
	// stack's worker, so they do not stay pending here; the resolver's
	// COMPLETE-only rule is the same query either way.)
	var failed string
	for id, state := range final {
		if state == "FAILED" {
			failed = id
		}
	}
	require.NotEmpty(t, failed)
	for _, id := range []string{failed, "00000000-0000-0000-0000-000000000000", "not-a-uuid"} {
		got, errs := s.gql(t, `query($id: ID!) { publicInvestigation(investigationId: $id) { investigation { id } } }`, map[string]any{"id": id})
		require.Empty(t, errs)
		var st string
		_ = s.rig.pool.QueryRow(ctx, `SELECT status FROM investigations WHERE id::text = $1`, id).Scan(&st)
		require.Nil(t, got["publicInvestigation"], "%s: serving says %s, events say %s", id, st, final[id])
	}

	// A workload claim's assessment: the one that published it (the
	// withheld submission beside it is no claim).
	var assessedInv string
	for _, ev := range workload {
		if p, ok := ev.Payload.(*events.InvestigationCompletedV1); ok && len(p.Claims) == 2 {
			assessedInv = p.InvestigationID
			break
		}
	}
	require.NotEmpty(t, assessedInv)
	got, errs = s.gql(t, `query($id: ID!) { publicInvestigation(investigationId: $id) { claims { assessment {
		score verdict gate4 policyVersion registryVersion publishMode features { cMax agreeDom relAvg } sources { domain tier rule origin contradict } } } } }`,
		map[string]any{"id": assessedInv})
	require.Empty(t, errs)
	assessedClaims := got["publicInvestigation"].(map[string]any)["claims"].([]any)
	require.Len(t, assessedClaims, 2)
	for _, c := range assessedClaims {
		require.Equal(t, map[string]any{"score": float64(2), "verdict": "REFUTED", "gate4": "MEDIUM", "policyVersion": "strict-v1@000000000001",
			"registryVersion": "starter-v1@000000000001", "publishMode": "strict",
			"features": map[string]any{"cMax": 0.95, "agreeDom": float64(0), "relAvg": 0.9},
			"sources": []any{
				map[string]any{"domain": "bls.gov", "tier": float64(1), "rule": "exact:bls.gov", "origin": "search", "contradict": 0.95},
				map[string]any{"domain": "reuters.com", "tier": float64(2), "rule": "exact:reuters.com", "origin": "investigator", "contradict": 0.9},
			}}, c.(map[string]any)["assessment"])
	}

	// postInvestigations: the post and its complete investigations; an
	// unknown post gives { post: null, investigations: [] }.
	got, errs = s.gql(t, `{ postInvestigations(platform: X, externalId: "1860000000000000001") {
		post { externalId } investigations { id contentHash claimCount checkedAt claims { text } } } }`, nil)
	require.Empty(t, errs)
	pi := got["postInvestigations"].(map[string]any)
	require.Equal(t, "1860000000000000001", pi["post"].(map[string]any)["externalId"])
	require.Len(t, pi["investigations"], 1)
	require.EqualValues(t, 1, pi["investigations"].([]any)[0].(map[string]any)["claimCount"])
	got, errs = s.gql(t, `{ postInvestigations(platform: WIKIPEDIA, externalId: "en:Nothing") { post { url } investigations { id } } }`, nil)
	require.Empty(t, errs)
	require.Equal(t, map[string]any{"post": nil, "investigations": []any{}}, got["postInvestigations"])

	// The researcher: a phrase from a claim's reasoning finds it, with a
	// highlighted snippet.
	const find = `query($q: String, $p: Platform, $limit: Int, $offset: Int, $min: Int) {
		searchInvestigations(query: $q, platform: $p, limit: $limit, offset: $offset, minClaimCount: $min) {
			total hasMore investigations { id platform claimCount claims { text summary } highlights } } }`
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		got, errs := s.gql(t, find, map[string]any{"q": "Exposition Universelle"})
		if len(errs) > 0 {
			return false, errs[0]["message"].(string)
		}
		hits := got["searchInvestigations"].(map[string]any)["investigations"].([]any)
		return len(hits) == 1 && hits[0].(map[string]any)["id"] == investigationID, string(mustJSON(t, got))
	})
	got, _ = s.gql(t, find, map[string]any{"q": "Exposition Universelle"})
	hit := got["searchInvestigations"].(map[string]any)["investigations"].([]any)[0].(map[string]any)
	require.Contains(t, strings.Join(toStrings(hit["highlights"]), " "), "<mark>Exposition</mark>")

	// ... and pages through every investigation whose reasoning says "the
	// record says otherwise", filtered by platform, in a stable order.
	flaggedNow := map[string]bool{} // the latest completion of each investigation decides
	for _, ev := range workload {
		if p, ok := ev.Payload.(*events.InvestigationCompletedV1); ok {
			flaggedNow[p.InvestigationID] = len(p.Claims) > 0
		}
	}
	var want []string
	for id, flagged := range flaggedNow {
		if flagged {
			want = append(want, id)
		}
	}
	sort.Strings(want)
	require.Greater(t, len(want), 5)
	var seen []string
	for offset := 0; ; offset += 4 {
		got, errs := s.gql(t, find, map[string]any{"q": "record says otherwise", "p": "X", "limit": 4, "offset": offset, "min": 1})
		require.Empty(t, errs)
		page := got["searchInvestigations"].(map[string]any)
		require.EqualValues(t, len(want), page["total"])
		for _, h := range page["investigations"].([]any) {
			seen = append(seen, h.(map[string]any)["id"].(string))
		}
		if page["hasMore"] != true {
			break
		}
	}
	sort.Strings(seen)
	require.Equal(t, want, seen, "every match exactly once across pages")
	got, errs = s.gql(t, find, map[string]any{"q": "record says otherwise", "p": "LESSWRONG"})
	require.Empty(t, errs)
	require.EqualValues(t, 0, got["searchInvestigations"].(map[string]any)["total"])

	// Limits from the spec: a clear error, nothing returned.
	for _, vars := range []map[string]any{{"limit": 0}, {"limit": 101}, {"offset": -1}} {
		got, errs := s.gql(t, find, vars)
		require.Len(t, errs, 1, vars)
		require.Nil(t, got, vars)
	}

	// The analyst: publicMetrics over a window, overall and by author,
	// equals the counts computed from the events.
	all := append([]events.Event{}, workload...)
	from, to := time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	var author string
	for _, ev := range workload {
		if p, ok := ev.Payload.(*events.PostVersionRegisteredV1); ok && p.Author != nil {
			author = events.AuthorID(p.Platform, p.Author.PlatformUserID)
			break
		}
	}
	require.NotEmpty(t, author)
	const metricsQuery = `query($p: Platform, $a: ID, $from: DateTime, $to: DateTime) {
		publicMetrics(platform: $p, authorId: $a, windowStart: $from, windowEnd: $to) {
			totalInvestigatedPosts investigatedPostsWithFlags factCheckIncidence } }`
	for _, tc := range []struct {
		name   string
		vars   map[string]any
		author string
	}{
		{"platform X in the window", map[string]any{"p": "X", "from": from, "to": to}, ""},
		{"one author in the window", map[string]any{"a": author, "from": from, "to": to}, author},
		{"LESSWRONG", map[string]any{"p": "LESSWRONG", "from": from, "to": to}, "none"},
	} {
		wantTotal, wantFlagged := expectedIncidence(all, tc.author, from, to)
		if tc.author == "none" {
			wantTotal, wantFlagged = 0, 0
		}
		require.Positive(t, wantTotal+boolInt(tc.author == "none"), tc.name)
		testenv.Eventually(t, 30*time.Second, func() (bool, string) {
			got, errs := s.gql(t, metricsQuery, tc.vars)
			if len(errs) > 0 {
				return false, errs[0]["message"].(string)
			}
			m := got["publicMetrics"].(map[string]any)
			ok := m["totalInvestigatedPosts"] == float64(wantTotal) && m["investigatedPostsWithFlags"] == float64(wantFlagged)
			return ok, tc.name + ": " + string(mustJSON(t, m))
		})
	}
	_, errs = s.gql(t, metricsQuery, map[string]any{"a": "not-a-uuid"})
	require.Len(t, errs, 1)

	// The explorer is served from this server only.
	resp, err := http.Get(s.base + "/graphiql")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
	require.NotContains(t, string(page), "https://")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
