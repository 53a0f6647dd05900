package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// ChatCompletions calls an OpenAI-compatible Chat Completions endpoint
// (POST {base}/chat/completions): OpenAI, OpenRouter, LM Studio, Ollama,
// vLLM, selected by Credentials.BaseURL and Request.Model. There is no
// native web search (Request.WebSearch is rejected): offer a search
// function tool instead. The zero value is ready to use.
//
// Continue replays the whole conversation, as the API is stateless: the
// messages of prev.RawRequest, then the assistant message of prev (its
// text and tool calls exactly as the model wrote them, without reasoning
// fields), one tool message per output, then req.Input. Instructions are
// part of the replayed messages and are not added again. Everything it uses
// is in the audit log (prev.RawRequest and prev.Output).
//
// Tool arguments are parsed tolerantly (code fences, prose, think blocks,
// see package parse) because compatible servers rarely enforce strict
// schemas; ToolCall.JSON holds the extracted arguments. Response.Text is
// the content exactly as the model wrote it (<think> blocks included):
// extract answers with parse.Decode. Non-standard reasoning fields
// (reasoning_content, reasoning) become a reasoning item.
//
// Providers hold no per-call state and are safe for concurrent use.
type ChatCompletions struct {
	// HTTPClient carries the requests (nil: a client without an overall
	// timeout; bound calls with the context).
	HTTPClient *http.Client
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens,
	// for servers that only know the older field.
	LegacyMaxTokens bool
	// NoStrict leaves "strict": true out of function definitions, for
	// servers that reject the field.
	NoStrict bool
	// NoResponseFormat leaves response_format out when Request.OutputSchema
	// is set (servers without json_schema support); the answer is still
	// parsed tolerantly and checked against the schema.
	NoResponseFormat bool
}

var _ Provider = ChatCompletions{}

// Name implements Provider.
func (ChatCompletions) Name() string { return ProviderChatCompletions }

// Create implements Provider.
func (p ChatCompletions) Create(ctx context.Context, cred Credentials, req Request) (*Response, error) {
	if err := checkRequest(ProviderChatCompletions, req); err != nil {
		return nil, err
	}
	var msgs []openai.ChatCompletionMessageParamUnion
	if req.Instructions != "" {
		msgs = append(msgs, openai.SystemMessage(req.Instructions))
	}
	more, err := chatMessages(req.Input)
	if err != nil {
		return nil, invalidRequest(ProviderChatCompletions, "%v", err)
	}
	return p.send(ctx, cred, req, append(msgs, more...))
}

// Continue implements Provider (full replay, see the type's comment).
func (p ChatCompletions) Continue(ctx context.Context, cred Credentials, req Request, prev *Response, outputs []ToolOutput) (*Response, error) {
	const provider = ProviderChatCompletions
	if err := checkRequest(provider, req); err != nil {
		return nil, err
	}
	if err := checkContinue(provider, prev, outputs); err != nil {
		return nil, err
	}
	var sent struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(prev.RawRequest, &sent); err != nil || len(sent.Messages) == 0 {
		return nil, invalidRequest(provider, "the previous response has no replayable request")
	}
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(sent.Messages)+len(outputs)+2)
	for _, raw := range sent.Messages {
		msgs = append(msgs, param.Override[openai.ChatCompletionMessageParamUnion](raw))
	}
	assistant := openai.ChatCompletionAssistantMessageParam{}
	if text := prev.Text(); text != "" {
		assistant.Content = openai.ChatCompletionAssistantMessageParamContentUnion{OfString: param.NewOpt(text)}
	}
	for _, c := range prev.ToolCalls() {
		assistant.ToolCalls = append(assistant.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID:       c.CallID,
			Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
		}})
	}
	msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfAssistant: &assistant})
	for _, o := range outputs {
		msgs = append(msgs, openai.ToolMessage(o.Output, o.CallID))
	}
	more, err := chatMessages(req.Input)
	if err != nil {
		return nil, invalidRequest(provider, "%v", err)
	}
	return p.send(ctx, cred, req, append(msgs, more...))
}

func chatMessages(in []Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	for _, m := range in {
		texts := make([]string, 0, len(m.Parts))
		hasImage := false
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
			hasImage = hasImage || p.Image != nil
		}
		joined := strings.Join(texts, "\n\n")
		switch m.Role {
		case RoleSystem:
			out = append(out, openai.SystemMessage(joined))
		case RoleDeveloper:
			out = append(out, openai.DeveloperMessage(joined))
		case RoleAssistant:
			out = append(out, openai.AssistantMessage(joined))
		case RoleUser, "":
			if !hasImage && len(m.Parts) == 1 {
				out = append(out, openai.UserMessage(m.Parts[0].Text))
				continue
			}
			var parts []openai.ChatCompletionContentPartUnionParam
			for _, p := range m.Parts {
				if p.Image == nil {
					parts = append(parts, openai.TextContentPart(p.Text))
					continue
				}
				u, err := p.Image.url()
				if err != nil {
					return nil, err
				}
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: u, Detail: p.Image.detail()}))
			}
			out = append(out, openai.UserMessage(parts))
		default:
			return nil, fmt.Errorf("unknown role %q", m.Role)
		}
	}
	return out, nil
}

func (p ChatCompletions) params(req Request, msgs []openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	params := openai.ChatCompletionNewParams{Model: req.Model, Messages: msgs}
	if !req.ForceFinalAnswer && len(req.Tools) > 0 {
		for _, t := range req.Tools {
			def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(t.Parameters.Map())}
			if t.Description != "" {
				def.Description = param.NewOpt(t.Description)
			}
			if !p.NoStrict {
				def.Strict = param.NewOpt(true)
			}
			params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
		}
		if req.ToolChoice != "" {
			params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: param.NewOpt(string(req.ToolChoice))}
		}
		if req.ParallelToolCalls != nil {
			params.ParallelToolCalls = param.NewOpt(*req.ParallelToolCalls)
		}
	}
	if req.MaxOutputTokens > 0 {
		if p.LegacyMaxTokens {
			params.MaxTokens = param.NewOpt(int64(req.MaxOutputTokens))
		} else {
			params.MaxCompletionTokens = param.NewOpt(int64(req.MaxOutputTokens))
		}
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if o := req.OutputSchema; o != nil && !p.NoResponseFormat {
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: o.Name, Schema: o.Schema.Map()}
		if !p.NoStrict {
			js.Strict = param.NewOpt(true)
		}
		if o.Description != "" {
			js.Description = param.NewOpt(o.Description)
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	}
	return params
}

func (p ChatCompletions) send(ctx context.Context, cred Credentials, req Request, msgs []openai.ChatCompletionMessageParamUnion) (*Response, error) {
	const provider = ProviderChatCompletions
	if req.WebSearch != nil {
		return nil, invalidRequest(provider, "Chat Completions has no native web search; offer a search function tool")
	}
	x := &exchange{}
	red := redactor{key: cred.APIKey.Reveal()}
	opts, err := requestOptions(cred, p.HTTPClient, x)
	if err != nil {
		return nil, invalidRequest(provider, "%v", err)
	}
	svc := openai.NewChatCompletionService(opts...)
	res, callErr := svc.New(ctx, p.params(req, msgs))

	out, err := x.response(ctx, provider, red, callErr)
	if err != nil {
		return out, err
	}
	// Some gateways (OpenRouter) answer 200 with an error object.
	if pe, ok := parseProviderError(x.body); ok && (res == nil || len(res.Choices) == 0) {
		status, _ := strconv.Atoi(rawScalar(pe.Code))
		e := httpError(provider, x.status, x.header, x.body, red)
		e.StatusCode = x.status
		if status >= 400 && status < 600 {
			e.Kind, e.Class = classifyStatus(status, e.Code, e.Type)
		} else {
			e.Kind, e.Class = KindServer, Transient
		}
		return out, e
	}
	if res == nil || len(res.Choices) == 0 {
		return out, bodyError(provider, x)
	}
	normalizeChat(out, res, x.body)
	if out.Status == StatusIncomplete {
		return out, &Error{Provider: provider, Class: Transient, Kind: KindIncomplete, StatusCode: x.status, RequestID: out.RequestID, Code: out.FinishReason,
			Message: "the response is incomplete: finish_reason " + out.FinishReason}
	}
	if err := refusalError(provider, out); err != nil {
		return out, err
	}
	if err := checkToolCalls(provider, req.Tools, out, true); err != nil {
		return out, err
	}
	if err := checkOutput(provider, req, out, true); err != nil {
		return out, err
	}
	return out, nil
}

func normalizeChat(out *Response, res *openai.ChatCompletion, body []byte) {
	out.ID = res.ID
	out.Model = res.Model
	c := res.Choices[0]
	out.FinishReason = c.FinishReason
	out.Status = StatusCompleted
	switch c.FinishReason {
	case "length", "content_filter":
		out.Status, out.IncompleteReason = StatusIncomplete, c.FinishReason
	}
	u := res.Usage
	out.Usage = Usage{
		InputTokens:       u.PromptTokens,
		CachedInputTokens: u.PromptTokensDetails.CachedTokens,
		OutputTokens:      u.CompletionTokens,
		ReasoningTokens:   u.CompletionTokensDetails.ReasoningTokens,
		TotalTokens:       u.TotalTokens,
	}
	msg := c.Message
	rawMsg := json.RawMessage(msg.RawJSON())
	if r := chatReasoning(body); r != "" {
		out.Output = append(out.Output, OutputItem{Type: ItemReasoning, Summary: []string{r}})
	}
	if msg.Content != "" || msg.Refusal != "" {
		it := OutputItem{Type: ItemMessage, Raw: rawMsg}
		if msg.Content != "" {
			part := ContentPart{Type: "text", Text: msg.Content}
			for _, a := range msg.Annotations {
				if a.Type == "url_citation" {
					uc := a.URLCitation
					part.Citations = append(part.Citations, Citation{URL: uc.URL, Title: uc.Title, StartIndex: int(uc.StartIndex), EndIndex: int(uc.EndIndex)})
				}
			}
			it.Content = append(it.Content, part)
		}
		if msg.Refusal != "" {
			it.Content = append(it.Content, ContentPart{Type: "refusal", Refusal: msg.Refusal})
		}
		out.Output = append(out.Output, it)
	}
	for i, tc := range msg.ToolCalls {
		if tc.Type != "function" && tc.Type != "" {
			out.Output = append(out.Output, OutputItem{Type: ItemOther, Raw: json.RawMessage(tc.RawJSON())})
			continue
		}
		id := tc.ID
		if id == "" {
			// Some local servers omit ids; the replay in Continue uses this
			// one consistently.
			id = "call_" + strconv.Itoa(i)
		}
		out.Output = append(out.Output, OutputItem{Type: ItemFunctionCall, Raw: json.RawMessage(tc.RawJSON()),
			ToolCall: &ToolCall{CallID: id, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
}

// chatReasoning reads the non-standard reasoning text some servers return
// next to the content (reasoning_content: DeepSeek, vLLM; reasoning:
// OpenRouter, Ollama).
func chatReasoning(body []byte) string {
	var env struct {
		Choices []struct {
			Message map[string]json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Choices) == 0 {
		return ""
	}
	for _, k := range []string{"reasoning_content", "reasoning"} {
		var s string
		if raw, ok := env.Choices[0].Message[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
