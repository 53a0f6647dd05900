package ops_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
)

// countingIngest counts the requests that reach a handler; the edge cases
// below must never get that far.
type countingIngest struct{ calls atomic.Int32 }

func (c *countingIngest) Register(context.Context, *ingest.RegisterInput, ingest.Caller) (ingest.Registered, error) {
	c.calls.Add(1)
	return ingest.Registered{}, errors.New("not registered in this test")
}

func (c *countingIngest) RecordView(context.Context, string, string, string, string, ingest.Caller) (producers.Position, error) {
	c.calls.Add(1)
	return producers.Position{}, errors.New("not recorded in this test")
}

// edge is the API as `errata serve` runs it (the operations surface
// mounted), on a real loopback listener, with its log and metrics.
type edge struct {
	addr   string
	logs   *syncBuffer
	ingest *countingIngest
	// gather renders the samples of the named counters, one per line.
	gather func(t *testing.T, names ...string) string
}

func newEdge(t *testing.T, readTimeout, idleTimeout time.Duration) *edge {
	t.Helper()
	logs := &syncBuffer{}
	log, err := logging.New(logs, "json", "debug")
	require.NoError(t, err)
	reg := metrics.NewRegistry()
	httpMetrics := metrics.NewHTTP(reg)
	ready := ops.NewReadiness(nil, time.Second, log)
	in := &countingIngest{}
	srv, err := api.New(api.Config{MinExtensionVersion: "0.2.0", OpenAIBaseURL: "http://127.0.0.1:9/v1",
		ReadTimeout: readTimeout, IdleTimeout: idleTimeout},
		in, noKeys{}, nil, ingest.NewHasher("a-test-hash-secret-long-enough"), log,
		api.WithRoutes(func(app *fiber.App) { ops.Mount(app, httpMetrics, ready, log) }), api.WithListener(ops.RequestLines))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return &edge{addr: ln.Addr().String(), logs: logs, ingest: in,
		gather: func(t *testing.T, names ...string) string {
			t.Helper()
			mfs, err := reg.Gather()
			require.NoError(t, err)
			var b strings.Builder
			for _, mf := range mfs {
				for _, n := range names {
					if mf.GetName() != n {
						continue
					}
					for _, m := range mf.GetMetric() {
						labels := map[string]string{}
						for _, l := range m.GetLabel() {
							labels[l.GetName()] = l.GetValue()
						}
						fmt.Fprintf(&b, "%s{route=%q,method=%q,code=%q} %v\n", n, labels["route"], labels["method"], labels["code"], m.GetCounter().GetValue())
					}
				}
			}
			return b.String()
		}}
}

// lines returns the JSON log lines, failing on any that is not JSON.
func (e *edge) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(e.logs.String()))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	return out
}

// requireNoError fails on any ERROR (or WARN) log line.
func (e *edge) requireNoError(t *testing.T) {
	t.Helper()
	for _, l := range e.lines(t) {
		require.NotContains(t, []string{"ERROR", "WARN"}, l["level"], "a client's fault is not the server's error: %v", l)
	}
}

// refused returns the request lines of refused requests.
func (e *edge) refused(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range e.lines(t) {
		if l["msg"] == "request" && l["route"] == ops.RouteRefused {
			out = append(out, l)
		}
	}
	return out
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	return conn
}

// answer reads one response from the connection.
type answer struct {
	status int
	header http.Header
	body   string
}

func readAnswer(t *testing.T, r *bufio.Reader) answer {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// requireClosed asserts the server closed the connection with nothing more
// to say.
func requireClosed(t *testing.T, r *bufio.Reader) {
	t.Helper()
	rest, err := io.ReadAll(r)
	require.NoError(t, err, "the server closes the connection")
	require.Empty(t, string(rest), "nothing follows the answer")
}

// envelope decodes a tRPC error envelope.
func envelope(t *testing.T, a answer) (code string, httpStatus float64, path, message string) {
	t.Helper()
	var env struct {
		Error struct {
			Message string         `json:"message"`
			Code    int            `json:"code"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &env), a.body)
	return env.Error.Data["code"].(string), env.Error.Data["httpStatus"].(float64), env.Error.Data["path"].(string), env.Error.Message
}

const registerPath = "/trpc/post.registerObservedVersion"

// TestSlowClientsGet408WithoutAnError: clients that trickle their headers
// or body, or send nothing at all, get 408 TIMEOUT once the read timeout
// passes and are disconnected; an idle keep-alive connection is closed
// silently. Nothing reaches a handler, no line is logged at ERROR, and each
// refusal is one request line with its real path.
func TestSlowClientsGet408WithoutAnError(t *testing.T) {
	t.Parallel()
	const readTimeout = time.Second
	e := newEdge(t, readTimeout, 700*time.Millisecond)

	const slow = 5
	var wg sync.WaitGroup
	answers := make(chan struct {
		kind string
		a    answer
		took time.Duration
	}, 2*slow+1)
	run := func(kind string, send func(conn net.Conn) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := dial(t, e.addr)
			start := time.Now()
			go func() { _ = send(conn) }()
			r := bufio.NewReader(conn)
			a := readAnswer(t, r)
			took := time.Since(start)
			requireClosed(t, r)
			answers <- struct {
				kind string
				a    answer
				took time.Duration
			}{kind, a, took}
		}()
	}
	trickle := func(conn net.Conn, first string, each string) error {
		if _, err := io.WriteString(conn, first); err != nil {
			return err
		}
		for i := 0; ; i++ {
			time.Sleep(150 * time.Millisecond)
			if _, err := io.WriteString(conn, fmt.Sprintf(each, i)); err != nil {
				return err
			}
		}
	}
	for range slow {
		run("headers", func(conn net.Conn) error {
			return trickle(conn, "POST "+registerPath+" HTTP/1.1\r\nHost: errata.test\r\n", "X-Slow-%d: a\r\n")
		})
		run("body", func(conn net.Conn) error {
			return trickle(conn, "POST "+registerPath+" HTTP/1.1\r\nHost: errata.test\r\nContent-Type: application/json\r\n"+
				"X-Openerrata-Extension-Version: 0.3.3\r\nContent-Length: 4096\r\n\r\n{", "%d")
		})
	}
	run("silent", func(net.Conn) error { return nil })
	wg.Wait()
	close(answers)
	kinds := map[string]int{}
	for got := range answers {
		kinds[got.kind]++
		require.Equal(t, http.StatusRequestTimeout, got.a.status, "%s: %s", got.kind, got.a.body)
		require.GreaterOrEqual(t, got.took, readTimeout-100*time.Millisecond, got.kind)
		require.Less(t, got.took, readTimeout+2*time.Second, got.kind)
		code, status, path, msg := envelope(t, got.a)
		require.Equal(t, "TIMEOUT", code)
		require.Equal(t, float64(http.StatusRequestTimeout), status)
		require.Equal(t, "the request was not received in time", msg)
		if got.kind != "silent" {
			require.Equal(t, "post.registerObservedVersion", path)
		}
		require.NotEmpty(t, got.a.header.Get(ops.HeaderRequestID))
	}
	require.Equal(t, map[string]int{"headers": slow, "body": slow, "silent": 1}, kinds)

	// A keep-alive connection without a next request is closed, unanswered.
	conn := dial(t, e.addr)
	_, err := io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: errata.test\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	require.Equal(t, http.StatusOK, readAnswer(t, r).status)
	start := time.Now()
	requireClosed(t, r)
	require.Less(t, time.Since(start), 3*time.Second)

	require.Zero(t, e.ingest.calls.Load(), "no slow request reached a handler")
	e.requireNoError(t)
	lines := e.refused(t)
	require.Len(t, lines, 2*slow+1, e.logs.String())
	paths := map[string]int{}
	for _, l := range lines {
		require.Equal(t, "INFO", l["level"])
		require.Equal(t, float64(http.StatusRequestTimeout), l["status"])
		p, _ := l["path"].(string)
		paths[p+" "+l["method"].(string)+" "+l["reason"].(string)]++
	}
	require.Equal(t, map[string]int{
		registerPath + " POST request not received in time": 2 * slow,
		" - no request line in time":                        1,
	}, paths)
	require.Equal(t, fmt.Sprintf(
		"errata_http_requests_total{route=%q,method=%q,code=%q} %d\n"+
			"errata_http_requests_total{route=%q,method=%q,code=%q} %d\n"+
			"errata_http_requests_total{route=%q,method=%q,code=%q} %d\n",
		"/health", "GET", "200", 1, ops.RouteRefused, "-", "408", 1, ops.RouteRefused, "POST", "408", 2*slow),
		e.gather(t, "errata_http_requests_total"))
}

// TestAmbiguousFramingIs400: Content-Length twice (equal or not) or next
// to Transfer-Encoding gets 400 at once, without reading a body by either
// length, and the connection is closed, so a request smuggled behind it is
// never read. Refusals are logged at info with the real path.
func TestAmbiguousFramingIs400(t *testing.T) {
	t.Parallel()
	e := newEdge(t, 5*time.Second, 5*time.Second)
	head := "POST " + registerPath + " HTTP/1.1\r\nHost: errata.test\r\nContent-Type: application/json\r\n" +
		"X-Openerrata-Extension-Version: 0.3.3\r\n"
	smuggled := "GET /health HTTP/1.1\r\nHost: errata.test\r\n\r\n"
	for _, tc := range []struct {
		name, raw, message string
	}{
		{"same length twice", head + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}" + smuggled, "Content-Length is given more than once"},
		{"lengths differ, smuggling", head + "Content-Length: 0\r\ncontent-length: 44\r\n\r\n" + smuggled, "Content-Length is given more than once"},
		{"longer length first", head + "Content-Length: 4000\r\nContent-Length: 2\r\n\r\n{}" + smuggled, "Content-Length is given more than once"},
		{"length and chunked", head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, "Content-Length and Transfer-Encoding are both given"},
		{"chunked and length", head + "Transfer-Encoding: chunked\r\nContent-Length: 44\r\n\r\n0\r\n\r\n" + smuggled, "Content-Length and Transfer-Encoding are both given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := dial(t, e.addr)
			start := time.Now()
			_, err := io.WriteString(conn, tc.raw)
			require.NoError(t, err)
			r := bufio.NewReader(conn)
			a := readAnswer(t, r)
			require.Less(t, time.Since(start), 2*time.Second, "answered at once, not after waiting for a body")
			require.Equal(t, http.StatusBadRequest, a.status, a.body)
			code, status, path, msg := envelope(t, a)
			require.Equal(t, "BAD_REQUEST", code)
			require.Equal(t, float64(http.StatusBadRequest), status)
			require.Equal(t, "post.registerObservedVersion", path)
			require.Equal(t, tc.message, msg)
			requireClosed(t, r)
		})
	}
	require.Zero(t, e.ingest.calls.Load(), "no ambiguous request reached a handler")
	e.requireNoError(t)
	lines := e.refused(t)
	require.Len(t, lines, 5, e.logs.String())
	for _, l := range lines {
		require.Equal(t, "INFO", l["level"])
		require.Equal(t, float64(http.StatusBadRequest), l["status"])
		require.Equal(t, registerPath, l["path"])
		require.Equal(t, "POST", l["method"])
	}
	require.Equal(t, fmt.Sprintf("errata_http_requests_total{route=%q,method=%q,code=%q} %d\n", ops.RouteRefused, "POST", "400", 5),
		e.gather(t, "errata_http_requests_total"), "the smuggled /health requests were never answered")

	// A single Content-Length still works.
	conn := dial(t, e.addr)
	_, err := io.WriteString(conn, head+"Content-Length: 2\r\n\r\n{}")
	require.NoError(t, err)
	a := readAnswer(t, bufio.NewReader(conn))
	require.Equal(t, http.StatusBadRequest, a.status, a.body)
	code, _, _, _ := envelope(t, a)
	require.Equal(t, "BAD_REQUEST", code, "the procedure's own validation answers")
}

// TestRefusedRequestsLogTheirRealPath: a body or headers over the limits,
// and a malformed header, are refused by the HTTP server itself; the
// request line names the path the client asked for (never its query) and
// nothing is logged at ERROR.
func TestRefusedRequestsLogTheirRealPath(t *testing.T) {
	t.Parallel()
	e := newEdge(t, 5*time.Second, 5*time.Second)
	for _, tc := range []struct {
		name, raw string
		status    int
		code      string
		reason    string
	}{
		{"body too large", fmt.Sprintf("POST %s?token=%s HTTP/1.1\r\nHost: errata.test\r\nContent-Length: %d\r\n\r\n", registerPath, queryToken, api.MaxBodyBytes+1),
			http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "body too large"},
		{"headers too large", fmt.Sprintf("GET /trpc/post.batchStatus?token=%s HTTP/1.1\r\nHost: errata.test\r\nX-Big: %s\r\n\r\n", queryToken, strings.Repeat("a", api.MaxHeaderBytes+1024)),
			http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "request line and headers too large"},
		{"space before colon", fmt.Sprintf("GET /trpc/post.getInvestigation?token=%s HTTP/1.1\r\nHost: errata.test\r\nX-Bad : %s\r\n\r\n", queryToken, instanceKey),
			http.StatusBadRequest, "BAD_REQUEST", `error when reading request headers: invalid header key "X-Bad ". Buffer size=`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := dial(t, e.addr)
			_, err := io.WriteString(conn, tc.raw)
			require.NoError(t, err)
			r := bufio.NewReader(conn)
			a := readAnswer(t, r)
			require.Equal(t, tc.status, a.status, a.body)
			code, _, _, msg := envelope(t, a)
			require.Equal(t, tc.code, code)
			require.NotContains(t, msg, instanceKey, "the answer does not quote the request")
		})
	}
	e.requireNoError(t)
	got := map[string]string{}
	for _, l := range e.refused(t) {
		got[l["path"].(string)] = fmt.Sprintf("%v %v", l["status"], l["reason"])
	}
	require.Len(t, got, 3, e.logs.String())
	require.Equal(t, "413 body too large", got[registerPath])
	require.Equal(t, "413 request line and headers too large", got["/trpc/post.batchStatus"])
	require.Contains(t, got["/trpc/post.getInvestigation"], `400 error when reading request headers: invalid header key "X-Bad ". Buffer size=`)
	out := e.logs.String()
	require.NotContains(t, out, queryToken, "never the query")
	require.NotContains(t, out, instanceKey, "never a header value")
}
