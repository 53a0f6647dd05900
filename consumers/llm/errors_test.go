package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/retry"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

// errorCase scripts one failure on both endpoints (or only one) and states
// the classification expected from both providers.
type errorCase struct {
	name       string
	responses  fakeopenai.Step // nil-like zero: case not run for Responses
	chat       fakeopenai.Step
	timeout    time.Duration // context deadline of the call
	class      llm.Class
	kind       llm.Kind
	status     int
	code       string
	message    string // substring of Error.Message
	retryAfter time.Duration
	noResponse bool // no *Response is returned (nothing came back)
}

func httpCase(name string, step fakeopenai.Step, class llm.Class, kind llm.Kind, status int, code, message string) errorCase {
	return errorCase{name: name, responses: step, chat: step, class: class, kind: kind, status: status, code: code, message: message}
}

func errorCases() []errorCase {
	okReply := fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("A reasonably long answer so that cutting it leaves broken JSON."))}})
	okChat := fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: "A reasonably long answer so that cutting it leaves broken JSON."})
	cases := []errorCase{
		func() errorCase {
			c := httpCase("429 with Retry-After", fakeopenai.RateLimit(2*time.Second), llm.Transient, llm.KindRateLimited, 429, "rate_limit_exceeded", "Rate limit reached")
			c.retryAfter = 2 * time.Second
			return c
		}(),
		func() errorCase {
			c := httpCase("429 with retry-after-ms", fakeopenai.RateLimit(0).WithHeader("retry-after-ms", "1500"), llm.Transient, llm.KindRateLimited, 429, "rate_limit_exceeded", "")
			c.retryAfter = 1500 * time.Millisecond
			return c
		}(),
		httpCase("429 quota exhausted", fakeopenai.Error(429, "insufficient_quota", "You exceeded your current quota, please check your plan and billing details."),
			llm.NonRetryable, llm.KindQuotaExceeded, 429, "insufficient_quota", "exceeded your current quota"),
		httpCase("500", fakeopenai.Error(500, "", "The server had an error while processing your request."), llm.Transient, llm.KindServer, 500, "", "server had an error"),
		httpCase("502 with an HTML body", fakeopenai.Raw(502, "text/html", []byte("<html><body>Bad gateway</body></html>")), llm.Transient, llm.KindServer, 502, "", "Bad gateway"),
		httpCase("503", fakeopenai.Error(503, "", "The engine is currently overloaded, please try again later."), llm.Transient, llm.KindServer, 503, "", "overloaded"),
		httpCase("408", fakeopenai.Error(408, "", "Request timed out."), llm.Transient, llm.KindTimeout, 408, "", ""),
		httpCase("409", fakeopenai.Error(409, "", "Conflict."), llm.Transient, llm.KindConflict, 409, "", ""),
		httpCase("400", fakeopenai.Fail(400, fakeopenai.APIError{Type: "invalid_request_error", Param: "input", Code: "invalid_value", Message: "Invalid value for 'input'."}),
			llm.NonRetryable, llm.KindBadRequest, 400, "invalid_value", "Invalid value"),
		httpCase("401", fakeopenai.Error(401, "invalid_api_key", "Incorrect API key provided: "+fakeopenai.MaskKey(testKey)+"."),
			llm.NonRetryable, llm.KindUnauthorized, 401, "invalid_api_key", "Incorrect API key provided: sk-[redacted]."),
		httpCase("403", fakeopenai.Error(403, "unsupported_country_region_territory", "Country, region, or territory not supported."),
			llm.NonRetryable, llm.KindForbidden, 403, "unsupported_country_region_territory", "not supported"),
		httpCase("404", fakeopenai.Error(404, "model_not_found", "The model `gpt-9` does not exist or you do not have access to it."),
			llm.NonRetryable, llm.KindNotFound, 404, "model_not_found", "does not exist"),
		httpCase("413", fakeopenai.Error(413, "", "Request too large."), llm.NonRetryable, llm.KindClientError, 413, "", ""),
		httpCase("422", fakeopenai.Error(422, "", "Unprocessable entity."), llm.NonRetryable, llm.KindUnprocessable, 422, "", "Unprocessable"),
		{name: "refusal", class: llm.NonRetryable, kind: llm.KindRefusal, status: 200, message: "I can't help with that.",
			responses: fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Refusal("I can't help with that."))}}),
			chat:      fakeopenai.ChatReply(fakeopenai.ChatCompletion{Refusal: "I can't help with that."})},
		{name: "incomplete", class: llm.Transient, kind: llm.KindIncomplete, status: 200, code: "max_output_tokens",
			responses: fakeopenai.Reply(fakeopenai.Response{IncompleteReason: "max_output_tokens", Output: []any{fakeopenai.Message(fakeopenai.Text("partial"))}})},
		{name: "incomplete: finish_reason length", class: llm.Transient, kind: llm.KindIncomplete, status: 200, code: "length",
			chat: fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: `{"approved": tr`, FinishReason: "length"})},
		{name: "failed with server_error", class: llm.Transient, kind: llm.KindFailed, status: 200, code: "server_error", message: "boom",
			responses: fakeopenai.Reply(fakeopenai.Response{Error: &fakeopenai.ResponseError{Code: "server_error", Message: "boom"}})},
		{name: "failed with invalid_prompt", class: llm.NonRetryable, kind: llm.KindFailed, status: 200, code: "invalid_prompt",
			responses: fakeopenai.Reply(fakeopenai.Response{Error: &fakeopenai.ResponseError{Code: "invalid_prompt", Message: "Invalid prompt."}})},
		{name: "body cut mid-JSON", class: llm.Transient, kind: llm.KindTruncated, status: 200, message: "mid-JSON",
			responses: okReply.Truncated(80), chat: okChat.Truncated(80)},
		{name: "connection cut mid-body", class: llm.Transient, kind: llm.KindTruncated, status: 0, message: "cut off",
			responses: okReply.CutConnection(80), chat: okChat.CutConnection(80)},
		{name: "disconnect before an answer", class: llm.Transient, kind: llm.KindNetwork, noResponse: false,
			responses: fakeopenai.Disconnect(), chat: fakeopenai.Disconnect()},
		{name: "timeout: slow reply past the deadline", class: llm.Transient, kind: llm.KindTimeout, timeout: 150 * time.Millisecond,
			responses: okReply.WithDelay(10 * time.Second), chat: okChat.WithDelay(10 * time.Second)},
		{name: "200 with a non-JSON body", class: llm.Transient, kind: llm.KindInvalidResponse, status: 200,
			responses: fakeopenai.Raw(200, "text/html", []byte("<html>captive portal</html>")), chat: fakeopenai.Raw(200, "text/html", []byte("<html>captive portal</html>"))},
		{name: "200 with another JSON object", class: llm.Transient, kind: llm.KindInvalidResponse, status: 200,
			responses: fakeopenai.JSON(200, map[string]any{"hello": "world"}), chat: fakeopenai.JSON(200, map[string]any{"hello": "world"})},
		{name: "arguments breaking the schema", class: llm.NonRetryable, kind: llm.KindToolArguments, status: 200, message: "call call_1 (submit_correction): schema violation: $.sources",
			responses: fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.FunctionCall("call_1", tools.SubmitCorrectionName,
				`{"text":"a","context":"b","summary":"c","reasoning":"d","sources":[]}`)}}),
			chat: fakeopenai.ChatReply(fakeopenai.ChatCompletion{ToolCalls: []fakeopenai.ChatToolCall{fakeopenai.ToolCall("call_1", tools.SubmitCorrectionName,
				`{"text":"a","context":"b","summary":"c","reasoning":"d","sources":[]}`)}})},
		{name: "arguments that are not JSON", class: llm.NonRetryable, kind: llm.KindToolArguments, status: 200, message: "call call_1",
			responses: fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.FunctionCall("call_1", tools.RetainCorrectionName, `{"id": `)}}),
			chat:      fakeopenai.ChatReply(fakeopenai.ChatCompletion{ToolCalls: []fakeopenai.ChatToolCall{fakeopenai.ToolCall("call_1", tools.RetainCorrectionName, `{"id": `)}})},
		{name: "a tool that was not offered", class: llm.NonRetryable, kind: llm.KindToolArguments, status: 200, message: `"delete_post", which was not offered`,
			responses: fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.FunctionCall("call_1", "delete_post", `{}`)}}),
			chat:      fakeopenai.ChatReply(fakeopenai.ChatCompletion{ToolCalls: []fakeopenai.ChatToolCall{fakeopenai.ToolCall("call_1", "delete_post", `{}`)}})},
		{name: "gateway error inside a 200 (OpenRouter)", class: llm.Transient, kind: llm.KindRateLimited, status: 200, code: "429", message: "upstream rate limited",
			chat: fakeopenai.JSON(200, map[string]any{"error": map[string]any{"code": 429, "message": "upstream rate limited"}})},
	}
	return cases
}

func runCase(t *testing.T, p llm.Provider, ep fakeopenai.Endpoint, tc errorCase, step fakeopenai.Step) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(ep, step)
	ctx := context.Background()
	if tc.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, tc.timeout)
		defer cancel()
	}
	req := turn()
	if ep == fakeopenai.ChatCompletions {
		req.WebSearch = nil
	}
	start := time.Now()
	res, err := p.Create(ctx, creds(f), req)
	require.Error(t, err)
	e, ok := llm.AsError(err)
	require.True(t, ok, "%T %v", err, err)
	require.Equal(t, tc.class, e.Class, "%v", err)
	require.Equal(t, tc.kind, e.Kind, "%v", err)
	require.Equal(t, tc.class == llm.Transient, e.Retryable())
	require.Equal(t, tc.class == llm.Transient, llm.IsRetryable(fmt.Errorf("attempt 1: %w", err)))
	require.Equal(t, tc.status, e.StatusCode, "%v", err)
	require.Equal(t, tc.code, e.Code, "%v", err)
	require.Contains(t, e.Message, tc.message)
	require.Equal(t, tc.retryAfter, e.RetryAfter)
	require.Equal(t, p.Name(), e.Provider)
	requireNoKey(t, err)
	if tc.timeout > 0 {
		require.True(t, errors.Is(err, context.DeadlineExceeded))
		require.Less(t, time.Since(start), 3*time.Second)
	}
	// Every attempt that reached the wire is auditable.
	require.NotNil(t, res, "a request was sent, so a Response carries it")
	sent, ok := f.LastRequest(ep)
	require.True(t, ok)
	require.Equal(t, string(sent.Body), string(res.RawRequest))
	requireKeyOnlyInAuthorization(t, sent)
	if tc.status != 0 {
		require.NotEmpty(t, res.RawResponse)
	}
	if tc.kind == llm.KindRefusal {
		require.Equal(t, "I can't help with that.", res.Refusal())
	}
	if tc.kind == llm.KindToolArguments {
		require.Len(t, res.ToolCalls(), 1)
		require.Nil(t, res.ToolCalls()[0].JSON)
	}
}

func TestErrorClassificationResponses(t *testing.T) {
	for _, tc := range errorCases() {
		if tc.responses.IsZero() {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			runCase(t, llm.OpenAIResponses{}, fakeopenai.Responses, tc, tc.responses)
		})
	}
}

func TestErrorClassificationChat(t *testing.T) {
	for _, tc := range errorCases() {
		if tc.chat.IsZero() {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			runCase(t, llm.ChatCompletions{}, fakeopenai.ChatCompletions, tc, tc.chat)
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	f := fakeopenai.New()
	url := f.URL
	f.Close()
	res, err := llm.OpenAIResponses{}.Create(context.Background(), llm.Credentials{BaseURL: url, APIKey: creds(f).APIKey}, turn())
	e, ok := llm.AsError(err)
	require.True(t, ok)
	require.Equal(t, llm.KindNetwork, e.Kind)
	require.True(t, e.Retryable())
	require.NotNil(t, res, "the attempt is auditable")
	require.NotEmpty(t, res.RawRequest)
	require.Zero(t, res.HTTPStatus)
	requireNoKey(t, err)
}

func TestCanceledContext(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{}).WithDelay(10*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := llm.OpenAIResponses{}.Create(ctx, creds(f), turn())
	e, ok := llm.AsError(err)
	require.True(t, ok)
	require.Equal(t, llm.KindCanceled, e.Kind)
	require.True(t, errors.Is(err, context.Canceled))
}

// TestAPIKeyNeverLeaks: a provider that echoes the whole key (message,
// code, a bearer header quoted in the text) still yields errors, logs and
// serialized responses without it.
func TestAPIKeyNeverLeaks(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	echo := fakeopenai.Fail(401, fakeopenai.APIError{Type: "invalid_request_error", Code: testKey,
		Message: "Incorrect API key provided: " + testKey + " (sent as Authorization: Bearer " + testKey + ")"})
	f.Enqueue(fakeopenai.Responses, echo)
	f.Enqueue(fakeopenai.ChatCompletions, echo)

	var logs strings.Builder
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	cred := creds(f)
	for _, p := range []llm.Provider{llm.OpenAIResponses{}, llm.ChatCompletions{}} {
		req := turn()
		req.WebSearch = nil
		res, err := p.Create(context.Background(), cred, req)
		e, ok := llm.AsError(err)
		require.True(t, ok)
		require.Equal(t, llm.KindUnauthorized, e.Kind)
		require.Contains(t, e.Message, "[redacted]")
		requireNoKey(t, err)
		logger.Error("call failed", "err", err, "credentials", cred, "error_struct", e)
		audit, jerr := json.Marshal(struct {
			Response *llm.Response
			Message  string
		}{res, e.Message})
		require.NoError(t, jerr)
		require.NotContains(t, string(audit), testKey, "the audit record (raw request and response included)")
		require.True(t, json.Valid(res.RawResponse))
		requireKeyOnlyInAuthorization(t, f.RequestsTo(fakeopenai.Endpoint("/v1/" + map[string]string{
			llm.ProviderOpenAIResponses: "responses", llm.ProviderChatCompletions: "chat/completions"}[p.Name()]))[0])
	}
	require.NotContains(t, logs.String(), testKey)
	for _, s := range []string{fmt.Sprint(cred), fmt.Sprintf("%+v", cred), fmt.Sprintf("%#v", cred)} {
		require.NotContains(t, s, testKey)
	}
	b, err := json.Marshal(cred)
	require.NoError(t, err)
	require.NotContains(t, string(b), testKey)
}

func TestNoKeyNoAuthorizationHeader(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.ChatCompletions, fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: "hi"}))
	_, err := llm.ChatCompletions{}.Create(context.Background(), llm.Credentials{BaseURL: f.URL}, llm.Request{Model: "llama3", Input: []llm.Message{llm.UserText("hi")}})
	require.NoError(t, err)
	sent, _ := f.LastRequest(fakeopenai.ChatCompletions)
	require.Empty(t, sent.Header.Get("Authorization"))
}

// Retry-After values that are not delay-seconds ask for nothing; a huge
// one is clamped (the float reading this replaced turned "1e10" into a
// negative wait).
func TestRetryAfterHostile(t *testing.T) {
	for header, want := range map[string]time.Duration{
		"1e10":                          0,
		"1.5":                           0,
		"-3":                            0,
		"NaN":                           0,
		"99999999999999999999":          retry.MaxAfter,
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
	} {
		f := fakeopenai.NewForTest(t)
		f.Enqueue(fakeopenai.Responses, fakeopenai.RateLimit(0).WithHeader("Retry-After", header))
		_, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), turn())
		e, ok := llm.AsError(err)
		require.True(t, ok, header)
		require.Equal(t, llm.KindRateLimited, e.Kind, header)
		require.Equal(t, want, e.RetryAfter, header)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	when := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	f.Enqueue(fakeopenai.Responses, fakeopenai.RateLimit(0).WithHeader("Retry-After", when))
	_, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), turn())
	e, ok := llm.AsError(err)
	require.True(t, ok)
	require.InDelta(t, 30, e.RetryAfter.Seconds(), 2)
}
