package fakeopenai

import (
	"encoding/json"
	"net/http"
)

// ChatCompletion is a Chat Completions reply (one choice). Zero fields
// take realistic defaults: ID chatcmpl-fake_…, Model echoed from the
// request, FinishReason "tool_calls" when there are tool calls else
// "stop", Usage derived from the sizes.
type ChatCompletion struct {
	ID      string
	Model   string
	Content string // "" is sent as null
	Refusal string // "" is sent as null
	// Reasoning is sent as message.reasoning_content (DeepSeek, vLLM).
	Reasoning    string
	ToolCalls    []ChatToolCall
	Citations    []URLCitation
	FinishReason string
	Usage        *Usage
}

// ChatToolCall is a tool call of an assistant message.
type ChatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction is the function of a tool call.
type ChatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolCall is a function tool call. A string args is sent verbatim;
// anything else is marshaled.
func ToolCall(id, name string, args any) ChatToolCall {
	return ChatToolCall{ID: id, Type: "function", Function: ChatFunction{Name: name, Arguments: argString(args)}}
}

// ChatReply answers POST /v1/chat/completions with c.
func ChatReply(c ChatCompletion) Step {
	return newStep(http.StatusOK, func(s *Server, req Request) []byte { return s.buildChat(c, req) })
}

type chatAnnotation struct {
	Type        string `json:"type"`
	URLCitation struct {
		EndIndex   int    `json:"end_index"`
		StartIndex int    `json:"start_index"`
		Title      string `json:"title"`
		URL        string `json:"url"`
	} `json:"url_citation"`
}

type chatMessage struct {
	Role             string           `json:"role"`
	Content          *string          `json:"content"`
	Refusal          *string          `json:"refusal"`
	ReasoningContent string           `json:"reasoning_content,omitempty"`
	ToolCalls        []ChatToolCall   `json:"tool_calls,omitempty"`
	Annotations      []chatAnnotation `json:"annotations"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	Logprobs     any         `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type chatUsage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
}

type wireChat struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	Choices           []chatChoice `json:"choices"`
	Usage             chatUsage    `json:"usage"`
	ServiceTier       string       `json:"service_tier"`
	SystemFingerprint string       `json:"system_fingerprint"`
}

func (s *Server) buildChat(c ChatCompletion, req Request) []byte {
	var in struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(req.Body, &in)
	w := wireChat{ID: c.ID, Object: "chat.completion", Created: s.created, Model: c.Model, ServiceTier: "default", SystemFingerprint: "fp_fake"}
	if w.ID == "" {
		w.ID = "chatcmpl-" + s.nextID("c")
	}
	if w.Model == "" {
		w.Model = in.Model
	}
	msg := chatMessage{Role: "assistant", ReasoningContent: c.Reasoning, Annotations: []chatAnnotation{}}
	outChars := len(c.Content) + len(c.Reasoning)
	if c.Content != "" {
		msg.Content = &c.Content
	}
	if c.Refusal != "" {
		msg.Refusal = &c.Refusal
	}
	for _, tc := range c.ToolCalls {
		if tc.ID == "" {
			tc.ID = s.nextID("call")
		}
		outChars += len(tc.Function.Arguments)
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	for _, cit := range c.Citations {
		var a chatAnnotation
		a.Type = "url_citation"
		a.URLCitation.URL, a.URLCitation.Title = cit.URL, cit.Title
		a.URLCitation.StartIndex, a.URLCitation.EndIndex = cit.StartIndex, cit.EndIndex
		msg.Annotations = append(msg.Annotations, a)
	}
	finish := c.FinishReason
	if finish == "" {
		finish = "stop"
		if len(c.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	w.Choices = []chatChoice{{Index: 0, Message: msg, FinishReason: finish}}
	u := Usage{InputTokens: len(req.Body)/4 + 1, OutputTokens: outChars/4 + 1}
	if c.Usage != nil {
		u = *c.Usage
	}
	w.Usage = chatUsage{
		PromptTokens:            u.InputTokens,
		CompletionTokens:        u.OutputTokens,
		TotalTokens:             u.InputTokens + u.OutputTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": u.CachedTokens, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": u.ReasoningTokens, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
	return mustJSON(w)
}
