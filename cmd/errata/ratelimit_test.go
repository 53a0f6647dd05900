package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/testenv"
)

type httpAnswer struct {
	status     int
	retryAfter string
	body       string
	took       time.Duration
}

func ask(t *testing.T, method, url, client, body string) httpAnswer {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-openerrata-extension-version", "0.3.3")
	req.Header.Set("X-Forwarded-For", client)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return httpAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b), took: time.Since(start)}
}

func gqlBody(t *testing.T, query string) string {
	b, err := json.Marshal(map[string]string{"query": query})
	require.NoError(t, err)
	return string(b)
}

// `errata serve` wires the limits from its settings: hostile GraphQL
// documents and arguments get a 400 at once, a client over its budget a 429
// with Retry-After (GraphQL errors body on /graphql, the tRPC envelope on
// /trpc), others are served; ERRATA_RATE_LIMIT=off lifts every limit.
func TestServeRateLimits(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 1)
	dbURL := testenv.Postgres(t)
	env := []string{
		"ERRATA_KAFKA_BROKERS=" + strings.Join(brokers, ","),
		"ERRATA_KAFKA_TOPIC_PREFIX=" + topics.Prefix,
		"ERRATA_DATABASE_URL=" + dbURL,
		"ERRATA_SEARCH_INDEX_PREFIX=" + testenv.SearchIndexPrefix(t),
		"ERRATA_CLICKHOUSE_DATABASE=" + testenv.ClickHouseDatabaseName(t),
		"ERRATA_SERVER_VERIFICATION=false",
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
		"ERRATA_TRUSTED_PROXY_HEADER=X-Forwarded-For",
		"ERRATA_RATE_LIMIT_TRPC_RATE=1", "ERRATA_RATE_LIMIT_TRPC_BURST=3",
		"ERRATA_RATE_LIMIT_GRAPHQL_RATE=1", "ERRATA_RATE_LIMIT_GRAPHQL_BURST=40",
	}
	_, stderr, err := runErrata(t, env, "migrate")
	require.NoError(t, err, stderr)
	serve := func(extra ...string) string {
		addr := freeAddr(t)
		p := startErrata(t, append(append([]string{"ERRATA_HTTP_ADDR=" + addr}, env...), extra...), filepath.Join(t.TempDir(), "serve.log"), "serve")
		t.Cleanup(func() { p.stop(t) })
		base := "http://" + addr
		testenv.Eventually(t, 20*time.Second, func() (bool, string) {
			resp, err := http.Get(base + "/health")
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
		return base
	}
	base := serve()
	gql, settings := base+"/graphql", base+"/trpc/post.validateSettings"

	// The probes, each from its own client.
	a := ask(t, http.MethodPost, gql, "203.0.113.1", gqlBody(t, `{ postInvestigations(platform: X, externalId: "a\u0000b") { post { url } } }`))
	require.Equal(t, http.StatusBadRequest, a.status, a.body)
	require.Contains(t, a.body, "postInvestigations: argument externalId must not contain NUL (U+0000)")
	t.Logf("NUL externalId: %d in %v: %s", a.status, a.took, a.body)
	a = ask(t, http.MethodPost, gql, "203.0.113.2", gqlBody(t, "{ "+strings.Repeat("__typename ", 5400)+"}"))
	require.Equal(t, http.StatusBadRequest, a.status, a.body)
	require.Contains(t, a.body, `"code":"DOCUMENT_TOO_LARGE"`)
	require.Less(t, a.took, 2*time.Second)
	t.Logf("5,400 fields: %d in %v: %s", a.status, a.took, a.body)

	for i, probe := range []struct{ field, code string }{
		{"searchInvestigations(limit: 1) { total }", "DOCUMENT_TOO_LARGE"}, // 1,000 aliases: 41 KB
		{"publicMetrics { factCheckIncidence }", "TOO_MANY_STORE_FIELDS"},
	} {
		n := []int{1000, 100}[i]
		var doc strings.Builder
		doc.WriteString("{ ")
		for j := range n {
			doc.WriteString("a" + strconv.Itoa(j) + ": " + probe.field + " ")
		}
		doc.WriteString("}")
		a = ask(t, http.MethodPost, gql, "203.0.113.1"+strconv.Itoa(i), gqlBody(t, doc.String()))
		require.Equal(t, http.StatusBadRequest, a.status, a.body)
		require.Contains(t, a.body, `"code":"`+probe.code+`"`)
		t.Logf("%d aliases of %s: %d in %v: %s", n, probe.field, a.status, a.took, a.body)
	}

	// GraphQL: 40 points, 10 a request plus its cost: a few pass, then 429.
	var got []int
	for range 10 {
		a = ask(t, http.MethodPost, gql, "203.0.113.3", gqlBody(t, "{ __typename }"))
		got = append(got, a.status)
		if a.status == http.StatusTooManyRequests {
			break
		}
		require.Equal(t, http.StatusOK, a.status, a.body)
	}
	require.GreaterOrEqual(t, len(got), 3, "%v", got)
	require.Equal(t, http.StatusTooManyRequests, a.status, "%v", got)
	secs, err := strconv.Atoi(a.retryAfter)
	require.NoError(t, err)
	require.Positive(t, secs)
	require.Contains(t, a.body, `"code":"RATE_LIMITED"`)
	t.Logf("GraphQL over budget: %d, Retry-After %s: %s", a.status, a.retryAfter, a.body)
	require.Equal(t, http.StatusOK, ask(t, http.MethodPost, gql, "203.0.113.4", gqlBody(t, "{ __typename }")).status, "another client")

	// tRPC: three calls, then TOO_MANY_REQUESTS in the contract's envelope.
	for range 3 {
		a = ask(t, http.MethodGet, settings, "203.0.113.5", "")
		require.Equal(t, http.StatusOK, a.status, a.body)
	}
	a = ask(t, http.MethodGet, settings, "203.0.113.5", "")
	require.Equal(t, http.StatusTooManyRequests, a.status, a.body)
	require.Equal(t, "1", a.retryAfter)
	var env429 struct {
		Error struct {
			Code int            `json:"code"`
			Data map[string]any `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &env429), a.body)
	require.Equal(t, -32029, env429.Error.Code)
	require.Equal(t, "TOO_MANY_REQUESTS", env429.Error.Data["code"])
	require.EqualValues(t, 429, env429.Error.Data["httpStatus"])
	t.Logf("tRPC over budget: %d, Retry-After %s: %s", a.status, a.retryAfter, a.body)
	require.Equal(t, http.StatusOK, ask(t, http.MethodGet, settings, "203.0.113.6", "").status, "another client")

	// ERRATA_RATE_LIMIT=off: the same budgets, nothing refused.
	base = serve("ERRATA_RATE_LIMIT=off")
	for i := range 20 {
		a = ask(t, http.MethodPost, base+"/graphql", "203.0.113.3", gqlBody(t, "{ __typename }"))
		require.Equal(t, http.StatusOK, a.status, "graphql %d: %s", i, a.body)
		a = ask(t, http.MethodGet, base+"/trpc/post.validateSettings", "203.0.113.5", "")
		require.Equal(t, http.StatusOK, a.status, "trpc %d: %s", i, a.body)
	}
	require.True(t, bytes.Contains([]byte(a.body), []byte(`"instanceApiKeyAccepted":false`)), a.body)
}
