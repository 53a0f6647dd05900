package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

const answer = "At sea level water boils at 100 °C, not 90 °C."

func scriptHappyTurn(f *fakeopenai.Server) {
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{
		Model: "gpt-5-2025-08-07",
		Output: []any{
			fakeopenai.Reasoning("The claim conflicts with standard references.", "Two sources agree."),
			fakeopenai.WebSearchCall("boiling point of water at sea level", "https://en.wikipedia.org/wiki/Boiling_point", "https://www.britannica.com/science/boiling-point"),
			fakeopenai.Message(fakeopenai.Text(answer,
				fakeopenai.CiteQuote(answer, "100 °C", "https://en.wikipedia.org/wiki/Boiling_point", "Boiling point - Wikipedia"),
				fakeopenai.CiteQuote(answer, "not 90 °C", "https://www.britannica.com/science/boiling-point", "Boiling point | Britannica"))),
			fakeopenai.FunctionCall("call_sub1", tools.SubmitCorrectionName, correctionArgs),
			fakeopenai.FunctionCall("call_ret1", tools.RetainCorrectionName, map[string]string{"id": "corr-7"}),
		},
		Usage: &fakeopenai.Usage{InputTokens: 1200, CachedTokens: 1024, OutputTokens: 300, ReasoningTokens: 128},
	}))
}

func TestResponsesCreateNormalizesTheTurn(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	scriptHappyTurn(f)

	res, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), turn())
	require.NoError(t, err)

	require.Equal(t, llm.ProviderOpenAIResponses, res.Provider)
	require.Equal(t, "resp_fake_0001", res.ID)
	require.Equal(t, "gpt-5-2025-08-07", res.Model)
	require.Equal(t, llm.StatusCompleted, res.Status)
	require.Equal(t, 200, res.HTTPStatus)
	require.Equal(t, "req_fake_0001", res.RequestID)
	require.Equal(t, llm.Usage{InputTokens: 1200, CachedInputTokens: 1024, OutputTokens: 300, ReasoningTokens: 128, TotalTokens: 1500}, res.Usage)

	var types []llm.ItemType
	for _, it := range res.Output {
		types = append(types, it.Type)
		require.NotEmpty(t, it.Raw)
		require.True(t, json.Valid(it.Raw))
	}
	require.Equal(t, []llm.ItemType{llm.ItemReasoning, llm.ItemWebSearchCall, llm.ItemMessage, llm.ItemFunctionCall, llm.ItemFunctionCall}, types)

	require.Equal(t, []string{"The claim conflicts with standard references.", "Two sources agree."}, res.ReasoningSummaries())
	require.Equal(t, []llm.WebSearchCall{{Status: "completed", Action: "search", Query: "boiling point of water at sea level",
		Sources: []string{"https://en.wikipedia.org/wiki/Boiling_point", "https://www.britannica.com/science/boiling-point"}}}, res.WebSearches())
	require.Equal(t, answer, res.Text())
	require.Equal(t, []llm.Citation{
		{URL: "https://en.wikipedia.org/wiki/Boiling_point", Title: "Boiling point - Wikipedia", StartIndex: 28, EndIndex: 34},
		{URL: "https://www.britannica.com/science/boiling-point", Title: "Boiling point | Britannica", StartIndex: 36, EndIndex: 45},
	}, res.Citations())
	require.Empty(t, res.Refusal())

	calls := res.ToolCalls()
	require.Len(t, calls, 2)
	require.Equal(t, "call_sub1", calls[0].CallID)
	require.Equal(t, "fc_fake_0005", calls[0].ItemID)
	require.Equal(t, tools.SubmitCorrectionName, calls[0].Name)
	require.Equal(t, correctionArgs, calls[0].Arguments, "raw arguments are kept byte for byte")
	c, err := tools.DecodeCorrection(calls[0].JSON)
	require.NoError(t, err)
	require.Equal(t, "Water boils at 90 degrees at sea level.", c.Text)
	require.JSONEq(t, `{"id":"corr-7"}`, string(calls[1].JSON))

	// The exact bytes: what went over the wire, and what came back.
	sent, ok := f.LastRequest(fakeopenai.Responses)
	require.True(t, ok)
	require.Equal(t, string(sent.Body), string(res.RawRequest))
	requireKeyOnlyInAuthorization(t, sent)
	var back map[string]any
	require.NoError(t, json.Unmarshal(res.RawResponse, &back))
	require.Equal(t, "resp_fake_0001", back["id"])
	require.Positive(t, res.Duration)

	golden(t, "responses_create_request.golden.json", res.RawRequest)
}

func TestResponsesContinueSendsToolOutputs(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	scriptHappyTurn(f)
	f.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{
		Output: []any{fakeopenai.Message(fakeopenai.Text("Done."))},
	}))
	p := llm.OpenAIResponses{}
	req := turn()
	first, err := p.Create(context.Background(), creds(f), req)
	require.NoError(t, err)

	next := req
	next.Input = []llm.Message{llm.UserText("Continue checking the rest of the post.")}
	audit, err := json.Marshal(first)
	require.NoError(t, err)
	var restored llm.Response
	require.NoError(t, json.Unmarshal(audit, &restored))
	require.Equal(t, *first, restored, "a Response survives the audit log unchanged")
	second, err := p.Continue(context.Background(), creds(f), next, &restored, []llm.ToolOutput{
		{CallID: "call_sub1", Output: `{"accepted":true,"claim_id":"c-1"}`},
		{CallID: "call_ret1", Output: `{"retained":true}`},
	})
	require.NoError(t, err)
	require.Equal(t, "Done.", second.Text())

	body := map[string]any{}
	require.NoError(t, json.Unmarshal(second.RawRequest, &body))
	require.Equal(t, first.ID, body["previous_response_id"])
	require.Equal(t, req.Instructions, body["instructions"], "instructions are not inherited through previous_response_id")
	require.Len(t, body["tools"], 3, "tools are sent again")
	input := body["input"].([]any)
	require.Len(t, input, 3)
	require.Equal(t, map[string]any{"type": "function_call_output", "call_id": "call_sub1", "output": `{"accepted":true,"claim_id":"c-1"}`}, input[0])
	require.Equal(t, "call_ret1", input[1].(map[string]any)["call_id"])
	require.Equal(t, "user", input[2].(map[string]any)["role"])

	// The fake echoes previous_response_id like the API.
	var back map[string]any
	require.NoError(t, json.Unmarshal(second.RawResponse, &back))
	require.Equal(t, first.ID, back["previous_response_id"])

	golden(t, "responses_continue_request.golden.json", second.RawRequest)
}

func TestContinueChecksTheOutputs(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	scriptHappyTurn(f)
	first, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), turn())
	require.NoError(t, err)
	chatPrev := *first
	chatPrev.Provider = llm.ProviderChatCompletions

	for name, tc := range map[string]struct {
		prev    *llm.Response
		outputs []llm.ToolOutput
		want    string
	}{
		"missing output": {first, []llm.ToolOutput{{CallID: "call_sub1", Output: "{}"}}, `no output for tool call "call_ret1"`},
		"unknown call":   {first, []llm.ToolOutput{{CallID: "call_sub1"}, {CallID: "call_ret1"}, {CallID: "call_x"}}, `unknown tool call "call_x"`},
		"duplicate":      {first, []llm.ToolOutput{{CallID: "call_sub1"}, {CallID: "call_sub1"}, {CallID: "call_ret1"}}, "two outputs"},
		"no previous":    {nil, nil, "without a previous response"},
		"other provider": {&chatPrev, nil, "came from"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := llm.OpenAIResponses{}.Continue(context.Background(), creds(f), turn(), tc.prev, tc.outputs)
			require.Nil(t, res)
			e, ok := llm.AsError(err)
			require.True(t, ok)
			require.Equal(t, llm.KindInvalidRequest, e.Kind)
			require.False(t, e.Retryable())
			require.Contains(t, e.Message, tc.want)
		})
	}
	require.Len(t, f.Requests(), 1, "nothing was sent for invalid continuations")
}

func TestResponsesForceFinalAnswerAndToolChoice(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.HandleFunc(fakeopenai.Responses, func(fakeopenai.Request) fakeopenai.Step {
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("final"))}})
	})
	req := turn()
	req.ForceFinalAnswer = true
	req.ToolChoice = llm.ToolChoiceRequired
	_, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), req)
	require.NoError(t, err)
	sent, _ := f.LastRequest(fakeopenai.Responses)
	require.Equal(t, "none", sent.JSON()["tool_choice"])
	require.Len(t, sent.JSON()["tools"], 3)

	req.ForceFinalAnswer = false
	_, err = llm.OpenAIResponses{}.Create(context.Background(), creds(f), req)
	require.NoError(t, err)
	sent, _ = f.LastRequest(fakeopenai.Responses)
	require.Equal(t, "required", sent.JSON()["tool_choice"])
	require.Equal(t, []any{"web_search_call.action.sources"}, sent.JSON()["include"])
}

func TestResponsesStructuredVerdict(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.Responses,
		fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(`{"approved":true,"reason":"The sources agree."}`))}}),
		fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(`{"approved":"yes"}`))}}),
	)
	req := llm.Request{
		Model:        "gpt-5-mini",
		Instructions: "Judge the correction.",
		Input:        []llm.Message{llm.UserText("Claim: ...")},
		OutputSchema: &llm.OutputSchema{Name: "verdict", Schema: tools.VerdictSchema()},
	}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), creds(f), req)
	require.NoError(t, err)
	v, err := tools.DecodeVerdict(res.OutputJSON)
	require.NoError(t, err)
	require.True(t, v.Approved)
	sent, _ := f.LastRequest(fakeopenai.Responses)
	format := sent.JSON()["text"].(map[string]any)["format"].(map[string]any)
	require.Equal(t, "json_schema", format["type"])
	require.Equal(t, "verdict", format["name"])
	require.Equal(t, true, format["strict"])

	res, err = llm.OpenAIResponses{}.Create(context.Background(), creds(f), req)
	require.NotNil(t, res)
	e, ok := llm.AsError(err)
	require.True(t, ok)
	require.Equal(t, llm.KindInvalidOutput, e.Kind)
	require.False(t, e.Retryable())
	require.Nil(t, res.OutputJSON)
}

func TestInvalidRequestsAreNotSent(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	open := tools.SubmitCorrection()
	open.Parameters.AllowAdditional = true
	for name, mutate := range map[string]func(*llm.Request){
		"no model":          func(r *llm.Request) { r.Model = "" },
		"non-strict schema": func(r *llm.Request) { r.Tools = []llm.Tool{open} },
		"bad tool name":     func(r *llm.Request) { r.Tools[0].Name = "submit correction" },
		"duplicate tool":    func(r *llm.Request) { r.Tools = append(r.Tools, tools.SubmitCorrection()) },
		"empty message":     func(r *llm.Request) { r.Input = []llm.Message{{}} },
		"image without type": func(r *llm.Request) {
			r.Input = []llm.Message{{Parts: []llm.Part{{Image: &llm.Image{Data: []byte{1}}}}}}
		},
		"image in a system message": func(r *llm.Request) {
			r.Input = []llm.Message{{Role: llm.RoleSystem, Parts: []llm.Part{llm.ImageURLPart("https://x.org/a.png")}}}
		},
		"unknown tool choice": func(r *llm.Request) { r.ToolChoice = "sometimes" },
	} {
		t.Run(name, func(t *testing.T) {
			req := turn()
			mutate(&req)
			for _, p := range []llm.Provider{llm.OpenAIResponses{}, llm.ChatCompletions{}} {
				req := req
				req.WebSearch = nil
				res, err := p.Create(context.Background(), creds(f), req)
				require.Nil(t, res)
				e, ok := llm.AsError(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, llm.KindInvalidRequest, e.Kind)
				require.Equal(t, llm.NonRetryable, e.Class)
			}
		})
	}
	res, err := llm.OpenAIResponses{}.Create(context.Background(), llm.Credentials{BaseURL: "ftp://x"}, turn())
	require.Nil(t, res)
	require.ErrorContains(t, err, "base URL")
	require.Empty(t, f.Requests())
}
