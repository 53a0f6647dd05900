// Package llm is the provider layer of the investigator: one provider-
// neutral request/response model and two implementations, OpenAIResponses
// (the OpenAI Responses API through openai-go, with native web search) and
// ChatCompletions (any OpenAI-compatible Chat Completions server: OpenAI,
// OpenRouter, LM Studio, Ollama, vLLM).
//
// A provider makes exactly one HTTP exchange per call and never retries:
// the orchestrator owns rounds, retries and backoff, guided by the *Error
// classification (Retryable, Class, Kind, RetryAfter). Every call returns
// the exact request and response bytes for the audit log.
//
// Credentials (base URL and API key) are passed per call, never stored in a
// provider, and the key is only ever written to the Authorization header:
// it is redacted from every error, and the logging.Secret type keeps it out
// of fmt, slog and JSON output.
//
// The package never reads environment variables (openai-go's NewClient
// would read OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, ...): the
// caller resolves configuration and passes it in Credentials.
package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/internal/logging"
)

// DefaultBaseURL is the OpenAI API, used when Credentials.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Provider names, recorded in Response.Provider and Error.Provider.
const (
	ProviderOpenAIResponses = "openai-responses"
	ProviderChatCompletions = "chat-completions"
)

// Credentials select the endpoint and key of one call. A user's own OpenAI
// key may differ per investigation, so it travels with the call.
type Credentials struct {
	// BaseURL is the API root including the version path, e.g.
	// https://api.openai.com/v1, https://openrouter.ai/api/v1,
	// http://127.0.0.1:11434/v1. Empty: DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" and nowhere else.
	// Empty: no Authorization header (local servers).
	APIKey logging.Secret
}

// Provider is what the investigator orchestrator calls.
type Provider interface {
	// Name is ProviderOpenAIResponses or ProviderChatCompletions.
	Name() string
	// Create runs one model turn.
	Create(ctx context.Context, cred Credentials, req Request) (*Response, error)
	// Continue runs the next turn after prev, feeding back one output per
	// tool call of prev (every call id of prev must be answered exactly
	// once). req carries the model, instructions, tools and options of the
	// new turn; req.Input holds extra messages to send after the outputs
	// (for instance a note that the round cap is reached).
	Continue(ctx context.Context, cred Credentials, req Request, prev *Response, outputs []ToolOutput) (*Response, error)
}

// Role of an input message.
type Role string

// Roles of input messages.
const (
	RoleUser      Role = "user"
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleAssistant Role = "assistant"
)

// Request is one model turn.
type Request struct {
	// Model is the provider's model name (gpt-5, openai/gpt-4.1, qwen3:8b).
	Model string
	// Instructions is the system prompt (Responses "instructions", a leading
	// system message in Chat Completions).
	Instructions string
	// Input is the conversation input: text and images, in order.
	Input []Message
	// Tools are function tools with strict JSON schemas.
	Tools []Tool
	// WebSearch enables the provider's native web search (Responses only;
	// Chat Completions rejects it: use a function tool there).
	WebSearch *WebSearch
	// ToolChoice: "" (auto), ToolChoiceAuto, ToolChoiceRequired or
	// ToolChoiceNone.
	ToolChoice ToolChoice
	// ForceFinalAnswer asks for an answer without any tool call (the round
	// cap is reached). Responses: tool_choice "none" with the tools still
	// declared. Chat Completions: tools and tool_choice are left out
	// entirely, which every compatible server understands.
	ForceFinalAnswer bool
	// ParallelToolCalls, when set, is sent as parallel_tool_calls.
	ParallelToolCalls *bool
	// Reasoning effort (minimal, low, medium, high; "" leaves the provider
	// default) and, for the Responses API, the summary mode (auto, concise,
	// detailed; "" asks for none).
	ReasoningEffort  string
	ReasoningSummary string
	// MaxOutputTokens bounds the output, reasoning included (0: provider
	// default).
	MaxOutputTokens int
	// Temperature, when set (Chat Completions models mostly; OpenAI
	// reasoning models reject it).
	Temperature *float64
	// OutputSchema asks for a JSON answer matching a schema (Responses:
	// text.format json_schema, strict; Chat Completions: response_format
	// json_schema unless ChatCompletions.NoResponseFormat). The answer is
	// checked: Response.OutputJSON holds it, a violation is an *Error of
	// kind KindInvalidOutput.
	OutputSchema *OutputSchema
	// Metadata is attached to the response where the API supports it
	// (Responses; Chat Completions ignores it): investigation id, attempt.
	Metadata map[string]string
}

// OutputSchema names the schema of a structured answer.
type OutputSchema struct {
	Name        string // 1-64 letters, digits, _ or -
	Description string
	Schema      *schema.Schema
}

// ToolChoice constrains tool use.
type ToolChoice string

// Tool choices.
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceRequired ToolChoice = "required"
	ToolChoiceNone     ToolChoice = "none"
)

// Message is one input message: text parts and images, interleaved.
type Message struct {
	Role  Role // "": RoleUser
	Parts []Part
}

// Part is text or an image (exactly one of the two).
type Part struct {
	Text  string
	Image *Image
}

// Image is given by URL or by bytes (sent as a data: URL).
type Image struct {
	URL       string
	Data      []byte
	MediaType string // with Data: image/jpeg, image/png, image/gif, image/webp
	// Detail: "", "low", "high" or "auto" ("" sends "auto").
	Detail string
}

// UserText is a user message with one text part.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{{Text: text}}}
}

// TextPart is a text part.
func TextPart(text string) Part { return Part{Text: text} }

// ImageURLPart is an image part given by URL.
func ImageURLPart(url string) Part { return Part{Image: &Image{URL: url}} }

// ImageDataPart is an image part given by bytes.
func ImageDataPart(mediaType string, data []byte) Part {
	return Part{Image: &Image{MediaType: mediaType, Data: data}}
}

// url returns the URL to send: the URL itself or a data: URL.
func (im *Image) url() (string, error) {
	switch {
	case im.URL != "" && len(im.Data) > 0:
		return "", errors.New("an image has both a URL and data")
	case im.URL != "":
		return im.URL, nil
	case len(im.Data) == 0:
		return "", errors.New("an image has neither a URL nor data")
	case !strings.HasPrefix(im.MediaType, "image/"):
		return "", errors.New("image data needs an image/* media type")
	}
	return "data:" + im.MediaType + ";base64," + base64.StdEncoding.EncodeToString(im.Data), nil
}

func (im *Image) detail() string {
	if im.Detail == "" {
		return "auto"
	}
	return im.Detail
}

// Tool is a function tool. Parameters must pass schema.CheckStrict: the
// tool is sent with "strict": true.
type Tool struct {
	Name        string
	Description string
	Parameters  *schema.Schema
}

// WebSearch configures the native web search tool.
type WebSearch struct {
	// ContextSize: "", low, medium or high.
	ContextSize string
	// AllowedDomains restricts results to these domains (optional).
	AllowedDomains []string
}

// ToolOutput answers one tool call.
type ToolOutput struct {
	CallID string
	// Output is what the tool returned (JSON or text), sent verbatim.
	Output string
}

// Status of a response.
type Status string

// Statuses.
const (
	StatusCompleted  Status = "completed"
	StatusIncomplete Status = "incomplete"
	StatusFailed     Status = "failed"
)

// Response is one model turn's result, normalized, with the exact bytes.
//
// Create and Continue return a non-nil *Response whenever a request was
// attempted, also together with an error; only requests rejected before
// sending (KindInvalidRequest) come back without one. RawRequest is then
// always set, RawResponse holds whatever body arrived (possibly cut off),
// and the decoded fields are filled as far as the body allowed. An
// unusable but well-formed answer (refusal, incomplete, failed, invalid
// tool arguments or output) comes back fully decoded next to its *Error,
// so every attempt can be audited.
type Response struct {
	Provider string `json:"provider"`
	// ID is the provider's response id (resp_…, chatcmpl-…).
	ID string `json:"id"`
	// Model is the model version that answered (e.g. a dated snapshot).
	Model string `json:"model"`
	// Status is completed, incomplete or failed; IncompleteReason says why
	// an incomplete answer stopped (max_output_tokens, content_filter,
	// length).
	Status           Status `json:"status"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// FinishReason is the Chat Completions finish_reason.
	FinishReason string `json:"finish_reason,omitempty"`
	// Output lists the output items in the order the model produced them.
	Output []OutputItem `json:"output"`
	Usage  Usage        `json:"usage"`
	// OutputJSON is the structured answer when Request.OutputSchema was
	// given and the answer matched it.
	OutputJSON json.RawMessage `json:"output_json,omitempty"`
	// RequestID is the provider's x-request-id header, for support.
	RequestID string `json:"request_id,omitempty"`
	// Duration is the time from sending the request to the whole body.
	Duration time.Duration `json:"duration"`
	// RawRequest and RawResponse are the exact bodies sent and received
	// (should a provider echo the caller's API key, that key alone is
	// replaced by [redacted] in RawResponse).
	RawRequest  json.RawMessage `json:"raw_request"`
	RawResponse json.RawMessage `json:"raw_response"`
	// HTTPStatus of the exchange (0 when no answer arrived).
	HTTPStatus int `json:"http_status"`
}

// ItemType of an output item.
type ItemType string

// Output item types.
const (
	ItemMessage       ItemType = "message"
	ItemReasoning     ItemType = "reasoning"
	ItemFunctionCall  ItemType = "function_call"
	ItemWebSearchCall ItemType = "web_search_call"
	ItemOther         ItemType = "other"
)

// OutputItem is one normalized output item; the field for its Type is set.
type OutputItem struct {
	Type ItemType `json:"type"`
	ID   string   `json:"id,omitempty"`
	// Message content parts (Type message).
	Content []ContentPart `json:"content,omitempty"`
	// Reasoning summaries (Type reasoning).
	Summary []string `json:"summary,omitempty"`
	// ToolCall (Type function_call).
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// WebSearch (Type web_search_call).
	WebSearch *WebSearchCall `json:"web_search,omitempty"`
	// Raw is the item's exact JSON (for Chat Completions: the message or
	// tool call object it came from).
	Raw json.RawMessage `json:"raw,omitempty"`
}

// ContentPart is output text with its citations, or a refusal.
type ContentPart struct {
	Type      string     `json:"type"` // "text" or "refusal"
	Text      string     `json:"text,omitempty"`
	Citations []Citation `json:"citations,omitempty"`
	Refusal   string     `json:"refusal,omitempty"`
}

// Citation is a url_citation annotation: the cited source and the span of
// the text it supports (character offsets as the provider gives them).
type Citation struct {
	URL        string `json:"url"`
	Title      string `json:"title,omitempty"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
}

// ToolCall is a function call the model asked for.
type ToolCall struct {
	// ItemID is the Responses output item id (fc_…); empty in Chat mode.
	ItemID string `json:"item_id,omitempty"`
	// CallID is what the tool output must answer (call_…).
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments is the raw argument string exactly as the model wrote it.
	Arguments string `json:"arguments"`
	// JSON is the arguments as a JSON value once checked against the
	// tool's schema (nil when they did not pass; see the *Error). In Chat
	// mode it may come from a tolerant parse of Arguments.
	JSON json.RawMessage `json:"json,omitempty"`
}

// WebSearchCall is a native web search the provider ran.
type WebSearchCall struct {
	Status string `json:"status"`
	// Action: search, open_page or find_in_page (find is an older name).
	Action  string   `json:"action,omitempty"`
	Query   string   `json:"query,omitempty"`
	Queries []string `json:"queries,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Sources are the URLs consulted, when the API lists them.
	Sources []string `json:"sources,omitempty"`
}

// Usage in tokens.
type Usage struct {
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	ReasoningTokens   int64 `json:"reasoning_tokens"`
	TotalTokens       int64 `json:"total_tokens"`
}

// Text joins the text parts of all messages (messages separated by a blank
// line).
func (r *Response) Text() string {
	var msgs []string
	for _, it := range r.Output {
		if it.Type != ItemMessage {
			continue
		}
		var b strings.Builder
		for _, p := range it.Content {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		if b.Len() > 0 {
			msgs = append(msgs, b.String())
		}
	}
	return strings.Join(msgs, "\n\n")
}

// ToolCalls lists the function calls in output order.
func (r *Response) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, it := range r.Output {
		if it.ToolCall != nil {
			out = append(out, *it.ToolCall)
		}
	}
	return out
}

// Citations lists every citation of every text part.
func (r *Response) Citations() []Citation {
	var out []Citation
	for _, it := range r.Output {
		for _, p := range it.Content {
			out = append(out, p.Citations...)
		}
	}
	return out
}

// ReasoningSummaries lists the reasoning summary texts.
func (r *Response) ReasoningSummaries() []string {
	var out []string
	for _, it := range r.Output {
		out = append(out, it.Summary...)
	}
	return out
}

// WebSearches lists the native web searches.
func (r *Response) WebSearches() []WebSearchCall {
	var out []WebSearchCall
	for _, it := range r.Output {
		if it.WebSearch != nil {
			out = append(out, *it.WebSearch)
		}
	}
	return out
}

// Refusal returns the refusal text, or "".
func (r *Response) Refusal() string {
	var out []string
	for _, it := range r.Output {
		for _, p := range it.Content {
			if p.Type == "refusal" {
				out = append(out, p.Refusal)
			}
		}
	}
	return strings.Join(out, "\n")
}
