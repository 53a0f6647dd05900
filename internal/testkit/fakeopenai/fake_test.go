package fakeopenai_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

const testKey = "sk-test-0123456789abcdefghijklmnop"

// sdkOptions talk to the fake with openai-go, without reading the
// environment and without SDK retries.
func sdkOptions(f *fakeopenai.Server) []option.RequestOption {
	return []option.RequestOption{
		option.WithBaseURL(f.URL),
		option.WithAPIKey(testKey),
		option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{}),
	}
}

// requireKnown fails when openai-go saw fields it does not know: the fake
// must use the real field names. "store" is in the real API's response
// object but not in openai-go's Response type.
func requireKnown(t *testing.T, what string, extra map[string]respjson.Field) {
	t.Helper()
	names := make([]string, 0, len(extra))
	for k := range extra {
		if what == "response" && k == "store" {
			continue
		}
		names = append(names, k)
	}
	require.Empty(t, names, "%s: fields openai-go does not know", what)
}

func TestResponsesWireFormatDecodesWithOpenAIGo(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	text := "Water boils at 100 °C at sea level, not 90 °C."
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{
		Model: "gpt-5-2025-08-07",
		Output: []any{
			fakeopenai.Reasoning("Checked the boiling point.", "Compared two sources."),
			fakeopenai.WebSearchCall("boiling point of water sea level", "https://en.wikipedia.org/wiki/Boiling_point"),
			fakeopenai.Message(fakeopenai.Text(text, fakeopenai.CiteQuote(text, "100 °C", "https://en.wikipedia.org/wiki/Boiling_point", "Boiling point"))),
			fakeopenai.FunctionCall("call_1", "submit_correction", map[string]any{"text": "90 degrees"}),
		},
		Usage: &fakeopenai.Usage{InputTokens: 120, CachedTokens: 20, OutputTokens: 30, ReasoningTokens: 10},
	}))

	svc := responses.NewResponseService(sdkOptions(f)...)
	res, err := svc.New(context.Background(), responses.ResponseNewParams{
		Model:        "gpt-5",
		Instructions: openai.String("Check the post."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Water boils at 90 degrees.")},
	})
	require.NoError(t, err)
	requireKnown(t, "response", res.JSON.ExtraFields)
	require.Equal(t, "resp_fake_0001", res.ID)
	require.Equal(t, "gpt-5-2025-08-07", res.Model)
	require.Equal(t, responses.ResponseStatusCompleted, res.Status)
	require.Equal(t, "Check the post.", res.Instructions.OfString)
	require.EqualValues(t, 120, res.Usage.InputTokens)
	require.EqualValues(t, 20, res.Usage.InputTokensDetails.CachedTokens)
	require.EqualValues(t, 10, res.Usage.OutputTokensDetails.ReasoningTokens)
	require.EqualValues(t, 150, res.Usage.TotalTokens)
	require.Len(t, res.Output, 4)

	rs := res.Output[0].AsReasoning()
	requireKnown(t, "reasoning", rs.JSON.ExtraFields)
	require.Equal(t, "Compared two sources.", rs.Summary[1].Text)

	ws := res.Output[1].AsWebSearchCall()
	requireKnown(t, "web_search_call", ws.JSON.ExtraFields)
	require.Equal(t, "search", ws.Action.Type)
	require.Equal(t, "boiling point of water sea level", ws.Action.Query)
	require.Equal(t, "https://en.wikipedia.org/wiki/Boiling_point", ws.Action.Sources[0].URL)

	msg := res.Output[2].AsMessage()
	requireKnown(t, "message", msg.JSON.ExtraFields)
	ot := msg.Content[0].AsOutputText()
	requireKnown(t, "output_text", ot.JSON.ExtraFields)
	require.Equal(t, text, ot.Text)
	cite := ot.Annotations[0].AsURLCitation()
	requireKnown(t, "url_citation", cite.JSON.ExtraFields)
	require.Equal(t, "Boiling point", cite.Title)
	require.EqualValues(t, 15, cite.StartIndex) // character offsets: "°" is one character
	require.EqualValues(t, 21, cite.EndIndex)
	require.Equal(t, text, res.OutputText())

	fc := res.Output[3].AsFunctionCall()
	requireKnown(t, "function_call", fc.JSON.ExtraFields)
	require.Equal(t, "call_1", fc.CallID)
	require.Equal(t, "submit_correction", fc.Name)
	require.JSONEq(t, `{"text":"90 degrees"}`, fc.Arguments)
	require.Equal(t, "fc_fake_0005", fc.ID)

	req, ok := f.LastRequest(fakeopenai.Responses)
	require.True(t, ok)
	require.Equal(t, "Bearer "+testKey, req.Header.Get("Authorization"))
	require.Equal(t, "gpt-5", req.JSON()["model"])
}

func TestIncompleteFailedAndRefusal(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.Responses,
		fakeopenai.Reply(fakeopenai.Response{IncompleteReason: "max_output_tokens", Output: []any{fakeopenai.Message(fakeopenai.Text("partial"))}}),
		fakeopenai.Reply(fakeopenai.Response{Error: &fakeopenai.ResponseError{Code: "server_error", Message: "boom"}}),
		fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Refusal("I can't help with that."))}}),
	)
	svc := responses.NewResponseService(sdkOptions(f)...)
	params := responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("x")}}

	res, err := svc.New(context.Background(), params)
	require.NoError(t, err)
	require.Equal(t, responses.ResponseStatusIncomplete, res.Status)
	require.Equal(t, "max_output_tokens", res.IncompleteDetails.Reason)
	require.Equal(t, "incomplete", string(res.Output[0].AsMessage().Status))

	res, err = svc.New(context.Background(), params)
	require.NoError(t, err)
	require.Equal(t, responses.ResponseStatusFailed, res.Status)
	require.Equal(t, "server_error", string(res.Error.Code))

	res, err = svc.New(context.Background(), params)
	require.NoError(t, err)
	ref := res.Output[0].AsMessage().Content[0].AsRefusal()
	requireKnown(t, "refusal", ref.JSON.ExtraFields)
	require.Equal(t, "I can't help with that.", ref.Refusal)
}

func TestChatWireFormatDecodesWithOpenAIGo(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.ChatCompletions, fakeopenai.ChatReply(fakeopenai.ChatCompletion{
		Content:   "Looking it up.",
		ToolCalls: []fakeopenai.ChatToolCall{fakeopenai.ToolCall("call_a", "web_search", map[string]string{"query": "boiling point"})},
		Citations: []fakeopenai.URLCitation{fakeopenai.Citation("https://example.org/a", "A", 0, 7)},
		Usage:     &fakeopenai.Usage{InputTokens: 50, CachedTokens: 5, OutputTokens: 8, ReasoningTokens: 2},
	}))
	svc := openai.NewChatCompletionService(sdkOptions(f)...)
	res, err := svc.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "qwen3:8b",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	require.NoError(t, err)
	requireKnown(t, "chat.completion", res.JSON.ExtraFields)
	require.Equal(t, "qwen3:8b", res.Model)
	require.Equal(t, "chatcmpl-c_fake_0001", res.ID)
	c := res.Choices[0]
	requireKnown(t, "choice", c.JSON.ExtraFields)
	requireKnown(t, "message", c.Message.JSON.ExtraFields)
	require.Equal(t, "tool_calls", c.FinishReason)
	require.Equal(t, "Looking it up.", c.Message.Content)
	require.Equal(t, "https://example.org/a", c.Message.Annotations[0].URLCitation.URL)
	tc := c.Message.ToolCalls[0]
	require.Equal(t, "call_a", tc.ID)
	require.Equal(t, "web_search", tc.Function.Name)
	require.JSONEq(t, `{"query":"boiling point"}`, tc.Function.Arguments)
	require.EqualValues(t, 5, res.Usage.PromptTokensDetails.CachedTokens)
	require.EqualValues(t, 2, res.Usage.CompletionTokensDetails.ReasoningTokens)
	require.EqualValues(t, 58, res.Usage.TotalTokens)
}

func TestErrorsDecodeWithOpenAIGo(t *testing.T) {
	for _, tc := range []struct {
		name       string
		step       fakeopenai.Step
		status     int
		code, typ  string
		retryAfter string
	}{
		{"rate limit", fakeopenai.RateLimit(1500 * time.Millisecond), 429, "rate_limit_exceeded", "requests", "2"},
		{"quota", fakeopenai.Error(429, "insufficient_quota", "You exceeded your current quota."), 429, "insufficient_quota", "insufficient_quota", ""},
		{"server", fakeopenai.Error(500, "", "The server had an error."), 500, "", "server_error", ""},
		{"unavailable", fakeopenai.Error(503, "", "Overloaded."), 503, "", "server_error", ""},
		{"bad request", fakeopenai.Fail(400, fakeopenai.APIError{Type: "invalid_request_error", Param: "input", Code: "invalid_value", Message: "Invalid input."}), 400, "invalid_value", "invalid_request_error", ""},
		{"not found", fakeopenai.Error(404, "model_not_found", "The model does not exist."), 404, "model_not_found", "invalid_request_error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakeopenai.NewForTest(t)
			f.Enqueue(fakeopenai.Responses, tc.step)
			svc := responses.NewResponseService(sdkOptions(f)...)
			_, err := svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
			var apiErr *openai.Error
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, tc.status, apiErr.StatusCode)
			require.Equal(t, tc.code, apiErr.Code)
			require.Equal(t, tc.typ, apiErr.Type)
			require.NotEmpty(t, apiErr.Message)
			require.Equal(t, tc.retryAfter, apiErr.Response.Header.Get("Retry-After"))
		})
	}
}

func TestBrokenReplies(t *testing.T) {
	reply := fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("a fairly long answer text"))}})
	for _, tc := range []struct {
		name string
		step fakeopenai.Step
	}{
		{"truncated body", reply.Truncated(60)},
		{"truncated half", reply.Truncated(-1)},
		{"connection cut mid-body", reply.CutConnection(60)},
		{"disconnect", fakeopenai.Disconnect()},
		{"html", fakeopenai.Raw(502, "text/html", []byte("<html>Bad gateway</html>"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := fakeopenai.NewForTest(t)
			f.Enqueue(fakeopenai.Responses, tc.step)
			svc := responses.NewResponseService(sdkOptions(f)...)
			_, err := svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
			require.Error(t, err)
			require.Len(t, f.RequestsTo(fakeopenai.Responses), 1)
		})
	}
}

func TestDelayHonoursClientDeadline(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{}).WithDelay(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	svc := responses.NewResponseService(sdkOptions(f)...)
	_, err := svc.New(ctx, responses.ResponseNewParams{Model: "gpt-5"})
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.Less(t, time.Since(start), 2*time.Second)
	require.Len(t, f.Requests(), 1, "a request is recorded before its delay")
}

func TestHandleFuncUnscriptedModelsAndAuth(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	svc := responses.NewResponseService(sdkOptions(f)...)

	_, err := svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 500, apiErr.StatusCode)
	require.Equal(t, "fake_unscripted", apiErr.Code)

	f.HandleFunc(fakeopenai.Responses, func(r fakeopenai.Request) fakeopenai.Step {
		if r.JSON()["previous_response_id"] != nil {
			return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("second"))}})
		}
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("first"))}})
	})
	res, err := svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
	require.NoError(t, err)
	require.Equal(t, "first", res.OutputText())
	res, err = svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: openai.String(res.ID)})
	require.NoError(t, err)
	require.Equal(t, "second", res.OutputText())
	require.Equal(t, "resp_fake_0001", res.PreviousResponseID)

	f.SetModels("gpt-5", "gpt-5-mini")
	models := openai.NewModelService(sdkOptions(f)...)
	page, err := models.List(context.Background())
	require.NoError(t, err)
	require.Len(t, page.Data, 2)
	require.Equal(t, "gpt-5-mini", page.Data[1].ID)

	f.RequireAPIKey("sk-other-key-000000000000000000")
	_, err = svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 401, apiErr.StatusCode)
	require.Equal(t, "invalid_api_key", apiErr.Code)
	require.Contains(t, apiErr.Message, fakeopenai.MaskKey(testKey))
	require.NotContains(t, apiErr.Message, testKey)

	resp, err := http.Get(f.URL + "/nope")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode)
}

func TestStartAcceptsOnlyLoopback(t *testing.T) {
	_, err := fakeopenai.Start("0.0.0.0:0")
	require.Error(t, err)
	s, err := fakeopenai.Start("127.0.0.1:0")
	require.NoError(t, err)
	s.Close()
	s.Close() // idempotent
}

func TestValidationLikeTheRealAPI(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{Output: []any{
		fakeopenai.FunctionCall("call_1", "a", "{}"), fakeopenai.FunctionCall("call_2", "b", "{}"),
	}}))
	svc := responses.NewResponseService(sdkOptions(f)...)
	first, err := svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5"})
	require.NoError(t, err)
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{}))

	output := func(id string) responses.ResponseInputItemUnionParam {
		return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(id), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String("{}")}}}
	}
	for name, tc := range map[string]struct {
		params responses.ResponseNewParams
		msg    string
	}{
		"no model":            {responses.ResponseNewParams{}, "Missing required parameter: 'model'."},
		"unknown previous":    {responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: openai.String("resp_nope")}, "Previous response with id 'resp_nope' not found."},
		"unanswered call":     {responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: openai.String(first.ID), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{output("call_1")}}}, "No tool output found for function call call_2."},
		"unknown call":        {responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: openai.String(first.ID), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{output("call_1"), output("call_2"), output("call_3")}}}, "call_id call_3"},
		"output without prev": {responses.ResponseNewParams{Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{output("call_1")}}}, "call_id call_1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := svc.New(context.Background(), tc.params)
			var apiErr *openai.Error
			require.ErrorAs(t, err, &apiErr)
			require.Equal(t, 400, apiErr.StatusCode)
			require.Contains(t, apiErr.Message, tc.msg)
		})
	}
	require.Equal(t, 1, f.Pending(fakeopenai.Responses), "rejected requests consume no step")
	_, err = svc.New(context.Background(), responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: []responses.ResponseInputItemUnionParam{output("call_2"), output("call_1")}}})
	require.NoError(t, err)

	chat := openai.NewChatCompletionService(sdkOptions(f)...)
	assistant := openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
		ID: "call_x", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "a", Arguments: "{}"}}}}}
	for name, msgs := range map[string][]openai.ChatCompletionMessageParamUnion{
		"tool without a call": {openai.UserMessage("hi"), openai.ToolMessage("{}", "call_x")},
		"call not answered":   {openai.UserMessage("hi"), {OfAssistant: &assistant}, openai.UserMessage("and?")},
	} {
		_, err := chat.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: msgs})
		var apiErr *openai.Error
		require.ErrorAs(t, err, &apiErr, name)
		require.Equal(t, 400, apiErr.StatusCode, name)
	}

	f.SetValidation(false)
	_, err = svc.New(context.Background(), responses.ResponseNewParams{})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "fake_unscripted", apiErr.Code, "validation off: the request reaches the script")
}
