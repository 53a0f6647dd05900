package ops_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// Secrets a client may send; none may reach a log line.
const (
	openAIKey   = "sk-proj-user-key-must-never-be-logged-0123456789"
	instanceKey = "errata-instance-key-never-logged"
	bearer      = "Bearer token-never-logged-42"
	queryToken  = "query-secret-never-logged"
)

// noKeys is the API's reader for requests that only authenticate: no
// instance key is active, and nothing else may be read.
type noKeys struct{}

func (noKeys) ActiveAPIKey(context.Context, string) (bool, error) { return false, nil }
func (noKeys) VersionStatusByID(context.Context, string) (serving.VersionStatus, error) {
	return serving.VersionStatus{}, errors.New("not read in this test")
}
func (noKeys) BatchStatuses(context.Context, []serving.BatchKey) ([]serving.BatchStatus, error) {
	return nil, errors.New("not read in this test")
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func do(t *testing.T, app *fiber.App, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := app.Test(req, 10_000)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body), resp.Header
}

// TestAPIMetricsAndRequestLog drives the real API with the operations
// surface mounted: /metrics counts requests by route template (never the
// raw URL), every request is logged as JSON with its fields, and no secret
// header or query value reaches the log.
func TestAPIMetricsAndRequestLog(t *testing.T) {
	t.Parallel()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`))
	}))
	defer provider.Close()

	logs := &syncBuffer{}
	log, err := logging.New(logs, "json", "debug")
	require.NoError(t, err)
	log = log.With("component", "api")
	reg := metrics.NewRegistry()
	httpMetrics := metrics.NewHTTP(reg)
	ready := ops.NewReadiness([]ops.Check{{Name: "always", Run: func(context.Context) error { return nil }}}, time.Second, log)
	srv, err := api.New(api.Config{MinExtensionVersion: "0.2.0", OpenAIBaseURL: provider.URL},
		nil, noKeys{}, nil, ingest.NewHasher("a-test-hash-secret-long-enough"), log,
		api.WithRoutes(func(app *fiber.App) { ops.Mount(app, httpMetrics, ready, log) }))
	require.NoError(t, err)
	app := srv.App()

	settings := httptest.NewRequest(http.MethodGet, "/trpc/post.validateSettings", nil)
	settings.Header.Set(api.HeaderExtensionVersion, "0.3.3")
	settings.Header.Set(api.HeaderOpenAIAPIKey, openAIKey)
	settings.Header.Set(api.HeaderAPIKey, instanceKey)
	settings.Header.Set("Authorization", bearer)
	settings.Header.Set(ops.HeaderRequestID, "req-settings-1")
	code, body, hdr := do(t, app, settings)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"openaiApiKeyStatus":"invalid"`)
	require.Equal(t, "req-settings-1", hdr.Get(ops.HeaderRequestID), "a client's request id is kept")

	for range 2 {
		code, _, hdr = do(t, app, httptest.NewRequest(http.MethodGet, "/health", nil))
		require.Equal(t, http.StatusOK, code)
		require.Len(t, hdr.Get(ops.HeaderRequestID), 36, "a request without an id gets a fresh one")
	}
	code, _, _ = do(t, app, httptest.NewRequest(http.MethodPost, "/trpc/post.noSuchProcedure?token="+queryToken, strings.NewReader("{}")))
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = do(t, app, httptest.NewRequest(http.MethodGet, "/wp-admin/"+queryToken, nil))
	require.Equal(t, http.StatusNotFound, code)
	code, body, _ = do(t, app, httptest.NewRequest(http.MethodGet, "/livez", nil))
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok"}`, body)

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_http_requests_total HTTP requests answered, by route template, method and status code.
# TYPE errata_http_requests_total counter
errata_http_requests_total{code="200",method="GET",route="/health"} 2
errata_http_requests_total{code="200",method="GET",route="/livez"} 1
errata_http_requests_total{code="200",method="GET",route="/trpc/post.validateSettings"} 1
errata_http_requests_total{code="404",method="GET",route="unmatched"} 1
errata_http_requests_total{code="404",method="POST",route="/trpc/:path"} 1
`), "errata_http_requests_total"))

	// /metrics is not public: the API's answer is the unknown route's, and
	// the operator's listener (MetricsMux) serves it.
	code, _, _ = do(t, app, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusNotFound, code)
	operator := httptest.NewServer(ops.MetricsMux(reg, log))
	defer operator.Close()
	resp, err := http.Get(operator.URL + "/metrics")
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body = string(raw)
	require.Contains(t, body, `errata_http_requests_total{code="200",method="GET",route="/health"} 2`)
	require.Contains(t, body, `errata_http_requests_total{code="404",method="GET",route="unmatched"} 2`, "the public /metrics probe counts as unmatched")
	require.Contains(t, body, `errata_http_request_duration_seconds_count{code="200",method="GET",route="/trpc/post.validateSettings"} 1`)
	require.Contains(t, body, `errata_http_request_duration_seconds_bucket{code="404",method="POST",route="/trpc/:path",le="+Inf"} 1`)
	require.Contains(t, body, "go_goroutines")
	require.NotContains(t, body, queryToken, "raw URLs never become labels")
	require.NotContains(t, body, "wp-admin")

	out := logs.String()
	for _, secret := range []string{openAIKey, instanceKey, bearer, "token-never-logged", queryToken} {
		require.NotContains(t, out, secret)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "every log line is JSON: %s", sc.Text())
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 7, "one line per request on the public app, the refused /metrics probe included: %s", out)
	first := lines[0]
	for _, k := range []string{"time", "level", "msg", "component", "route", "method", "status", "duration_ms", "request_id"} {
		require.Contains(t, first, k)
	}
	require.Equal(t, "INFO", first["level"])
	require.Equal(t, "api", first["component"])
	require.Equal(t, "/trpc/post.validateSettings", first["route"])
	require.Equal(t, float64(200), first["status"])
	require.Equal(t, "req-settings-1", first["request_id"])
	require.Equal(t, "DEBUG", lines[1]["level"], "probe routes log at debug")
}

// TestReadyz reports each check by name: 200 with a reachable Postgres and
// Kafka, 503 when Postgres is a closed port.
func TestReadyz(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	ctx := context.Background()
	good, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	defer good.Close()
	closed, err := pgxpool.New(ctx, "postgres://errata:errata@127.0.0.1:1/errata?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	defer closed.Close()
	kc, err := kafka.NewClient(cfg.KafkaBrokers)
	require.NoError(t, err)
	defer kc.Close()

	for _, tc := range []struct {
		name   string
		pool   *pgxpool.Pool
		status int
		want   map[string]bool
	}{
		{"all reachable", good, http.StatusOK, map[string]bool{"postgres": true, "kafka": true}},
		{"postgres unreachable", closed, http.StatusServiceUnavailable, map[string]bool{"postgres": false, "kafka": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := ops.NewReadiness([]ops.Check{ops.PostgresCheck(tc.pool), ops.KafkaCheck(kc)}, 3*time.Second, logging.Discard())
			app := fiber.New()
			app.Get("/readyz", ready.Readyz)
			code, body, _ := do(t, app, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			require.Equal(t, tc.status, code, body)
			var rep ops.Report
			require.NoError(t, json.Unmarshal([]byte(body), &rep))
			got := map[string]bool{}
			for _, c := range rep.Checks {
				got[c.Name] = c.OK
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.status == http.StatusOK, rep.Ready)
			require.NotContains(t, body, "127.0.0.1", "the public body names checks, not hosts")
		})
	}
}

// TestWorkerMux serves the worker's endpoints on net/http.
func TestWorkerMux(t *testing.T) {
	t.Parallel()
	reg := metrics.NewRegistry()
	metrics.NewConsumer(reg).BatchDone("errata.projector.serving", "errata.posts", 0, 5, time.Millisecond)
	cl, err := kafka.NewClient([]string{"127.0.0.1:1"}, kgo.RetryTimeout(100*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	ready := ops.NewReadiness([]ops.Check{ops.KafkaCheck(cl)}, 300*time.Millisecond, logging.Discard())
	srv := httptest.NewServer(ops.Mux(reg, ready, logging.Discard()))
	defer srv.Close()

	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := get("/livez")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok"}`, body)
	code, _ = get("/health")
	require.Equal(t, http.StatusOK, code)
	code, body = get("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.JSONEq(t, `{"ready":false,"checks":[{"name":"kafka","ok":false,"durationMs":0}]}`, zeroDurations(t, body))
	code, body = get("/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `errata_consumer_records_total{group="errata.projector.serving",topic="errata.posts"} 5`)
}

// zeroDurations blanks the measured durations of a readiness body.
func zeroDurations(t *testing.T, body string) string {
	t.Helper()
	var rep ops.Report
	require.NoError(t, json.Unmarshal([]byte(body), &rep))
	for i := range rep.Checks {
		rep.Checks[i].DurationMS = 0
	}
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	return string(b)
}

func TestHTTPCheck(t *testing.T) {
	t.Parallel()
	var gotUser, gotPass, gotPath string
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		gotPath = r.URL.Path
		if r.URL.Path == "/ch/ping" {
			_, _ = w.Write([]byte("Ok.\n"))
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer svc.Close()
	u := strings.Replace(svc.URL, "http://", "http://user:pw@", 1)
	require.NoError(t, ops.HTTPCheck("clickhouse", u+"/ch/", "/ping").Run(context.Background()))
	require.Equal(t, "user", gotUser)
	require.Equal(t, "pw", gotPass)
	require.Equal(t, "/ch/ping", gotPath)
	require.ErrorContains(t, ops.HTTPCheck("elasticsearch", svc.URL, "/").Run(context.Background()), "answered 500")
	err := ops.HTTPCheck("clickhouse", "clickhouse://127.0.0.1:1", "/ping").Run(context.Background())
	require.Error(t, err, "a native URL is checked by dialing it")
}
