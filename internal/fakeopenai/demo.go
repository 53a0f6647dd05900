package fakeopenai

import (
	"encoding/json"
	"regexp"
	"strings"
)

// demoSentence finds a sentence with a four-digit number (a year, say).
var demoSentence = regexp.MustCompile(`[A-Z][^.!?\n]*\b[0-9]{4}\b[^.!?\n]*`)

// postText is the body of the "### Post text" section of a request: the
// lines between the heading's fence lines.
func postText(body []byte) string {
	var req struct {
		Input []struct {
			Content json.RawMessage `json:"content"` // a string, or a list of parts
		} `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	var all strings.Builder
	for _, m := range req.Input {
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			all.WriteString(text)
			continue
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			all.WriteString(p.Text)
		}
	}
	text := all.String()
	_, after, ok := strings.Cut(text, "### Post text\n")
	if !ok {
		return ""
	}
	open, rest, _ := strings.Cut(after, "\n")
	closeLine := strings.Replace(open, "BEGIN", "END", 1)
	post, _, _ := strings.Cut(rest, "\n"+closeLine)
	return post
}

// Demo makes the fake play a harmless investigator for local runs (errata
// fake-openai): stage 1 submits, as a demonstration, the first sentence of
// the post that contains a four-digit number, then ends; the validator
// approves what it is asked about. Its verdicts say that they are
// demonstrations and carry no meaning.
func (s *Server) Demo() {
	s.HandleFunc(Responses, func(req Request) Step {
		body := req.JSON()
		if _, structured := body["text"]; structured {
			return Reply(Response{Output: []any{Message(Text(
				`{"approved":true,"reason":"Demonstration verdict of the local fake provider."}`))}})
		}
		if prev, _ := body["previous_response_id"].(string); prev != "" {
			return Reply(Response{Output: []any{Message(Text("Demonstration run finished."))}})
		}
		claim := demoSentence.FindString(postText(req.Body))
		if claim == "" {
			return Reply(Response{Output: []any{Message(Text("Nothing to flag in this demonstration."))}})
		}
		claim = strings.TrimSpace(claim)
		return Reply(Response{Output: []any{FunctionCall("call_demo", "submit_correction", map[string]any{
			"text":      claim,
			"context":   claim,
			"summary":   "Demonstration flag from Errata's local fake provider: this sentence was picked because it contains a year.",
			"reasoning": "The local fake provider flags the first sentence with a four-digit number so that the whole pipeline can be watched end to end. It checked nothing.",
			"sources": []map[string]string{{"url": "https://example.org/errata-demo", "title": "Errata demonstration",
				"snippet": "Placeholder source of the local fake provider."}},
		})}})
	})
}
