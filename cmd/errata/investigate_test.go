package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// tweet is the post the end-to-end investigations read.
const tweet = "Fun fact: the Eiffel Tower was completed in 1925, long after the World's Fair it was built for."

const tweetClaim = "the Eiffel Tower was completed in 1925"

// stack runs `errata serve` and `errata worker` against private topics and
// a fresh database, with the scripted fake as the LLM provider.
type stack struct {
	rig     *workerRig
	env     []string
	base    string
	logDir  string
	fake    *fakeopenai.Server
	turns   atomic.Int32 // stage-1 requests
	delay   atomic.Int64 // delay of the first stage-1 turn, ns
	worker  *process
	api     *process
	dbURL   string
	prefix  string
	brokers []string
}

func newStack(t *testing.T, ctx context.Context, extra ...string) *stack {
	t.Helper()
	s := &stack{fake: fakeopenai.NewForTest(t), logDir: t.TempDir()}
	ring := make([]byte, 32)
	_, _ = rand.Read(ring)
	addr := freeAddr(t)
	s.base = "http://" + addr
	env := append([]string{
		"ERRATA_HTTP_ADDR=" + addr,
		"ERRATA_SERVER_VERIFICATION=false",
		"OPENAI_BASE_URL=" + s.fake.URL,
		"OPENAI_API_KEY=",
		"ERRATA_KEYSTORE_KEYS=k1:" + base64.StdEncoding.EncodeToString(ring),
		"ERRATA_INVESTIGATION_RETRY_BASE=100ms",
		"ERRATA_WORK_LEASE_TTL=2s",
		"ERRATA_BLOBSTORE_URL=" + filepath.Join(t.TempDir(), "blobs"),
		"ERRATA_LOG_LEVEL=debug",
		"ERRATA_INVESTIGATOR_MODEL=gpt-test",
		"ERRATA_VALIDATOR_MODEL=gpt-test",
	}, extra...)
	s.rig = newWorkerRig(t, ctx, 10, env...)
	s.env = s.rig.env
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "ERRATA_DATABASE_URL":
			s.dbURL = v
		case "ERRATA_KAFKA_TOPIC_PREFIX":
			s.prefix = v
		case "ERRATA_KAFKA_BROKERS":
			s.brokers = strings.Split(v, ",")
		}
	}
	s.fake.HandleFunc(fakeopenai.Responses, s.answer)
	return s
}

// answer plays the models: stage 1 submits one claim, then ends; the
// validator approves it; the stance step finds every passage refuting it,
// so its tier-1 and tier-2 sources pass the strict evidence policy.
func (s *stack) answer(req fakeopenai.Request) fakeopenai.Step {
	if _, passages, ok, err := req.Stance(); ok {
		if err != nil {
			return fakeopenai.BadStanceRequest(err)
		}
		out := make([]fakeopenai.ScriptStance, len(passages))
		for i := range out {
			out[i] = fakeopenai.ScriptStance{Entail: 0.03, Contradict: 0.92, Neutral: 0.05}
		}
		return fakeopenai.StanceReply(fakeopenai.Responses, out)
	}
	body := req.JSON()
	if _, structured := body["text"]; structured {
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(
			`{"approved":true,"reason":"The tower opened in 1889 for the Exposition Universelle."}`))}})
	}
	s.turns.Add(1)
	if prev, _ := body["previous_response_id"].(string); prev != "" {
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("One claim submitted."))}})
	}
	c := tools.Correction{Text: tweetClaim, Context: tweet, Summary: "The Eiffel Tower was completed in 1889.",
		Reasoning: "The tower was finished for the 1889 Exposition Universelle.",
		Sources: []tools.Source{{URL: "https://www.toureiffel.paris/en/the-monument/history", Title: "History of the Eiffel Tower",
			Snippet: "The Eiffel Tower was built for the 1889 World's Fair."},
			{URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Title: "Eiffel Tower | Britannica",
				Snippet: "The tower was completed in 1889 for the Exposition Universelle."},
			{URL: "https://en.wikipedia.org/wiki/Eiffel_Tower", Title: "Eiffel Tower - Wikipedia",
				Snippet: "Constructed from 1887 to 1889 as the centerpiece of the 1889 World's Fair."}}}
	return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.FunctionCall("call_1", tools.SubmitCorrectionName, c)}}).
		WithDelay(time.Duration(s.delay.Load()))
}

func (s *stack) start(t *testing.T) {
	t.Helper()
	s.worker = startErrata(t, s.env, filepath.Join(s.logDir, "worker.log"), "worker")
	s.api = startErrata(t, s.env, filepath.Join(s.logDir, "serve.log"), "serve")
	t.Cleanup(func() {
		if s.worker.cmd.ProcessState == nil {
			s.worker.stop(t)
		}
		if s.api.cmd.ProcessState == nil {
			s.api.stop(t)
		}
	})
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		resp, err := http.Get(s.base + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// call runs a tRPC procedure and returns the HTTP status and result data.
func (s *stack) call(t *testing.T, method, proc string, input any, header map[string]string) (int, json.RawMessage) {
	t.Helper()
	return s.procedure(t, method, "post."+proc, input, header)
}

// procedure runs the tRPC procedure named in full (namespace.name).
func (s *stack) procedure(t *testing.T, method, name string, input any, header map[string]string) (int, json.RawMessage) {
	t.Helper()
	in, err := json.Marshal(input)
	require.NoError(t, err)
	target := s.base + "/trpc/" + name
	var body io.Reader
	if method == http.MethodGet {
		target += "?input=" + url.QueryEscape(string(in))
	} else {
		body = bytes.NewReader(in)
	}
	req, err := http.NewRequest(method, target, body)
	require.NoError(t, err)
	req.Header.Set("x-openerrata-extension-version", "0.4.0")
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env struct {
		Result struct {
			Data json.RawMessage `json:"data"`
		} `json:"result"`
	}
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(raw, &env), string(raw))
		return resp.StatusCode, env.Result.Data
	}
	return resp.StatusCode, raw
}

func (s *stack) registerTweet(t *testing.T) string {
	t.Helper()
	status, data := s.call(t, http.MethodPost, "registerObservedVersion", map[string]any{
		"platform": "X", "externalId": "1860000000000000001", "url": "https://x.com/someone/status/1860000000000000001",
		"observedContentText": tweet, "observedImageUrls": []string{}, "observedImageOccurrences": []any{},
		"metadata": map[string]any{"authorHandle": "someone", "text": tweet, "mediaUrls": []string{}},
	}, nil)
	require.Equal(t, http.StatusOK, status, string(data))
	var out struct {
		PostVersionID string `json:"postVersionId"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	return out.PostVersionID
}

// waitInvestigated polls getInvestigation, as the extension does, until
// the investigation is INVESTIGATED, and returns its claims.
func (s *stack) waitInvestigated(t *testing.T, investigationID string, timeout time.Duration) []map[string]any {
	t.Helper()
	var out struct {
		State     string           `json:"investigationState"`
		Claims    []map[string]any `json:"claims"`
		CheckedAt string           `json:"checkedAt"`
	}
	testenv.Eventually(t, timeout, func() (bool, string) {
		status, data := s.call(t, http.MethodGet, "getInvestigation", map[string]string{"investigationId": investigationID}, nil)
		if status != http.StatusOK {
			return false, string(data)
		}
		require.NoError(t, json.Unmarshal(data, &out))
		return out.State == "INVESTIGATED", string(data)
	})
	require.NotEmpty(t, out.CheckedAt)
	return out.Claims
}

// logRecords reads every record of the stack's topics.
func (s *stack) logRecords(t *testing.T) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kafka.NewClient(s.brokers, kgo.ConsumeRegex(), kgo.ConsumeTopics("^"+strings.ReplaceAll(s.prefix, ".", `\.`)+".*"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	adm := kadm.NewClient(cl)
	topics, err := adm.ListTopics(ctx)
	require.NoError(t, err)
	var names []string
	for _, d := range topics.Sorted() {
		if strings.HasPrefix(d.Topic, s.prefix) {
			names = append(names, d.Topic)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	require.NoError(t, err)
	want := map[string]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[fmt.Sprint(o.Topic, o.Partition)] = o.Offset })
	got := map[string]int64{}
	done := func() bool {
		for k, v := range want {
			if got[k] < v {
				return false
			}
		}
		return true
	}
	var out []*kgo.Record
	for !done() {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			got[fmt.Sprint(r.Topic, r.Partition)] = r.Offset + 1
			out = append(out, r)
		})
	}
	return out
}

func typeOf(r *kgo.Record) string {
	for _, h := range r.Headers {
		if h.Key == events.HeaderType {
			return string(h.Value)
		}
	}
	return ""
}

// dumpDatabase renders every row of every table of the test database.
func dumpDatabase(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	var tables [][2]string
	for rows.Next() {
		var s, n string
		require.NoError(t, rows.Scan(&s, &n))
		tables = append(tables, [2]string{s, n})
	}
	require.NoError(t, rows.Err())
	var b strings.Builder
	for _, tb := range tables {
		id := pgx.Identifier{tb[0], tb[1]}.Sanitize()
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+id+` t`)
		require.NoError(t, err)
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			b.WriteString(line + "\n")
		}
		require.NoError(t, rows.Err())
	}
	return b.String()
}

// 200 concurrent investigateNow calls for one version, paid with a user's
// OpenAI key: one investigation, one run, the claim published; the key's
// bytes appear nowhere in the log, the database or the processes' logs.
func TestInvestigateNowConcurrentWithUserKey(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := newStack(t, ctx)
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	userKey := "sk-user-" + hex.EncodeToString(secret)
	s.fake.RequireAPIKey(userKey)
	s.delay.Store(int64(300 * time.Millisecond))
	s.start(t)
	versionID := s.registerTweet(t)

	// Neither an instance key nor a user key: UNAUTHORIZED.
	status, _ := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID}, nil)
	require.Equal(t, http.StatusUnauthorized, status)

	var wg sync.WaitGroup
	ids := make([]string, 200)
	statuses := make([]int, 200)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, data := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID},
				map[string]string{"x-openai-api-key": userKey})
			statuses[i] = code
			var out struct {
				InvestigationID string `json:"investigationId"`
			}
			_ = json.Unmarshal(data, &out)
			ids[i] = out.InvestigationID
		}()
	}
	wg.Wait()
	for i := range ids {
		require.Equal(t, http.StatusOK, statuses[i])
		require.Equal(t, ids[0], ids[i])
	}
	claims := s.waitInvestigated(t, ids[0], 60*time.Second)
	require.Len(t, claims, 1)
	require.Equal(t, tweetClaim, claims[0]["text"])
	time.Sleep(500 * time.Millisecond) // let stray duplicates (there must be none) surface
	require.Equal(t, int32(2), s.turns.Load(), "one run: one stage-1 conversation of two turns")

	records := s.logRecords(t)
	counts := map[string]int{}
	for _, r := range records {
		counts[typeOf(r)]++
		require.NotContains(t, string(r.Value), userKey, "the user's key is in the log")
		for _, h := range r.Headers {
			require.NotContains(t, string(h.Value), userKey)
		}
	}
	require.Equal(t, 1, counts["investigation.attempt_started.v1"], "%v", counts)
	require.Equal(t, 1, counts["investigation.completed.v1"], "%v", counts)
	require.Equal(t, 1, counts["investigation.user_key_attached.v1"], "first key wins")
	require.GreaterOrEqual(t, counts["investigation.requested.v1"], 1)

	require.NotContains(t, dumpDatabase(t, s.dbURL), userKey)
	s.worker.stop(t)
	s.api.stop(t)
	for _, name := range []string{"worker.log", "serve.log"} {
		logs, err := os.ReadFile(filepath.Join(s.logDir, name))
		require.NoError(t, err)
		require.NotContains(t, string(logs), userKey, "the user's key is in %s", name)
		require.NotContains(t, string(logs), hex.EncodeToString(secret))
	}
}

// kill -9 of the worker while the model is answering stage 1: after a
// restart the abandoned attempt is recorded and a new one completes the
// investigation; nothing is published twice.
func TestWorkerKill9MidInvestigation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := newStack(t, ctx, "OPENAI_API_KEY="+"sk-instance-test-0123456789")
	s.fake.RequireAPIKey("sk-instance-test-0123456789")
	s.delay.Store(int64(20 * time.Second))
	s.start(t)
	versionID := s.registerTweet(t)
	key := addInstanceKey(t, s.env)
	status, data := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID},
		map[string]string{"x-api-key": key})
	require.Equal(t, http.StatusOK, status, string(data))
	var out struct {
		InvestigationID string `json:"investigationId"`
	}
	require.NoError(t, json.Unmarshal(data, &out))

	testenv.Eventually(t, 30*time.Second, func() (bool, string) { return s.turns.Load() >= 1, "first stage-1 turn" })
	s.worker.kill9(t)
	s.delay.Store(0)
	s.worker = startErrata(t, s.env, filepath.Join(s.logDir, "worker.log"), "worker")
	claims := s.waitInvestigated(t, out.InvestigationID, 60*time.Second)
	require.Len(t, claims, 1)

	counts := map[string]int{}
	var lost bool
	for _, r := range s.logRecords(t) {
		counts[typeOf(r)]++
		if typeOf(r) == "investigation.attempt_failed.v1" && strings.Contains(string(r.Value), `"worker_lost"`) {
			lost = true
		}
	}
	require.True(t, lost, "the abandoned attempt is recorded: %v", counts)
	require.Equal(t, 2, counts["investigation.attempt_started.v1"], "%v", counts)
	require.Equal(t, 1, counts["investigation.completed.v1"], "%v", counts)
	require.Equal(t, 1, counts["investigation.claim_validated.v1"], "%v", counts)
	require.Equal(t, 1, counts["investigation.claim_assessed.v1"], "%v", counts)
}

// addInstanceKey creates an instance API key with the CLI on a running
// stack, which waits until the serving projection has it: the key
// authenticates from the next request on.
func addInstanceKey(t *testing.T, env []string) string {
	t.Helper()
	out, stderr, err := runErrata(t, env, "apikey", "add", "--label", "test")
	require.NoError(t, err, stderr)
	require.Contains(t, stderr, "The key is active.", "the worker runs, so the key is applied before the command returns")
	return strings.TrimSpace(out)
}

// A search server configured at an IP address or localhost gets its own
// client that reaches exactly it; a named host shares the SSRF-safe client.
func TestSearchHTTPClient(t *testing.T) {
	t.Parallel()
	shared, err := httpsafe.New()
	require.NoError(t, err)
	for _, tc := range []struct {
		base   string
		shared bool
	}{
		{"https://api.search.brave.com", true},
		{"http://127.0.0.1:8888", false},
		{"http://localhost:8888/searxng", false},
		{"http://10.0.0.7", false},
		{"http://[::1]:9000", false},
		{"", true},
		{"::not a url", true},
	} {
		c, err := searchHTTPClient(tc.base, shared)
		require.NoError(t, err, tc.base)
		require.Equal(t, tc.shared, c == shared, tc.base)
	}
}
