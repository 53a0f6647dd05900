package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testExtensionVersion is what the current extension sends.
const testExtensionVersion = "0.3.3"

// fakeIngest records calls and returns fixed answers.
type fakeIngest struct {
	mu         sync.Mutex
	registered ingest.Registered
	err        error
	registers  []*ingest.RegisterInput
	views      []string // post version ids
	callers    []ingest.Caller
}

func (f *fakeIngest) Register(_ context.Context, in *ingest.RegisterInput, c ingest.Caller) (ingest.Registered, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registers = append(f.registers, in)
	f.callers = append(f.callers, c)
	return f.registered, f.err
}

func (f *fakeIngest) RecordView(_ context.Context, _, postVersionID, _, _ string, c ingest.Caller) (producers.Position, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.views = append(f.views, postVersionID)
	f.callers = append(f.callers, c)
	return producers.Position{Topic: "posts", Partition: 0, Offset: int64(len(f.views))}, f.err
}

func (f *fakeIngest) calls() (registers, views int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.registers), len(f.views)
}

// fakeReader serves versions, keys and batch statuses from maps.
type fakeReader struct {
	mu       sync.Mutex
	versions map[string]serving.VersionStatus
	// keys maps sha256 of active keys to true, of revoked keys to false.
	keys map[string]bool
	// complete maps BatchKeys with a COMPLETE investigation to their claim count.
	complete   map[serving.BatchKey]int
	err        error
	keyLookups int
	batches    [][]serving.BatchKey
}

func newFakeReader() *fakeReader {
	return &fakeReader{versions: map[string]serving.VersionStatus{}, keys: map[string]bool{}, complete: map[serving.BatchKey]int{}}
}

func (f *fakeReader) VersionStatusByID(_ context.Context, id string) (serving.VersionStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return serving.VersionStatus{}, f.err
	}
	v, ok := f.versions[strings.ToLower(id)]
	if !ok {
		return serving.VersionStatus{}, serving.ErrNotFound
	}
	return v, nil
}

func (f *fakeReader) ActiveAPIKey(_ context.Context, sha string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keyLookups++
	if f.err != nil {
		return false, f.err
	}
	return f.keys[sha], nil
}

func (f *fakeReader) BatchStatuses(_ context.Context, keys []serving.BatchKey) ([]serving.BatchStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, keys)
	if f.err != nil {
		return nil, f.err
	}
	out := make([]serving.BatchStatus, len(keys))
	for i, k := range keys {
		if n, ok := f.complete[k]; ok {
			out[i] = serving.BatchStatus{Investigated: true, IncorrectClaimCount: n}
		}
	}
	return out, nil
}

// setInvestigation sets the investigation status of the fixed version.
func (f *fakeReader) setInvestigation(status string, verified bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.versions[fixedRegistration.PostVersionID]
	v.InvestigationStatus, v.InvestigationID = status, ""
	if status != "" {
		v.InvestigationID = "7e57c0de-0000-5000-8000-000000000001"
	}
	v.ServerVerifiedAt = nil
	if verified {
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		v.ServerVerifiedAt = &at
	}
	f.versions[fixedRegistration.PostVersionID] = v
}

// fakeWatermark is always caught up.
type fakeWatermark struct{}

func (fakeWatermark) WaitFor(context.Context, string, int32, int64, time.Duration) error { return nil }

// fixedRegistration is what the fake ingest answers registerObservedVersion with.
var fixedRegistration = ingest.Registered{
	Platform:      "X",
	ExternalID:    "1790000000000000000",
	VersionHash:   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	PostVersionID: "4a1b7c52-2f0e-5b6e-8d1a-3c9e0f7b2d44",
	Provenance:    "CLIENT_FALLBACK",
	Position:      producers.Position{Topic: "posts", Partition: 2, Offset: 7},
}

// unreachableOpenAI is a provider base URL nothing listens on (port 9 on
// loopback), so no test can reach beyond 127.0.0.1 by accident.
const unreachableOpenAI = "http://127.0.0.1:9/v1"

// newFakeServer builds the API over fakes, for cases that are pure HTTP.
func newFakeServer(t testing.TB) (*Server, *fakeIngest) {
	s, fi, _ := newFakeServerWith(t, Config{})
	return s, fi
}

// newFakeServerWith builds the API over fakes with cfg's OpenAI settings
// (the provider defaults to unreachableOpenAI) and returns the fake reader.
func newFakeServerWith(t testing.TB, cfg Config) (*Server, *fakeIngest, *fakeReader) {
	t.Helper()
	fi := &fakeIngest{registered: fixedRegistration}
	reader := newFakeReader()
	reader.versions[fixedRegistration.PostVersionID] = serving.VersionStatus{Version: serving.Version{
		ID: fixedRegistration.PostVersionID, PostID: "5d0f3a9e-1111-5222-8333-444455556666",
		Platform: "X", ExternalID: fixedRegistration.ExternalID, VersionHash: fixedRegistration.VersionHash,
	}}
	cfg.MinExtensionVersion = "0.2.0"
	cfg.ReadYourWritesTimeout = time.Second
	if cfg.OpenAIBaseURL == "" {
		cfg.OpenAIBaseURL = unreachableOpenAI
	}
	s, err := New(cfg, fi, reader, fakeWatermark{}, ingest.NewHasher("test-hash-secret-0123456789"), testLogger(t))
	require.NoError(t, err)
	return s, fi, reader
}

// testLogger logs warnings and errors through t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// request describes one HTTP call to the API.
type request struct {
	method  string
	path    string
	body    []byte
	headers map[string]string
	// noVersion omits the extension version header.
	noVersion bool
}

// response is a decoded answer.
type response struct {
	status  int
	body    []byte
	headers http.Header
}

// header is the value of a response header.
func (r response) header(name string) string { return r.headers.Get(name) }

func do(t testing.TB, s *Server, r request) response {
	t.Helper()
	var body io.Reader = http.NoBody
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	req := httptest.NewRequest(method, r.path, body)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if !r.noVersion {
		req.Header.Set(HeaderExtensionVersion, testExtensionVersion)
	}
	for k, v := range r.headers {
		req.Header.Set(k, v)
	}
	var resp *http.Response
	var err error
	if len(r.body) > MaxBodyBytes {
		resp = declareOversized(t, s, req)
	} else {
		resp, err = s.App().Test(req, -1)
		require.NoError(t, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, body: b, headers: resp.Header}
}

// declareOversized sends req's headers, declaring its oversized body in
// Content-Length, over a real socket and reads the answer. fasthttp rejects
// the request on the declared length before reading the body, answers, and
// closes the connection; sending the body as well would race that close
// (the client sees a reset), and app.Test fails on the error ServeConn
// returns after answering.
func declareOversized(t testing.TB, s *Server, req *http.Request) *http.Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", listen(t, s), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	var head bytes.Buffer
	fmt.Fprintf(&head, "%s %s HTTP/1.1\r\nHost: errata.test\r\nContent-Length: %d\r\n", req.Method, req.URL.RequestURI(), req.ContentLength)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&head, "%s: %s\r\n", k, v)
		}
	}
	head.WriteString("\r\n")
	_, err = conn.Write(head.Bytes())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	require.NoError(t, err)
	return resp
}

var listening sync.Map // *Server -> host:port

// listen serves s on a loopback port until the test ends and returns the address.
func listen(t testing.TB, s *Server) string {
	t.Helper()
	if addr, ok := listening.Load(s); ok {
		return addr.(string)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.App().Listener(ln) }()
	t.Cleanup(func() {
		require.NoError(t, s.App().ShutdownWithTimeout(5*time.Second))
		require.NoError(t, <-done)
		listening.Delete(s)
	})
	listening.Store(s, ln.Addr().String())
	return ln.Addr().String()
}

func post(t testing.TB, s *Server, procedure string, body []byte) response {
	t.Helper()
	return do(t, s, request{path: "/trpc/" + procedure, body: body})
}

var jsonInteger = regexp.MustCompile(`^-?[0-9]+$`)

// errorEnvelopeOf checks that r is a well-formed tRPC error envelope and
// returns its data object. code must be a JSON number (the client cannot
// read a string), and data.httpStatus must equal the HTTP status.
func errorEnvelopeOf(t testing.TB, r response) (message string, rpcCode int, data map[string]any) {
	t.Helper()
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.body, &top), "body: %s", r.body)
	require.Len(t, top, 1, "only an error key: %s", r.body)
	var e map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(top["error"], &e), "body: %s", r.body)
	require.ElementsMatch(t, []string{"message", "code", "data"}, keys(e), "body: %s", r.body)
	require.Regexp(t, jsonInteger, string(e["code"]), "code must be a JSON number")
	require.NoError(t, json.Unmarshal(e["message"], &message))
	require.NoError(t, json.Unmarshal(e["code"], &rpcCode))
	require.NoError(t, json.Unmarshal(e["data"], &data))
	var status int
	require.NoError(t, json.Unmarshal(mustRaw(t, data["httpStatus"]), &status))
	require.Equal(t, r.status, status, "HTTP status must match data.httpStatus: %s", r.body)
	return message, rpcCode, data
}

// expectError asserts r is the error envelope of name (with the contract's
// numbers) for path and returns the data object.
func expectError(t testing.TB, r response, name, path string) map[string]any {
	t.Helper()
	want := map[string]struct{ rpc, http int }{
		"PARSE_ERROR": {-32700, 400}, "BAD_REQUEST": {-32600, 400}, "UNAUTHORIZED": {-32001, 401},
		"FORBIDDEN": {-32003, 403}, "NOT_FOUND": {-32004, 404}, "PRECONDITION_FAILED": {-32012, 412},
		"PAYLOAD_TOO_LARGE": {-32013, 413}, "TOO_MANY_REQUESTS": {-32029, 429}, "INTERNAL_SERVER_ERROR": {-32603, 500},
		"CONFLICT": {-32009, 409},
	}[name]
	require.NotZero(t, want.rpc, "unknown code %s", name)
	require.Equal(t, want.http, r.status, "body: %s", r.body)
	msg, rpc, data := errorEnvelopeOf(t, r)
	require.NotEmpty(t, msg)
	require.Equal(t, want.rpc, rpc)
	require.Equal(t, name, data["code"])
	require.Equal(t, path, data["path"])
	return data
}

// resultOf checks a success envelope and returns the raw output.
func resultOf(t testing.TB, r response) json.RawMessage {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var top map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.body, &top), "body: %s", r.body)
	require.Len(t, top, 1, "body: %s", r.body)
	require.Contains(t, top, "result")
	require.Len(t, top["result"], 1, "body: %s", r.body)
	require.Contains(t, top["result"], "data")
	return top["result"]["data"]
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustRaw(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, append(bytes.TrimRight(got, "\n"), '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file (run go test ./api -run Golden -update)")
	require.Equal(t, string(bytes.TrimRight(want, "\n")), string(bytes.TrimRight(got, "\n")))
}
