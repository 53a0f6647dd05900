package fakeopenai

import (
	"regexp"
	"strings"
)

// demoSentence finds a sentence with a four-digit number (a year, say).
var demoSentence = regexp.MustCompile(`[A-Z][^.!?\n]*\b[0-9]{4}\b[^.!?\n]*`)

// Demo makes the fake play a harmless investigator for local runs (errata
// fake-openai): stage 1 submits, as a demonstration, the first sentence of
// the post that contains a four-digit number, with two placeholder sources
// on a tier-1 and a tier-2 domain, then ends; the validator approves what
// it is asked about, and the stance step finds the placeholders refuting
// the sentence (every other passage neutral), so that the strict evidence
// policy publishes the flag and the whole pipeline can be watched. Its
// texts say that they are demonstrations and carry no meaning.
func (s *Server) Demo() {
	s.HandleFunc(Responses, func(req Request) Step {
		if _, passages, ok, err := stanceRequest(Responses, req.Body); ok {
			if err != nil {
				return badStanceRequest(err)
			}
			stances := make([]ScriptStance, len(passages))
			for i, p := range passages {
				stances[i] = neutralStance
				if strings.Contains(p, demoPlaceholder) {
					stances[i] = demoRefutes
				}
			}
			return textReply(Responses, stanceAnswer(stances))
		}
		body := req.JSON()
		if _, structured := body["text"]; structured {
			return Reply(Response{Output: []any{Message(Text(
				`{"approved":true,"reason":"Demonstration verdict of the local fake provider."}`))}})
		}
		if prev, _ := body["previous_response_id"].(string); prev != "" {
			return Reply(Response{Output: []any{Message(Text("Demonstration run finished."))}})
		}
		post, _ := inputSection(req.Body, "### Post text")
		claim := demoSentence.FindString(post)
		if claim == "" {
			return Reply(Response{Output: []any{Message(Text("Nothing to flag in this demonstration."))}})
		}
		claim = strings.TrimSpace(claim)
		return Reply(Response{Output: []any{FunctionCall("call_demo", "submit_correction", map[string]any{
			"text":      claim,
			"context":   claim,
			"summary":   "Demonstration flag from Errata's local fake provider: this sentence was picked because it contains a year.",
			"reasoning": "The local fake provider flags the first sentence with a four-digit number so that the whole pipeline can be watched end to end. It checked nothing.",
			"sources": []map[string]string{
				{"url": "https://www.usa.gov/", "title": "Errata demonstration: placeholder source (tier 1)",
					"snippet": demoPlaceholder + " on a tier-1 domain; it says nothing about the sentence."},
				{"url": "https://en.wikipedia.org/wiki/Erratum", "title": "Errata demonstration: placeholder source (tier 2)",
					"snippet": demoPlaceholder + " on a tier-2 domain; it says nothing about the sentence."},
			},
		})}})
	})
}

// demoPlaceholder starts the snippet of each placeholder source of the
// demonstration; the demonstration's stance step finds the passages that
// contain it refuting the flagged sentence (demoRefutes).
const demoPlaceholder = "Placeholder source of the local fake provider"

var demoRefutes = ScriptStance{Contradict: 0.9, Neutral: 0.1}
