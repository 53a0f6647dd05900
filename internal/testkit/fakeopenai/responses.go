package fakeopenai

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// Response is a Responses API reply. Zero fields take realistic defaults:
// ID resp_fake_…, Model echoed from the request, Status "completed" (or
// "incomplete" when IncompleteReason is set, "failed" when Error is set),
// Usage derived from the sizes.
type Response struct {
	ID     string
	Model  string
	Status string
	// IncompleteReason fills incomplete_details (max_output_tokens,
	// content_filter).
	IncompleteReason string
	// Error is the error of a failed response (status 200, status "failed").
	Error *ResponseError
	// Output items: MessageItem, ReasoningItem, FunctionCallItem,
	// WebSearchCallItem, or any value marshaling to an output item.
	Output []any
	Usage  *Usage
}

// ResponseError is the error object of a failed response.
type ResponseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Usage in tokens (Responses and Chat Completions).
type Usage struct {
	InputTokens     int
	CachedTokens    int
	OutputTokens    int
	ReasoningTokens int
}

// MessageItem is an assistant message output item.
type MessageItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Content []any  `json:"content"`
	Role    string `json:"role"`
}

// OutputText is an output_text content part.
type OutputText struct {
	Type        string        `json:"type"`
	Annotations []URLCitation `json:"annotations"`
	Logprobs    []any         `json:"logprobs"`
	Text        string        `json:"text"`
}

// RefusalPart is a refusal content part.
type RefusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

// URLCitation is a url_citation annotation (offsets in characters).
type URLCitation struct {
	Type       string `json:"type"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	Title      string `json:"title"`
	URL        string `json:"url"`
}

// ReasoningItem is a reasoning output item with summaries.
type ReasoningItem struct {
	ID      string        `json:"id"`
	Type    string        `json:"type"`
	Summary []SummaryText `json:"summary"`
}

// SummaryText is one reasoning summary.
type SummaryText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// FunctionCallItem is a function_call output item.
type FunctionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// WebSearchCallItem is a web_search_call output item.
type WebSearchCallItem struct {
	ID     string          `json:"id"`
	Type   string          `json:"type"`
	Status string          `json:"status"`
	Action WebSearchAction `json:"action"`
}

// WebSearchAction is what a web search did.
type WebSearchAction struct {
	Type    string      `json:"type"`
	Query   string      `json:"query,omitempty"`
	Queries []string    `json:"queries,omitempty"`
	URL     string      `json:"url,omitempty"`
	Sources []WebSource `json:"sources,omitempty"`
}

// WebSource is a source a web search consulted.
type WebSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Message is an assistant message item from OutputText and RefusalPart
// parts.
func Message(parts ...any) MessageItem {
	return MessageItem{Type: "message", Status: "completed", Role: "assistant", Content: parts}
}

// Text is an output_text part with citations.
func Text(text string, citations ...URLCitation) OutputText {
	if citations == nil {
		citations = []URLCitation{}
	}
	return OutputText{Type: "output_text", Text: text, Annotations: citations, Logprobs: []any{}}
}

// Refusal is a refusal part.
func Refusal(text string) RefusalPart { return RefusalPart{Type: "refusal", Refusal: text} }

// Citation is a url_citation over characters [start, end) of the text.
func Citation(url, title string, start, end int) URLCitation {
	return URLCitation{Type: "url_citation", URL: url, Title: title, StartIndex: start, EndIndex: end}
}

// CiteQuote is a url_citation over the first occurrence of quote in text
// (character offsets, as the API counts them). It panics if quote is not in
// text: a script error.
func CiteQuote(text, quote, url, title string) URLCitation {
	i := strings.Index(text, quote)
	if i < 0 {
		panic("fakeopenai: CiteQuote: quote not in text")
	}
	start := utf8.RuneCountInString(text[:i])
	return Citation(url, title, start, start+utf8.RuneCountInString(quote))
}

// Reasoning is a reasoning item with summary texts.
func Reasoning(summaries ...string) ReasoningItem {
	s := make([]SummaryText, len(summaries))
	for i, t := range summaries {
		s[i] = SummaryText{Type: "summary_text", Text: t}
	}
	return ReasoningItem{Type: "reasoning", Summary: s}
}

// FunctionCall is a function_call item. A string args is sent verbatim
// (so scripts can send malformed arguments); anything else is marshaled.
func FunctionCall(callID, name string, args any) FunctionCallItem {
	return FunctionCallItem{Type: "function_call", Status: "completed", CallID: callID, Name: name, Arguments: argString(args)}
}

// WebSearchCall is a completed web_search_call item with a search action.
func WebSearchCall(query string, sources ...string) WebSearchCallItem {
	action := WebSearchAction{Type: "search", Query: query}
	for _, u := range sources {
		action.Sources = append(action.Sources, WebSource{Type: "url", URL: u})
	}
	return WebSearchCallItem{Type: "web_search_call", Status: "completed", Action: action}
}

func argString(args any) string {
	if s, ok := args.(string); ok {
		return s
	}
	return string(mustJSON(args))
}

// Reply answers POST /v1/responses with r.
func Reply(r Response) Step {
	return newStep(http.StatusOK, func(s *Server, req Request) []byte { return s.buildResponse(r, req) })
}

type wireUsage struct {
	InputTokens         int            `json:"input_tokens"`
	InputTokensDetails  map[string]int `json:"input_tokens_details"`
	OutputTokens        int            `json:"output_tokens"`
	OutputTokensDetails map[string]int `json:"output_tokens_details"`
	TotalTokens         int            `json:"total_tokens"`
}

type wireResponse struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              any             `json:"error"`
	IncompleteDetails  any             `json:"incomplete_details"`
	Instructions       json.RawMessage `json:"instructions"`
	MaxOutputTokens    json.RawMessage `json:"max_output_tokens"`
	MaxToolCalls       json.RawMessage `json:"max_tool_calls"`
	Model              string          `json:"model"`
	Output             []any           `json:"output"`
	ParallelToolCalls  json.RawMessage `json:"parallel_tool_calls"`
	PreviousResponseID json.RawMessage `json:"previous_response_id"`
	Reasoning          any             `json:"reasoning"`
	ServiceTier        string          `json:"service_tier"`
	Store              json.RawMessage `json:"store"`
	Temperature        json.RawMessage `json:"temperature"`
	Text               json.RawMessage `json:"text"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	Tools              json.RawMessage `json:"tools"`
	TopLogprobs        int             `json:"top_logprobs"`
	TopP               json.RawMessage `json:"top_p"`
	Truncation         string          `json:"truncation"`
	Usage              wireUsage       `json:"usage"`
	User               any             `json:"user"`
	Metadata           json.RawMessage `json:"metadata"`
}

func (s *Server) buildResponse(r Response, req Request) []byte {
	var in map[string]json.RawMessage
	_ = json.Unmarshal(req.Body, &in)
	echo := func(key, def string) json.RawMessage {
		if v, ok := in[key]; ok {
			return v
		}
		return json.RawMessage(def)
	}
	w := wireResponse{
		ID:                 r.ID,
		Object:             "response",
		CreatedAt:          s.created,
		Status:             r.Status,
		Instructions:       echo("instructions", "null"),
		MaxOutputTokens:    echo("max_output_tokens", "null"),
		MaxToolCalls:       echo("max_tool_calls", "null"),
		Model:              r.Model,
		ParallelToolCalls:  echo("parallel_tool_calls", "true"),
		PreviousResponseID: echo("previous_response_id", "null"),
		ServiceTier:        "default",
		Store:              echo("store", "true"),
		Temperature:        echo("temperature", "1.0"),
		Text:               echo("text", `{"format":{"type":"text"},"verbosity":"medium"}`),
		ToolChoice:         echo("tool_choice", `"auto"`),
		Tools:              echo("tools", "[]"),
		TopP:               echo("top_p", "1.0"),
		Truncation:         "disabled",
		Metadata:           echo("metadata", "{}"),
	}
	if w.ID == "" {
		w.ID = s.nextID("resp")
	}
	if w.Model == "" {
		_ = json.Unmarshal(in["model"], &w.Model)
	}
	reasoning := map[string]any{"effort": nil, "summary": nil}
	if raw, ok := in["reasoning"]; ok {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				reasoning[k] = v
			}
		}
	}
	w.Reasoning = reasoning
	switch {
	case w.Status != "":
	case r.Error != nil:
		w.Status = "failed"
	case r.IncompleteReason != "":
		w.Status = "incomplete"
	default:
		w.Status = "completed"
	}
	if r.Error != nil {
		w.Error = r.Error
	}
	if r.IncompleteReason != "" {
		w.IncompleteDetails = map[string]string{"reason": r.IncompleteReason}
	}
	w.Output = make([]any, 0, len(r.Output))
	outChars := 0
	for _, item := range r.Output {
		switch it := item.(type) {
		case MessageItem:
			if it.ID == "" {
				it.ID = s.nextID("msg")
			}
			if w.Status == "incomplete" && it.Status == "completed" {
				it.Status = "incomplete"
			}
			for _, p := range it.Content {
				if t, ok := p.(OutputText); ok {
					outChars += len(t.Text)
				}
			}
			item = it
		case ReasoningItem:
			if it.ID == "" {
				it.ID = s.nextID("rs")
			}
			item = it
		case FunctionCallItem:
			if it.ID == "" {
				it.ID = s.nextID("fc")
			}
			if it.CallID == "" {
				it.CallID = s.nextID("call")
			}
			outChars += len(it.Arguments)
			item = it
		case WebSearchCallItem:
			if it.ID == "" {
				it.ID = s.nextID("ws")
			}
			item = it
		}
		w.Output = append(w.Output, item)
	}
	var calls []string
	for _, item := range w.Output {
		if fc, ok := item.(FunctionCallItem); ok {
			calls = append(calls, fc.CallID)
		}
	}
	s.mu.Lock()
	s.stored[w.ID] = calls
	s.mu.Unlock()
	u := Usage{InputTokens: len(req.Body)/4 + 1, OutputTokens: outChars/4 + 1}
	if r.Usage != nil {
		u = *r.Usage
	}
	w.Usage = wireUsage{
		InputTokens:         u.InputTokens,
		InputTokensDetails:  map[string]int{"cached_tokens": u.CachedTokens},
		OutputTokens:        u.OutputTokens,
		OutputTokensDetails: map[string]int{"reasoning_tokens": u.ReasoningTokens},
		TotalTokens:         u.InputTokens + u.OutputTokens,
	}
	return mustJSON(w)
}
