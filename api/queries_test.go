package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/projections/serving"
)

// queryPath is the GET path of a query procedure with input (nil: none).
func queryPath(procedure string, input any) string {
	p := "/trpc/" + procedure
	if input == nil {
		return p
	}
	var raw string
	switch v := input.(type) {
	case string:
		raw = v
	case []byte:
		raw = string(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		raw = string(b)
	}
	return p + "?input=" + url.QueryEscape(raw)
}

func get(t testing.TB, s *Server, path string, headers map[string]string) response {
	t.Helper()
	return do(t, s, request{method: http.MethodGet, path: path, headers: headers})
}

// providerRequest is what the fake OpenAI provider saw.
type providerRequest struct {
	Method, Path, Authorization string
}

// fakeProvider is an OpenAI-compatible provider on 127.0.0.1 answering
// GET /v1/models with a fixed status (after an optional delay).
type fakeProvider struct {
	srv      *httptest.Server
	mu       sync.Mutex
	status   int
	delay    time.Duration
	location string // for redirects
	seen     []providerRequest
}

func newFakeProvider(t testing.TB) *fakeProvider {
	t.Helper()
	p := &fakeProvider{status: http.StatusOK}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, providerRequest{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization")})
		status, delay, location := p.status, p.delay, p.location
		p.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		if location != "" {
			w.Header().Set("Location", location)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		// Providers echo parts of the key in errors; it must never reach the client.
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, r.Header.Get("Authorization"))
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *fakeProvider) base() string { return p.srv.URL + "/v1" }

func (p *fakeProvider) set(status int, delay time.Duration, location string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.delay, p.location, p.seen = status, delay, location, nil
}

func (p *fakeProvider) requests() []providerRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providerRequest(nil), p.seen...)
}

const (
	testInstanceKey = "erk_4n1nst4nceKeyForTestsOnly-0123456789abcdefghi"
	revokedKey      = "erk_r3v0kedKeyForTestsOnly-0123456789abcdefghijk"
	goodOpenAIKey   = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789_-AB"
)

func TestValidateSettings(t *testing.T) {
	provider := newFakeProvider(t)
	s, fi, reader := newFakeServerWith(t, Config{OpenAIBaseURL: provider.base() + "/", OpenAIKeyCheckTimeout: 300 * time.Millisecond})
	reader.keys[apikeys.Hash(testInstanceKey)] = true
	reader.keys[apikeys.Hash(revokedKey)] = false
	var logs bytes.Buffer
	s.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	type want struct {
		status  string
		message string // exact; "" for missing and valid
		golden  string
	}
	for _, tc := range []struct {
		name      string
		apiKey    *string
		openAIKey *string
		provider  int
		delay     time.Duration
		location  string
		accepted  bool
		calls     int // requests the provider must see
		want      want
	}{
		{name: "nothing configured", want: want{status: "missing", golden: "validate_settings_missing.json"}},
		{name: "empty OpenAI key is missing", openAIKey: ptr(""), want: want{status: "missing"}},
		{name: "blank OpenAI key is missing", openAIKey: ptr("   "), want: want{status: "missing"}},
		{name: "valid instance key, no OpenAI key", apiKey: ptr(testInstanceKey), accepted: true, want: want{status: "missing"}},
		{name: "instance key with surrounding spaces", apiKey: ptr("  " + testInstanceKey + " "), accepted: true, want: want{status: "missing"}},
		{name: "revoked instance key", apiKey: ptr(revokedKey), want: want{status: "missing"}},
		{name: "unknown instance key", apiKey: ptr("erk_unknown"), want: want{status: "missing"}},
		{name: "over-long instance key is not looked up", apiKey: ptr(strings.Repeat("k", 300)), want: want{status: "missing"}},
		{name: "valid OpenAI key", apiKey: ptr(testInstanceKey), openAIKey: ptr(goodOpenAIKey), provider: 200, accepted: true, calls: 1,
			want: want{status: "valid", golden: "validate_settings_valid.json"}},
		{name: "OpenAI key with surrounding spaces", openAIKey: ptr(" " + goodOpenAIKey + "\t"), provider: 200, calls: 1, want: want{status: "valid"}},
		{name: "wrong prefix", openAIKey: ptr("pk-abcdefghijklmnopqrstuvwxyz0123"),
			want: want{status: "format_invalid", message: msgKeyPrefix, golden: "validate_settings_format_invalid.json"}},
		{name: "whitespace inside", openAIKey: ptr("sk-abcdefghij klmnopqrstuvwxyz"), want: want{status: "format_invalid", message: msgKeyWhitespace}},
		{name: "no-break space inside", openAIKey: ptr("sk-abcdefghij\u00a0klmnopqrstuvwxyz"), want: want{status: "format_invalid", message: msgKeyWhitespace}},
		{name: "too short", openAIKey: ptr("sk-abc"), want: want{status: "format_invalid", message: msgKeyShape}},
		{name: "bad characters", openAIKey: ptr("sk-abcdefghijklmnopqrstuvwxyz/+="), want: want{status: "format_invalid", message: msgKeyShape}},
		{name: "too long", openAIKey: ptr("sk-" + strings.Repeat("a", 600)), want: want{status: "format_invalid", message: msgKeyLength}},
		{name: "provider says 401", openAIKey: ptr(goodOpenAIKey), provider: 401, calls: 1,
			want: want{status: "invalid", message: msgKeyRejected, golden: "validate_settings_invalid.json"}},
		{name: "provider says 403", openAIKey: ptr(goodOpenAIKey), provider: 403, calls: 1,
			want: want{status: "authenticated_restricted", message: msgKeyRestricted, golden: "validate_settings_authenticated_restricted.json"}},
		{name: "provider says 429", openAIKey: ptr(goodOpenAIKey), provider: 429, calls: 1, want: want{status: "error", message: msgKeyRateLimit}},
		{name: "provider says 500", apiKey: ptr(testInstanceKey), openAIKey: ptr(goodOpenAIKey), provider: 500, accepted: true, calls: 1,
			want: want{status: "error", message: "OpenAI answered the key check with HTTP 500; try again later.", golden: "validate_settings_error.json"}},
		{name: "provider says 404", openAIKey: ptr(goodOpenAIKey), provider: 404, calls: 1,
			want: want{status: "error", message: "OpenAI answered the key check with HTTP 404; try again later."}},
		{name: "provider redirects elsewhere: not followed", openAIKey: ptr(goodOpenAIKey), provider: 302, location: "http://127.0.0.1:9/steal", calls: 1,
			want: want{status: "error", message: "OpenAI answered the key check with HTTP 302; try again later."}},
		{name: "provider too slow", openAIKey: ptr(goodOpenAIKey), provider: 200, delay: 2 * time.Second, calls: 1,
			want: want{status: "error", message: msgKeyTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			provider.set(tc.provider, tc.delay, tc.location)
			headers := map[string]string{}
			if tc.apiKey != nil {
				headers[HeaderAPIKey] = *tc.apiKey
			}
			if tc.openAIKey != nil {
				headers[HeaderOpenAIAPIKey] = *tc.openAIKey
			}
			start := time.Now()
			r := get(t, s, "/trpc/post.validateSettings", headers)
			require.Less(t, time.Since(start), 1500*time.Millisecond, "the live check is bounded by its timeout")
			data := resultOf(t, r)
			expected := map[string]any{"instanceApiKeyAccepted": tc.accepted, "openaiApiKeyStatus": tc.want.status}
			if tc.want.message != "" {
				expected["openaiApiKeyMessage"] = tc.want.message
			}
			var got map[string]any
			require.NoError(t, json.Unmarshal(data, &got))
			require.Equal(t, expected, got)
			if tc.want.golden != "" {
				golden(t, tc.want.golden, r.body)
			}

			seen := provider.requests()
			require.Len(t, seen, tc.calls, "format problems are found without any network call")
			for _, req := range seen {
				require.Equal(t, providerRequest{Method: "GET", Path: "/v1/models", Authorization: "Bearer " + goodOpenAIKey}, req)
			}
			for _, secret := range []string{goodOpenAIKey, testInstanceKey, revokedKey, apikeys.Hash(testInstanceKey), apikeys.Hash(revokedKey)} {
				require.NotContains(t, string(r.body), secret)
				require.NotContains(t, logs.String(), secret)
			}
			registers, views := fi.calls()
			require.Zero(t, registers+views, "validateSettings appends nothing")
		})
	}
}

func TestValidateSettingsUnreachableProvider(t *testing.T) {
	s, _, _ := newFakeServerWith(t, Config{}) // unreachableOpenAI
	r := get(t, s, "/trpc/post.validateSettings", map[string]string{HeaderOpenAIAPIKey: goodOpenAIKey})
	require.JSONEq(t, `{"instanceApiKeyAccepted":false,"openaiApiKeyStatus":"error","openaiApiKeyMessage":"`+msgKeyUnreached+`"}`,
		string(resultOf(t, r)))
}

func TestNewRejectsBadOpenAIBaseURL(t *testing.T) {
	for _, base := range []string{"ftp://example.com/v1", "not a url", "//no-scheme/v1", "https://user:hunter2@/v1"} {
		_, err := newOpenAIChecker(base, 0)
		require.Error(t, err, base)
		require.NotContains(t, err.Error(), "hunter2")
	}
	c, err := newOpenAIChecker("", 0)
	require.NoError(t, err)
	require.Equal(t, "https://api.openai.com/v1/models", c.modelsURL)
	require.Equal(t, 5*time.Second, c.timeout)
	c, err = newOpenAIChecker("http://127.0.0.1:8089/openai/v1///", time.Second)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8089/openai/v1/models", c.modelsURL)
}

func TestQueryTransport(t *testing.T) {
	const settings, batch = "post.validateSettings", "post.batchStatus"
	okBatch := map[string]any{"posts": []any{map[string]any{"platform": "X", "externalId": "1", "versionHash": strings.Repeat("a", 64)}}}
	for _, tc := range []struct {
		name      string
		req       request
		code      string // "" for success
		path      string
		extraCode string
	}{
		{name: "query without input has no query string", req: request{method: http.MethodGet, path: queryPath(settings, nil)}},
		{name: "input to a query without input is ignored", req: request{method: http.MethodGet, path: queryPath(settings, map[string]any{"x": 1})}},
		{name: "a body and Content-Type on a GET are ignored", req: request{method: http.MethodGet, path: queryPath(batch, okBatch), body: []byte(`{nonsense`)}},
		{name: "signature header is not required nor checked", req: request{method: http.MethodGet, path: queryPath(batch, okBatch),
			headers: map[string]string{"x-openerrata-signature": "00"}}},
		{name: "malformed input", req: request{method: http.MethodGet, path: queryPath(batch, `{"posts":[`)}, code: "PARSE_ERROR", path: batch},
		{name: "empty input", req: request{method: http.MethodGet, path: "/trpc/" + batch + "?input="}, code: "PARSE_ERROR", path: batch},
		{name: "trailing data after input", req: request{method: http.MethodGet, path: queryPath(batch, `{} {}`)}, code: "PARSE_ERROR", path: batch},
		{name: "malformed input to a query without input", req: request{method: http.MethodGet, path: queryPath(settings, `{`)}, code: "PARSE_ERROR", path: settings},
		{name: "version gate: missing", req: request{method: http.MethodGet, path: queryPath(settings, nil), noVersion: true},
			code: "PRECONDITION_FAILED", path: settings, extraCode: "UPGRADE_REQUIRED"},
		{name: "version gate: too old", req: request{method: http.MethodGet, path: queryPath(batch, okBatch), headers: map[string]string{HeaderExtensionVersion: "0.1.0"}},
			code: "PRECONDITION_FAILED", path: batch, extraCode: "UPGRADE_REQUIRED"},
		{name: "version gate: malformed", req: request{method: http.MethodGet, path: queryPath(batch, okBatch), headers: map[string]string{HeaderExtensionVersion: "v1"}},
			code: "BAD_REQUEST", path: batch, extraCode: "MALFORMED_EXTENSION_VERSION"},
		{name: "query as POST", req: request{path: "/trpc/" + batch, body: mustRaw(t, okBatch)}, code: "NOT_FOUND", path: batch},
		{name: "validateSettings as POST", req: request{path: "/trpc/" + settings, body: []byte(`{}`)}, code: "NOT_FOUND", path: settings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi, reader := newFakeServerWith(t, Config{})
			r := do(t, s, tc.req)
			if tc.code == "" {
				resultOf(t, r)
				return
			}
			data := expectError(t, r, tc.code, tc.path)
			if tc.extraCode != "" {
				require.Equal(t, tc.extraCode, data["openerrataCode"])
			} else {
				require.NotContains(t, data, "openerrataCode")
			}
			registers, views := fi.calls()
			require.Zero(t, registers+views)
			require.Empty(t, reader.batches, "a rejected query reads nothing")
		})
	}
}

func TestHeadersTooLarge(t *testing.T) {
	s, _, _ := newFakeServerWith(t, Config{})
	huge := strings.Repeat("a", MaxHeaderBytes+1024)
	path := queryPath("post.batchStatus", map[string]any{"posts": []any{map[string]any{"platform": "X", "externalId": huge, "versionHash": huge}}})
	// Over a real socket: fasthttp answers and then fails the connection,
	// which app.Test reports as an error.
	req, err := http.NewRequest(http.MethodGet, "http://"+listen(t, s)+path, http.NoBody)
	require.NoError(t, err)
	req.Header.Set(HeaderExtensionVersion, testExtensionVersion)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := response{status: resp.StatusCode, body: b}
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status, "body: %s", r.body)
	_, rpc, data := errorEnvelopeOf(t, r)
	require.Equal(t, -32013, rpc)
	require.Equal(t, "PAYLOAD_TOO_LARGE", data["code"])
}

func hash64(c byte) string { return strings.Repeat(string(c), 64) }

func TestBatchStatus(t *testing.T) {
	s, fi, reader := newFakeServerWith(t, Config{})
	done := serving.BatchKey{Platform: "LESSWRONG", ExternalID: "abc123", VersionHash: hash64('1')}
	reader.complete[done] = 0
	reader.complete[serving.BatchKey{Platform: "X", ExternalID: "42", VersionHash: hash64('2')}] = 3

	input := map[string]any{"posts": []any{
		map[string]any{"platform": "LESSWRONG", "externalId": "abc123", "versionHash": hash64('1')},
		map[string]any{"platform": "LESSWRONG", "externalId": "abc123", "versionHash": hash64('9')}, // another version: not investigated
		map[string]any{"platform": "X", "externalId": "42", "versionHash": hash64('2')},
		map[string]any{"platform": "WIKIPEDIA", "externalId": "en:736", "versionHash": hash64('3')},
		map[string]any{"platform": "LESSWRONG", "externalId": "abc123", "versionHash": hash64('1')}, // repeated
	}}
	r := get(t, s, queryPath("post.batchStatus", input), nil)
	golden(t, "batch_status.json", r.body)
	require.Equal(t, `{"statuses":[`+
		`{"platform":"LESSWRONG","externalId":"abc123","investigationState":"INVESTIGATED","incorrectClaimCount":0},`+
		`{"platform":"LESSWRONG","externalId":"abc123","investigationState":"NOT_INVESTIGATED","incorrectClaimCount":0},`+
		`{"platform":"X","externalId":"42","investigationState":"INVESTIGATED","incorrectClaimCount":3},`+
		`{"platform":"WIKIPEDIA","externalId":"en:736","investigationState":"NOT_INVESTIGATED","incorrectClaimCount":0},`+
		`{"platform":"LESSWRONG","externalId":"abc123","investigationState":"INVESTIGATED","incorrectClaimCount":0}]}`,
		string(resultOf(t, r)))
	require.Len(t, reader.batches, 1, "one read for the whole batch")
	require.Len(t, reader.batches[0], 5)
	registers, views := fi.calls()
	require.Zero(t, registers+views, "batchStatus appends nothing")

	// The largest batch fits in a URL.
	var many []any
	for i := range MaxBatchStatusPosts {
		many = append(many, map[string]any{"platform": "SUBSTACK", "externalId": fmt.Sprintf("1%017d", i), "versionHash": hash64('f')})
	}
	path := queryPath("post.batchStatus", map[string]any{"posts": many})
	require.Greater(t, len(path), 16<<10)
	var out struct {
		Statuses []map[string]any `json:"statuses"`
	}
	require.NoError(t, json.Unmarshal(resultOf(t, get(t, s, path, nil)), &out))
	require.Len(t, out.Statuses, MaxBatchStatusPosts)
	for i, st := range out.Statuses {
		require.Equal(t, map[string]any{"platform": "SUBSTACK", "externalId": fmt.Sprintf("1%017d", i),
			"investigationState": "NOT_INVESTIGATED", "incorrectClaimCount": float64(0)}, st)
	}
}

func TestBatchStatusRejectsBadInput(t *testing.T) {
	post := func(patch func(m map[string]any)) map[string]any {
		m := map[string]any{"platform": "X", "externalId": "1", "versionHash": hash64('a')}
		if patch != nil {
			patch(m)
		}
		return m
	}
	var tooMany []any
	for range MaxBatchStatusPosts + 1 {
		tooMany = append(tooMany, post(nil))
	}
	for _, tc := range []struct {
		name    string
		input   any // nil: no input at all
		code    string
		message string // substring
	}{
		{"no input", nil, "BAD_REQUEST", "input is required"},
		{"null", "null", "BAD_REQUEST", "posts: required"},
		{"empty object", map[string]any{}, "BAD_REQUEST", "posts: required"},
		{"posts null", map[string]any{"posts": nil}, "BAD_REQUEST", "posts: required"},
		{"array instead of object", []any{post(nil)}, "BAD_REQUEST", "expected"},
		{"no posts", map[string]any{"posts": []any{}}, "BAD_REQUEST", "posts: must hold 1 to 100 entries, got 0"},
		{"101 posts", map[string]any{"posts": tooMany}, "BAD_REQUEST", "posts: must hold 1 to 100 entries, got 101"},
		{"unknown top-level field", map[string]any{"posts": []any{post(nil)}, "limit": 5}, "BAD_REQUEST", `unknown field "limit"`},
		{"unknown post field", map[string]any{"posts": []any{post(func(m map[string]any) { m["url"] = "https://x.com" })}}, "BAD_REQUEST", `unknown field "url"`},
		{"unknown platform", map[string]any{"posts": []any{post(nil), post(func(m map[string]any) { m["platform"] = "MASTODON" })}}, "BAD_REQUEST", "posts[1].platform: must be one of"},
		{"lowercase platform", map[string]any{"posts": []any{post(func(m map[string]any) { m["platform"] = "x" })}}, "BAD_REQUEST", "posts[0].platform"},
		{"missing platform", map[string]any{"posts": []any{post(func(m map[string]any) { delete(m, "platform") })}}, "BAD_REQUEST", "posts[0].platform: required"},
		{"empty externalId", map[string]any{"posts": []any{post(func(m map[string]any) { m["externalId"] = "" })}}, "BAD_REQUEST", "posts[0].externalId: must not be empty"},
		{"missing externalId", map[string]any{"posts": []any{post(func(m map[string]any) { delete(m, "externalId") })}}, "BAD_REQUEST", "posts[0].externalId: required"},
		{"numeric externalId", map[string]any{"posts": []any{post(func(m map[string]any) { m["externalId"] = 1 })}}, "BAD_REQUEST", "expected string"},
		// A NUL reached the Postgres query and answered 500.
		{"NUL in externalId", map[string]any{"posts": []any{post(nil), post(func(m map[string]any) { m["externalId"] = "a\x00b" })}}, "BAD_REQUEST", "posts[1].externalId: must not contain NUL (U+0000)"},
		{"escaped NUL in externalId", `{"posts":[{"platform":"X","externalId":"a\u0000b","versionHash":"` + hash64('a') + `"}]}`, "BAD_REQUEST", "posts[0].externalId: must not contain NUL (U+0000)"},
		{"257-character externalId", map[string]any{"posts": []any{post(func(m map[string]any) { m["externalId"] = strings.Repeat("1", 257) })}}, "BAD_REQUEST", "posts[0].externalId: longer than 256 characters (got 257)"},
		{"uppercase hash", map[string]any{"posts": []any{post(func(m map[string]any) { m["versionHash"] = hash64('A') })}}, "BAD_REQUEST", "posts[0].versionHash: must be 64 lowercase hex characters"},
		{"short hash", map[string]any{"posts": []any{post(func(m map[string]any) { m["versionHash"] = "abc" })}}, "BAD_REQUEST", "posts[0].versionHash"},
		{"missing hash", map[string]any{"posts": []any{post(func(m map[string]any) { delete(m, "versionHash") })}}, "BAD_REQUEST", "posts[0].versionHash: required"},
		{"malformed JSON", `{"posts":[{]}`, "PARSE_ERROR", "malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, reader := newFakeServerWith(t, Config{})
			r := get(t, s, queryPath("post.batchStatus", tc.input), nil)
			expectError(t, r, tc.code, "post.batchStatus")
			msg, _, _ := errorEnvelopeOf(t, r)
			require.Contains(t, msg, tc.message)
			require.Empty(t, reader.batches)
		})
	}
}

func ptr[T any](v T) *T { return &v }
