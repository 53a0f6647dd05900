package llm_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/parse"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

// chatTurn is turn() for a compatible server: no native web search, a
// search function tool instead.
func chatTurn() llm.Request {
	req := turn()
	req.Model = "qwen3:14b"
	req.WebSearch = nil
	req.ReasoningSummary = ""
	req.Tools = append(req.Tools, llm.Tool{Name: "web_search", Description: "Search the web.", Parameters: searchSchema()})
	return req
}

func TestChatToolRoundsAndForcedFinalAnswer(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.ChatCompletions,
		fakeopenai.ChatReply(fakeopenai.ChatCompletion{
			Model:     "qwen3:14b-q4_K_M",
			Reasoning: "The boiling point claim looks wrong; search first.",
			Content:   "Let me check.",
			ToolCalls: []fakeopenai.ChatToolCall{
				fakeopenai.ToolCall("call_s1", "web_search", `{"query":"boiling point of water at sea level"}`),
				// A local model wrapping its arguments in a fence: parsed tolerantly.
				fakeopenai.ToolCall("call_c1", tools.SubmitCorrectionName, "```json\n"+correctionArgs+"\n```"),
			},
			Usage: &fakeopenai.Usage{InputTokens: 900, CachedTokens: 0, OutputTokens: 120, ReasoningTokens: 40},
		}),
		fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: "<think>done</think>\n```json\n{\"approved\": true, \"reason\": \"100 °C at 1 atm.\"}\n```"}),
	)
	p := llm.ChatCompletions{}
	req := chatTurn()
	first, err := p.Create(context.Background(), creds(f), req)
	require.NoError(t, err)
	require.Equal(t, llm.ProviderChatCompletions, first.Provider)
	require.Equal(t, "chatcmpl-c_fake_0001", first.ID)
	require.Equal(t, "qwen3:14b-q4_K_M", first.Model)
	require.Equal(t, "tool_calls", first.FinishReason)
	require.Equal(t, llm.StatusCompleted, first.Status)
	require.Equal(t, llm.Usage{InputTokens: 900, OutputTokens: 120, ReasoningTokens: 40, TotalTokens: 1020}, first.Usage)
	require.Equal(t, []string{"The boiling point claim looks wrong; search first."}, first.ReasoningSummaries())
	require.Equal(t, "Let me check.", first.Text())
	calls := first.ToolCalls()
	require.Len(t, calls, 2)
	require.Equal(t, "call_s1", calls[0].CallID)
	require.JSONEq(t, `{"query":"boiling point of water at sea level"}`, string(calls[0].JSON))
	require.Equal(t, "```json\n"+correctionArgs+"\n```", calls[1].Arguments, "the raw arguments are kept")
	c, err := tools.DecodeCorrection(calls[1].JSON)
	require.NoError(t, err)
	require.Equal(t, "Boiling point", c.Sources[0].Title)

	sent, _ := f.LastRequest(fakeopenai.ChatCompletions)
	require.Equal(t, string(sent.Body), string(first.RawRequest))
	requireKeyOnlyInAuthorization(t, sent)
	golden(t, "chat_create_request.golden.json", first.RawRequest)

	// The round cap is hit: feed the outputs back and force an answer.
	final := req
	final.ForceFinalAnswer = true
	final.Input = []llm.Message{llm.UserText(`No more tools. Answer with {"approved": boolean, "reason": string}.`)}
	// Continue needs nothing but the audit record of the first turn.
	audit, err := json.Marshal(first)
	require.NoError(t, err)
	var restored llm.Response
	require.NoError(t, json.Unmarshal(audit, &restored))
	second, err := p.Continue(context.Background(), creds(f), final, &restored, []llm.ToolOutput{
		{CallID: "call_s1", Output: `[{"url":"https://en.wikipedia.org/wiki/Boiling_point","title":"Boiling point"}]`},
		{CallID: "call_c1", Output: `{"accepted":true}`},
	})
	require.NoError(t, err)
	v, err := parse.Decode(second.Text(), tools.VerdictSchema())
	require.NoError(t, err)
	require.JSONEq(t, `{"approved": true, "reason": "100 °C at 1 atm."}`, string(v.JSON))

	var body struct {
		Tools      json.RawMessage   `json:"tools"`
		ToolChoice json.RawMessage   `json:"tool_choice"`
		Messages   []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(second.RawRequest, &body))
	require.Nil(t, body.Tools, "a forced final answer offers no tools")
	require.Nil(t, body.ToolChoice)
	require.Len(t, body.Messages, 6) // system, user, assistant with tool calls, two tool results, user
	var firstSent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(first.RawRequest, &firstSent))
	require.Equal(t, firstSent.Messages, body.Messages[:2], "the history is replayed byte for byte")
	golden(t, "chat_continue_final_request.golden.json", second.RawRequest)
}

func TestChatOptions(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.HandleFunc(fakeopenai.ChatCompletions, func(fakeopenai.Request) fakeopenai.Step {
		return fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: `{"approved":false,"reason":"No evidence."}`})
	})
	req := llm.Request{
		Model:           "llama3.1",
		Input:           []llm.Message{llm.UserText("Judge this.")},
		Tools:           []llm.Tool{tools.SubmitCorrection()},
		ToolChoice:      llm.ToolChoiceRequired,
		MaxOutputTokens: 512,
		OutputSchema:    &llm.OutputSchema{Name: "verdict", Schema: tools.VerdictSchema()},
	}
	res, err := llm.ChatCompletions{LegacyMaxTokens: true, NoStrict: true}.Create(context.Background(), llm.Credentials{BaseURL: f.URL}, req)
	require.NoError(t, err)
	require.JSONEq(t, `{"approved":false,"reason":"No evidence."}`, string(res.OutputJSON))
	sent, _ := f.LastRequest(fakeopenai.ChatCompletions)
	m := sent.JSON()
	require.EqualValues(t, 512, m["max_tokens"])
	require.NotContains(t, m, "max_completion_tokens")
	require.Equal(t, "required", m["tool_choice"])
	fn := m["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)
	require.NotContains(t, fn, "strict")
	rf := m["response_format"].(map[string]any)
	require.Equal(t, "json_schema", rf["type"])
	require.NotContains(t, rf["json_schema"], "strict")

	_, err = llm.ChatCompletions{NoResponseFormat: true}.Create(context.Background(), llm.Credentials{BaseURL: f.URL}, req)
	require.NoError(t, err)
	sent, _ = f.LastRequest(fakeopenai.ChatCompletions)
	require.NotContains(t, sent.JSON(), "response_format")
	require.EqualValues(t, 512, sent.JSON()["max_completion_tokens"])
	require.Equal(t, true, sent.JSON()["tools"].([]any)[0].(map[string]any)["function"].(map[string]any)["strict"])
}

func TestChatRejectsNativeWebSearch(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	res, err := llm.ChatCompletions{}.Create(context.Background(), creds(f), turn())
	require.Nil(t, res)
	e, ok := llm.AsError(err)
	require.True(t, ok)
	require.Equal(t, llm.KindInvalidRequest, e.Kind)
	require.Contains(t, e.Message, "web search")
	require.Empty(t, f.Requests())
}

func TestChatCitationsAndMissingCallIDs(t *testing.T) {
	f := fakeopenai.NewForTest(t)
	f.Enqueue(fakeopenai.ChatCompletions, fakeopenai.ChatReply(fakeopenai.ChatCompletion{
		Content:   "It boils at 100 °C.",
		Citations: []fakeopenai.URLCitation{fakeopenai.Citation("https://en.wikipedia.org/wiki/Boiling_point", "Boiling point", 13, 19)},
		ToolCalls: []fakeopenai.ChatToolCall{{Type: "function", ID: "", Function: fakeopenai.ChatFunction{Name: "web_search", Arguments: `{"query":"q"}`}}},
	}))
	// The fake fills empty ids like the real API; a server that omits them
	// is simulated by a raw body.
	res, err := llm.ChatCompletions{}.Create(context.Background(), creds(f), chatTurn())
	require.NoError(t, err)
	require.Equal(t, []llm.Citation{{URL: "https://en.wikipedia.org/wiki/Boiling_point", Title: "Boiling point", StartIndex: 13, EndIndex: 19}}, res.Citations())

	f.Enqueue(fakeopenai.ChatCompletions, fakeopenai.Raw(200, "application/json", []byte(
		`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",`+
			`"message":{"role":"assistant","content":null,"tool_calls":[{"type":"function","function":{"name":"web_search","arguments":"{\"query\":\"q\"}"}}]}}]}`)))
	res, err = llm.ChatCompletions{}.Create(context.Background(), creds(f), chatTurn())
	require.NoError(t, err)
	require.Equal(t, "call_0", res.ToolCalls()[0].CallID)
	require.Empty(t, res.Text())
}

func searchSchema() *schema.Schema {
	return schema.Obj("A web search.", schema.Prop("query", schema.Str("What to search for.")))
}
