// Package fakeopenai is a scripted fake of the OpenAI HTTP API for tests
// and local development: POST /v1/responses (Responses API), POST
// /v1/chat/completions (Chat Completions) and GET /v1/models, on a real
// listener bound to 127.0.0.1.
//
// A script is a queue of Steps per endpoint, consumed in order; when a
// queue is empty, a handler function (HandleFunc) decides from the request;
// without one the fake answers 500 with code "fake_unscripted". A Step is a
// reply built from Go values in the real wire format (Reply, ChatReply), an
// OpenAI error (Fail, RateLimit), or raw bytes (Raw), optionally delayed,
// cut off mid-body or dropped (WithDelay, Truncated, CutConnection,
// Disconnect).
//
// Every request is recorded (headers and exact body) before the step runs,
// so tests can assert what was sent even when the client gave up. Requests
// the real API would reject (see SetValidation) get its 400 answer without
// consuming a step.
//
// Replies echo the request the way the real API does (model, instructions,
// tools, tool_choice, previous_response_id, metadata, ...), ids are
// deterministic per server (resp_fake_0001, msg_fake_0002, ...), and usage
// is derived from the sizes when a step gives none.
package fakeopenai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Endpoint is a scripted API path.
type Endpoint string

// The endpoints the fake serves.
const (
	Responses       Endpoint = "/v1/responses"
	ChatCompletions Endpoint = "/v1/chat/completions"
	Models          Endpoint = "/v1/models"
)

// Request is one recorded request.
type Request struct {
	Seq      int // 1-based, across endpoints
	Endpoint Endpoint
	Method   string
	Path     string
	Header   http.Header
	Body     []byte
	Time     time.Time
}

// JSON decodes the body into a generic map (nil when it is not an object).
func (r Request) JSON() map[string]any {
	var m map[string]any
	if json.Unmarshal(r.Body, &m) != nil {
		return nil
	}
	return m
}

// Decode decodes the body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a running fake.
type Server struct {
	// URL is the API base URL including /v1 (what OPENAI_BASE_URL takes).
	URL string
	// Addr is the listening host:port.
	Addr string

	ts      *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu       sync.Mutex
	queues   map[Endpoint][]Step
	handlers map[Endpoint]func(Request) Step
	requests []Request
	apiKey   string
	models   []string
	// stored maps the ids of Responses replies to their function call ids
	// (for previous_response_id checks).
	stored       map[string][]string
	noValidation bool
	seq          int
	ids          int
	// created is the created_at / created time of replies (fixed, so
	// replies are reproducible).
	created int64
	// search answers GET /search (outside /v1) once a script plays: the
	// script's SearXNG stand-in (Script.SearchHandler); nil: 404.
	search http.Handler
}

// SearchURL is the base URL of the SearXNG stand-in that a playing script
// serves on the same port (ERRATA_SEARCH_PROVIDER=searxng takes it as
// ERRATA_SEARCH_BASE_URL).
func (s *Server) SearchURL() string { return s.ts.URL }

// TB is the part of testing.TB that NewForTest needs (the package does not
// import testing, so dev commands can use it too).
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// New starts a fake on 127.0.0.1 with a free port. It panics if it cannot
// listen (like httptest.NewServer).
func New() *Server {
	s, err := Start("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	return s
}

// NewForTest starts a fake that is closed when the test ends.
func NewForTest(t TB) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("fakeopenai: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake on addr (host:port; port 0 picks a free one), for
// development commands that need a stable address. Only loopback hosts
// are accepted.
func Start(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("fakeopenai: %q is not a loopback address", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		closing:  make(chan struct{}),
		queues:   map[Endpoint][]Step{},
		handlers: map[Endpoint]func(Request) Step{},
		models:   []string{"gpt-5", "gpt-5-mini", "gpt-4.1"},
		stored:   map[string][]string{},
		created:  1767225600, // 2026-01-01T00:00:00Z
	}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	_ = s.ts.Listener.Close()
	s.ts.Listener = l
	s.ts.Start()
	s.Addr = l.Addr().String()
	s.URL = s.ts.URL + "/v1"
	return s, nil
}

// Close stops the fake, abandoning delayed steps.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
}

// Enqueue appends steps to an endpoint's script.
func (s *Server) Enqueue(ep Endpoint, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[ep] = append(s.queues[ep], steps...)
}

// HandleFunc sets the function that answers an endpoint once its queue is
// empty (nil removes it).
func (s *Server) HandleFunc(ep Endpoint, f func(Request) Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.handlers, ep)
		return
	}
	s.handlers[ep] = f
}

// Pending is the number of queued steps not yet used.
func (s *Server) Pending(ep Endpoint) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queues[ep])
}

// RequireAPIKey makes every endpoint answer 401 (in OpenAI's shape) unless
// the request carries "Authorization: Bearer <key>". Empty: no check.
func (s *Server) RequireAPIKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apiKey = key
}

// SetModels sets the ids GET /v1/models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// Requests returns every recorded request, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsTo returns the recorded requests of one endpoint.
func (s *Server) RequestsTo(ep Endpoint) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Endpoint == ep {
			out = append(out, r)
		}
	}
	return out
}

// LastRequest returns the latest request to ep (false when none).
func (s *Server) LastRequest(ep Endpoint) (Request, bool) {
	rs := s.RequestsTo(ep)
	if len(rs) == 0 {
		return Request{}, false
	}
	return rs[len(rs)-1], true
}

// nextID returns a deterministic id with the given prefix.
func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_fake_%04d", prefix, s.ids)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/search" {
		s.mu.Lock()
		search := s.search
		s.mu.Unlock()
		if search != nil {
			search.ServeHTTP(w, r)
			return
		}
	}
	body, _ := io.ReadAll(r.Body)
	ep := Endpoint(r.URL.Path)
	s.mu.Lock()
	s.seq++
	req := Request{Seq: s.seq, Endpoint: ep, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Time: time.Now()}
	s.requests = append(s.requests, req)
	apiKey := s.apiKey
	s.mu.Unlock()

	known := map[Endpoint]string{Responses: http.MethodPost, ChatCompletions: http.MethodPost, Models: http.MethodGet}
	method, ok := known[ep]
	if !ok || r.Method != method {
		s.write(w, r, req, Fail(http.StatusNotFound, APIError{Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}))
		return
	}
	if apiKey != "" {
		if step, bad := authFailure(r.Header.Get("Authorization"), apiKey); bad {
			s.write(w, r, req, step)
			return
		}
	}
	if method == http.MethodPost {
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(body, &probe); err != nil {
			s.write(w, r, req, Fail(http.StatusBadRequest, APIError{Type: "invalid_request_error",
				Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)"}))
			return
		}
		if string(probe["stream"]) == "true" {
			s.write(w, r, req, Fail(http.StatusBadRequest, APIError{Type: "invalid_request_error", Param: "stream", Code: "fake_unsupported",
				Message: "fakeopenai does not stream"}))
			return
		}
		if st := s.validate(ep, body); st != nil {
			s.write(w, r, req, *st)
			return
		}
	}
	s.write(w, r, req, s.next(ep, req))
}

// next picks the step for a request: the queue, then the handler, then the
// built-in answer (models) or the unscripted error.
func (s *Server) next(ep Endpoint, req Request) Step {
	s.mu.Lock()
	if q := s.queues[ep]; len(q) > 0 {
		s.queues[ep] = q[1:]
		s.mu.Unlock()
		return q[0]
	}
	h := s.handlers[ep]
	models := append([]string(nil), s.models...)
	s.mu.Unlock()
	if h != nil {
		return h(req)
	}
	if ep == Models {
		return modelsReply(models)
	}
	return Fail(http.StatusInternalServerError, APIError{Type: "server_error", Code: "fake_unscripted",
		Message: fmt.Sprintf("fakeopenai: no scripted reply for %s %s (request %d)", req.Method, req.Path, req.Seq)})
}

func authFailure(header, key string) (Step, bool) {
	got, found := strings.CutPrefix(header, "Bearer ")
	switch {
	case header == "":
		return Fail(http.StatusUnauthorized, APIError{Type: "invalid_request_error",
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."}), true
	case !found || got != key:
		return Fail(http.StatusUnauthorized, APIError{Type: "invalid_request_error", Code: "invalid_api_key",
			Message: "Incorrect API key provided: " + MaskKey(got) + ". You can find your API key at https://platform.openai.com/account/api-keys."}), true
	}
	return Step{}, false
}

// MaskKey masks a key the way OpenAI's 401 message does: its first three
// and last four characters around asterisks.
func MaskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, req Request, step Step) {
	if step.delay > 0 {
		t := time.NewTimer(step.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	if step.disconnect {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
			}
		}
		return
	}
	var body []byte
	if step.body != nil {
		body = step.body(s, req)
	}
	status := step.status
	if status == 0 {
		status = http.StatusOK
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-Request-Id", fmt.Sprintf("req_fake_%04d", req.Seq))
	h.Set("Openai-Version", "2020-10-01")
	h.Set("Openai-Processing-Ms", "1")
	for k, vs := range step.header {
		h[k] = vs
	}
	if step.cut {
		n := min(step.cutAt, len(body))
		if hj, ok := w.(http.Hijacker); ok {
			if conn, buf, err := hj.Hijack(); err == nil {
				fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
				h.Set("Content-Length", fmt.Sprint(len(body)))
				_ = h.Write(buf)
				_, _ = buf.WriteString("\r\n")
				_, _ = buf.Write(body[:n])
				_ = buf.Flush()
				_ = conn.Close()
			}
		}
		return
	}
	for k, vs := range h {
		w.Header()[k] = vs
	}
	if step.truncate {
		n := min(step.truncateAt, len(body))
		w.WriteHeader(status)
		_, _ = io.Copy(w, bytes.NewReader(body[:n]))
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
