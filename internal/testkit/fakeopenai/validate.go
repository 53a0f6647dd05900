package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// SetValidation turns the request checks on (the default) or off. With
// them on, the fake answers 400 in OpenAI's words, without consuming a
// scripted step, when a request breaks a rule the real API enforces:
//
//   - model missing (both endpoints);
//   - Responses: previous_response_id naming a response this fake did not
//     produce; function_call_output items that do not answer exactly the
//     function calls of the previous response (every call answered, no
//     unknown call id);
//   - Chat Completions: no messages; a tool message that does not follow an
//     assistant message with that tool call; an assistant message with tool
//     calls that are not all answered by the tool messages after it.
func (s *Server) SetValidation(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noValidation = !on
}

func invalid(param, code, format string, args ...any) *Step {
	st := Fail(http.StatusBadRequest, APIError{Type: "invalid_request_error", Param: param, Code: code, Message: fmt.Sprintf(format, args...)})
	return &st
}

// validate returns the 400 step for a request the real API would reject.
func (s *Server) validate(ep Endpoint, body []byte) *Step {
	s.mu.Lock()
	off := s.noValidation
	s.mu.Unlock()
	if off {
		return nil
	}
	switch ep {
	case Responses:
		return s.validateResponses(body)
	case ChatCompletions:
		return validateChat(body)
	}
	return nil
}

func (s *Server) validateResponses(body []byte) *Step {
	var req struct {
		Model              string          `json:"model"`
		PreviousResponseID string          `json:"previous_response_id"`
		Input              json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return invalid("", "", "We could not parse the JSON body of your request.")
	}
	if req.Model == "" {
		return invalid("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	}
	var items []struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
	}
	_ = json.Unmarshal(req.Input, &items) // a string input has no items
	answered := map[string]bool{}
	for _, it := range items {
		if it.Type == "function_call_output" {
			answered[it.CallID] = true
		}
	}
	if req.PreviousResponseID == "" {
		for id := range answered {
			return invalid("input", "", "No tool call found for function call output with call_id %s.", id)
		}
		return nil
	}
	s.mu.Lock()
	calls, ok := s.stored[req.PreviousResponseID]
	s.mu.Unlock()
	if !ok {
		return invalid("previous_response_id", "previous_response_not_found", "Previous response with id '%s' not found.", req.PreviousResponseID)
	}
	known := map[string]bool{}
	for _, id := range calls {
		known[id] = true
		if !answered[id] {
			return invalid("input", "", "No tool output found for function call %s.", id)
		}
	}
	for id := range answered {
		if !known[id] {
			return invalid("input", "", "No tool call found for function call output with call_id %s.", id)
		}
	}
	return nil
}

func validateChat(body []byte) *Step {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return invalid("", "", "We could not parse the JSON body of your request.")
	}
	if req.Model == "" {
		return invalid("model", "missing_required_parameter", "you must provide a model parameter")
	}
	if len(req.Messages) == 0 {
		return invalid("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	pending := map[string]bool{} // tool calls of the latest assistant message not yet answered
	check := func() *Step {
		var missing []string
		for id, open := range pending {
			if open {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return invalid("messages", "", "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s", strings.Join(missing, ", "))
		}
		return nil
	}
	for i, m := range req.Messages {
		switch m.Role {
		case "tool":
			if open, ok := pending[m.ToolCallID]; !ok || !open {
				return invalid(fmt.Sprintf("messages.[%d].role", i), "", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.") //nolint:misspell // the real API's message, word for word
			}
			pending[m.ToolCallID] = false
		default:
			if st := check(); st != nil {
				return st
			}
			pending = map[string]bool{}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
		}
	}
	return check()
}
