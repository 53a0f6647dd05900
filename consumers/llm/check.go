package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/errata-dev/errata/consumers/llm/parse"
	"github.com/errata-dev/errata/consumers/llm/schema"
)

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkRequest rejects what no provider would accept, before sending.
func checkRequest(provider string, req Request) *Error {
	if strings.TrimSpace(req.Model) == "" {
		return invalidRequest(provider, "no model")
	}
	seen := map[string]bool{}
	for _, t := range req.Tools {
		if !toolNameRE.MatchString(t.Name) {
			return invalidRequest(provider, "tool name %q must be 1-64 letters, digits, _ or -", t.Name)
		}
		if seen[t.Name] {
			return invalidRequest(provider, "tool %q is declared twice", t.Name)
		}
		seen[t.Name] = true
		if t.Parameters == nil || t.Parameters.Type != schema.Object {
			return invalidRequest(provider, "tool %q needs an object schema", t.Name)
		}
		if err := t.Parameters.CheckStrict(); err != nil {
			return invalidRequest(provider, "tool %q: schema is not strict: %v", t.Name, err)
		}
	}
	if o := req.OutputSchema; o != nil {
		if !toolNameRE.MatchString(o.Name) {
			return invalidRequest(provider, "output schema name %q must be 1-64 letters, digits, _ or -", o.Name)
		}
		if o.Schema == nil || o.Schema.Type != schema.Object {
			return invalidRequest(provider, "the output schema must be an object schema")
		}
		if err := o.Schema.CheckStrict(); err != nil {
			return invalidRequest(provider, "output schema is not strict: %v", err)
		}
	}
	switch req.ToolChoice {
	case "", ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone:
	default:
		return invalidRequest(provider, "unknown tool choice %q", req.ToolChoice)
	}
	if req.ToolChoice == ToolChoiceRequired && len(req.Tools) == 0 && req.WebSearch == nil {
		return invalidRequest(provider, "tool choice required without tools")
	}
	for i, m := range req.Input {
		if len(m.Parts) == 0 {
			return invalidRequest(provider, "input message %d has no parts", i)
		}
		for j, p := range m.Parts {
			if (p.Image == nil) == (p.Text == "") {
				return invalidRequest(provider, "input message %d part %d must be text or an image", i, j)
			}
			if p.Image != nil {
				if m.Role == RoleAssistant || m.Role == RoleSystem || m.Role == RoleDeveloper {
					return invalidRequest(provider, "input message %d: images only in user messages", i)
				}
				if _, err := p.Image.url(); err != nil {
					return invalidRequest(provider, "input message %d part %d: %v", i, j, err)
				}
			}
		}
	}
	return nil
}

// checkContinue makes sure outputs answer exactly the tool calls of prev.
func checkContinue(provider string, prev *Response, outputs []ToolOutput) *Error {
	if prev == nil {
		return invalidRequest(provider, "continue without a previous response")
	}
	if prev.Provider != provider {
		return invalidRequest(provider, "the previous response came from %q", prev.Provider)
	}
	want := map[string]bool{}
	for _, c := range prev.ToolCalls() {
		want[c.CallID] = true
	}
	got := map[string]bool{}
	for _, o := range outputs {
		switch {
		case !want[o.CallID]:
			return invalidRequest(provider, "output for unknown tool call %q", o.CallID)
		case got[o.CallID]:
			return invalidRequest(provider, "two outputs for tool call %q", o.CallID)
		}
		got[o.CallID] = true
	}
	for id := range want {
		if !got[id] {
			return invalidRequest(provider, "no output for tool call %q", id)
		}
	}
	return nil
}

// checkToolCalls validates every tool call of out against its tool's
// schema, setting ToolCall.JSON for the ones that pass. Lenient parsing
// (code fences, prose, think blocks around the arguments) is for Chat
// Completions servers that do not enforce strict schemas.
func checkToolCalls(provider string, tools []Tool, out *Response, lenient bool) *Error {
	var problems []string
	var first error
	for _, it := range out.Output {
		c := it.ToolCall
		if c == nil {
			continue
		}
		var tool *Tool
		for i := range tools {
			if tools[i].Name == c.Name {
				tool = &tools[i]
			}
		}
		var err error
		var args json.RawMessage
		switch {
		case tool == nil:
			err = fmt.Errorf("the model called %q, which was not offered", c.Name)
		case lenient:
			var e parse.Extracted
			e, err = parse.Decode(c.Arguments, tool.Parameters)
			args = e.JSON
		default:
			err = tool.Parameters.ValidateJSON([]byte(c.Arguments))
			args = json.RawMessage(c.Arguments)
		}
		if err != nil {
			if first == nil {
				first = err
			}
			problems = append(problems, fmt.Sprintf("call %s (%s): %v", c.CallID, c.Name, err))
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, args) == nil {
			args = b.Bytes()
		}
		c.JSON = args
	}
	if len(problems) == 0 {
		return nil
	}
	return &Error{Provider: provider, Class: NonRetryable, Kind: KindToolArguments, StatusCode: out.HTTPStatus, RequestID: out.RequestID,
		Message: strings.Join(problems, "; "), Err: first}
}

// checkOutput validates the structured answer when one was asked for.
func checkOutput(provider string, req Request, out *Response, lenient bool) *Error {
	if req.OutputSchema == nil || len(out.ToolCalls()) > 0 {
		return nil
	}
	text := out.Text()
	var err error
	var got json.RawMessage
	if lenient {
		var e parse.Extracted
		e, err = parse.Decode(text, req.OutputSchema.Schema)
		got = e.JSON
	} else {
		err = req.OutputSchema.Schema.ValidateJSON([]byte(text))
		got = json.RawMessage(text)
	}
	if err != nil {
		return &Error{Provider: provider, Class: NonRetryable, Kind: KindInvalidOutput, StatusCode: out.HTTPStatus, RequestID: out.RequestID,
			Message: fmt.Sprintf("the answer does not match %s: %v", req.OutputSchema.Name, err), Err: err}
	}
	var b bytes.Buffer
	if json.Compact(&b, got) == nil {
		got = b.Bytes()
	}
	out.OutputJSON = got
	return nil
}

// refusalError reports a refusal in the output.
func refusalError(provider string, r *Response) *Error {
	if ref := r.Refusal(); ref != "" {
		return &Error{Provider: provider, Class: NonRetryable, Kind: KindRefusal, StatusCode: r.HTTPStatus, RequestID: r.RequestID, Message: ref}
	}
	return nil
}

// bodyError classifies a 2xx body the SDK could not decode.
func bodyError(provider string, x *exchange) *Error {
	trimmed := bytes.TrimSpace(x.body)
	e := &Error{Provider: provider, Class: Transient, StatusCode: x.status, RequestID: x.header.Get("x-request-id")}
	switch {
	case x.tooLarge:
		e.Kind, e.Message = KindInvalidResponse, "the response body is too large"
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && !json.Valid(trimmed):
		e.Kind, e.Message = KindTruncated, fmt.Sprintf("the response body ends mid-JSON after %d bytes", len(x.body))
	default:
		e.Kind, e.Message = KindInvalidResponse, "the response body is not a JSON response object"
	}
	return e
}
