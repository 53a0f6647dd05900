package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIResponses calls the OpenAI Responses API (POST {base}/responses)
// through openai-go. The zero value is ready to use.
//
// Continue chains turns with previous_response_id: the request carries only
// the function_call_output items (and req.Input), so the provider must have
// stored the previous response (store defaults to true on OpenAI; responses
// are kept 30 days). Instructions and tools are not inherited through
// previous_response_id, so Continue sends req's again: pass the same ones
// for every round of an investigation. The chain is reconstructible from the
// audit log: each Response's ID and RawRequest are all it uses.
//
// Native web search adds include "web_search_call.action.sources", so the
// consulted URLs are recorded (Response.WebSearches). Providers hold no
// per-call state and are safe for concurrent use.
type OpenAIResponses struct {
	// HTTPClient carries the requests (nil: a client without an overall
	// timeout; bound calls with the context).
	HTTPClient *http.Client
}

var _ Provider = OpenAIResponses{}

// Name implements Provider.
func (OpenAIResponses) Name() string { return ProviderOpenAIResponses }

// Create implements Provider.
func (p OpenAIResponses) Create(ctx context.Context, cred Credentials, req Request) (*Response, error) {
	return p.send(ctx, cred, req, "", nil)
}

// Continue implements Provider: previous_response_id plus one
// function_call_output per tool call of prev, in the order of outputs.
func (p OpenAIResponses) Continue(ctx context.Context, cred Credentials, req Request, prev *Response, outputs []ToolOutput) (*Response, error) {
	if err := checkContinue(ProviderOpenAIResponses, prev, outputs); err != nil {
		return nil, err
	}
	if prev.ID == "" {
		return nil, invalidRequest(ProviderOpenAIResponses, "the previous response has no id")
	}
	return p.send(ctx, cred, req, prev.ID, outputs)
}

func (p OpenAIResponses) send(ctx context.Context, cred Credentials, req Request, previousID string, outputs []ToolOutput) (*Response, error) {
	const provider = ProviderOpenAIResponses
	if err := checkRequest(provider, req); err != nil {
		return nil, err
	}
	params, err := responsesParams(req, previousID, outputs)
	if err != nil {
		return nil, invalidRequest(provider, "%v", err)
	}
	x := &exchange{}
	red := redactor{key: cred.APIKey.Reveal()}
	opts, err := requestOptions(cred, p.HTTPClient, x)
	if err != nil {
		return nil, invalidRequest(provider, "%v", err)
	}
	svc := responses.NewResponseService(opts...)
	res, callErr := svc.New(ctx, params)

	out, err := x.response(ctx, provider, red, callErr)
	if err != nil {
		return out, err
	}
	if res == nil || res.ID == "" || res.JSON.Output.Raw() == "" {
		return out, bodyError(provider, x)
	}
	normalizeResponses(out, res)
	if err := responsesOutcome(out, res, red); err != nil {
		return out, err
	}
	if err := refusalError(provider, out); err != nil {
		return out, err
	}
	if err := checkToolCalls(provider, req.Tools, out, false); err != nil {
		return out, err
	}
	if err := checkOutput(provider, req, out, false); err != nil {
		return out, err
	}
	return out, nil
}

func responsesParams(req Request, previousID string, outputs []ToolOutput) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{Model: req.Model}
	if req.Instructions != "" {
		params.Instructions = param.NewOpt(req.Instructions)
	}
	if previousID != "" {
		params.PreviousResponseID = param.NewOpt(previousID)
	}
	var input responses.ResponseInputParam
	for _, o := range outputs {
		input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: param.NewOpt(o.CallID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(o.Output)},
		}})
	}
	for _, m := range req.Input {
		item, err := responsesMessage(m)
		if err != nil {
			return params, err
		}
		input = append(input, item)
	}
	if len(input) > 0 {
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	}
	for _, t := range req.Tools {
		fn := &responses.FunctionToolParam{
			Name:       t.Name,
			Parameters: t.Parameters.Map(),
			Strict:     param.NewOpt(true),
		}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: fn})
	}
	if ws := req.WebSearch; ws != nil {
		tool := &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}
		if ws.ContextSize != "" {
			tool.SearchContextSize = responses.WebSearchToolSearchContextSize(ws.ContextSize)
		}
		if len(ws.AllowedDomains) > 0 {
			tool.Filters = responses.WebSearchToolFiltersParam{AllowedDomains: ws.AllowedDomains}
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfWebSearch: tool})
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableWebSearchCallActionSources}
	}
	choice := req.ToolChoice
	if req.ForceFinalAnswer {
		choice = ToolChoiceNone
	}
	if choice != "" {
		params.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptions(choice))}
	}
	if req.ParallelToolCalls != nil {
		params.ParallelToolCalls = param.NewOpt(*req.ParallelToolCalls)
	}
	if req.ReasoningEffort != "" || req.ReasoningSummary != "" {
		params.Reasoning = shared.ReasoningParam{
			Effort:  shared.ReasoningEffort(req.ReasoningEffort),
			Summary: shared.ReasoningSummary(req.ReasoningSummary),
		}
	}
	if req.MaxOutputTokens > 0 {
		params.MaxOutputTokens = param.NewOpt(int64(req.MaxOutputTokens))
	}
	if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	if o := req.OutputSchema; o != nil {
		format := &responses.ResponseFormatTextJSONSchemaConfigParam{Name: o.Name, Schema: o.Schema.Map(), Strict: param.NewOpt(true)}
		if o.Description != "" {
			format.Description = param.NewOpt(o.Description)
		}
		params.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: format}}
	}
	if len(req.Metadata) > 0 {
		params.Metadata = shared.Metadata(req.Metadata)
	}
	return params, nil
}

func responsesMessage(m Message) (responses.ResponseInputItemUnionParam, error) {
	role := m.Role
	if role == "" {
		role = RoleUser
	}
	msg := &responses.EasyInputMessageParam{Role: responses.EasyInputMessageRole(role)}
	onlyText := true
	for _, p := range m.Parts {
		onlyText = onlyText && p.Image == nil
	}
	if onlyText && (len(m.Parts) == 1 || role != RoleUser) {
		// One text part, or a non-user message (whose content list would
		// need output_text parts): plain string content.
		texts := make([]string, len(m.Parts))
		for i, p := range m.Parts {
			texts[i] = p.Text
		}
		msg.Content = responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(strings.Join(texts, "\n\n"))}
		return responses.ResponseInputItemUnionParam{OfMessage: msg}, nil
	}
	var content responses.ResponseInputMessageContentListParam
	for _, p := range m.Parts {
		if p.Image == nil {
			content = append(content, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: p.Text}})
			continue
		}
		u, err := p.Image.url()
		if err != nil {
			return responses.ResponseInputItemUnionParam{}, err
		}
		content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
			ImageURL: param.NewOpt(u),
			Detail:   responses.ResponseInputImageDetail(p.Image.detail()),
		}})
	}
	msg.Content = responses.EasyInputMessageContentUnionParam{OfInputItemContentList: content}
	return responses.ResponseInputItemUnionParam{OfMessage: msg}, nil
}

func normalizeResponses(out *Response, res *responses.Response) {
	out.ID = res.ID
	out.Model = res.Model
	out.Status = Status(res.Status)
	if out.Status == "" {
		out.Status = StatusCompleted
	}
	out.IncompleteReason = res.IncompleteDetails.Reason
	u := res.Usage
	out.Usage = Usage{
		InputTokens:       u.InputTokens,
		CachedInputTokens: u.InputTokensDetails.CachedTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.OutputTokensDetails.ReasoningTokens,
		TotalTokens:       u.TotalTokens,
	}
	out.Output = make([]OutputItem, 0, len(res.Output))
	for _, item := range res.Output {
		it := OutputItem{Type: ItemOther, ID: item.ID, Raw: json.RawMessage(item.RawJSON())}
		switch item.Type {
		case "message":
			it.Type = ItemMessage
			for _, c := range item.AsMessage().Content {
				switch c.Type {
				case "output_text":
					t := c.AsOutputText()
					part := ContentPart{Type: "text", Text: t.Text}
					for _, a := range t.Annotations {
						if a.Type != "url_citation" {
							continue
						}
						uc := a.AsURLCitation()
						part.Citations = append(part.Citations, Citation{URL: uc.URL, Title: uc.Title, StartIndex: int(uc.StartIndex), EndIndex: int(uc.EndIndex)})
					}
					it.Content = append(it.Content, part)
				case "refusal":
					it.Content = append(it.Content, ContentPart{Type: "refusal", Refusal: c.AsRefusal().Refusal})
				}
			}
		case "reasoning":
			it.Type = ItemReasoning
			it.Summary = []string{}
			for _, s := range item.AsReasoning().Summary {
				it.Summary = append(it.Summary, s.Text)
			}
		case "function_call":
			it.Type = ItemFunctionCall
			fc := item.AsFunctionCall()
			it.ToolCall = &ToolCall{ItemID: fc.ID, CallID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments}
		case "web_search_call":
			it.Type = ItemWebSearchCall
			ws := item.AsWebSearchCall()
			call := &WebSearchCall{Status: string(ws.Status), Action: ws.Action.Type, Query: ws.Action.Query, Queries: ws.Action.Queries, URL: ws.Action.URL}
			for _, s := range ws.Action.Sources {
				call.Sources = append(call.Sources, s.URL)
			}
			it.WebSearch = call
		}
		out.Output = append(out.Output, it)
	}
}

// responsesOutcome classifies a failed or incomplete status.
func responsesOutcome(out *Response, res *responses.Response, red redactor) *Error {
	e := &Error{Provider: ProviderOpenAIResponses, StatusCode: out.HTTPStatus, RequestID: out.RequestID}
	switch out.Status {
	case StatusCompleted:
		return nil
	case StatusIncomplete:
		e.Class, e.Kind, e.Code = Transient, KindIncomplete, out.IncompleteReason
		e.Message = "the response is incomplete"
		if out.IncompleteReason != "" {
			e.Message += ": " + out.IncompleteReason
		}
		return e
	case StatusFailed:
		e.Kind, e.Code, e.Message = KindFailed, string(res.Error.Code), red.text(res.Error.Message)
		e.Class = NonRetryable
		switch e.Code {
		case "server_error", "rate_limit_exceeded", "vector_store_timeout", "":
			e.Class = Transient
		}
		return e
	}
	e.Class, e.Kind, e.Message = Transient, KindInvalidResponse, "unexpected response status "+string(out.Status)
	return e
}
