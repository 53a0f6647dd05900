package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// The verdict analysis's requests, as consumers/analyst sends them
// (prompts.VerdictExtractionSchemaName, prompts.VerdictSummarySchemaName,
// prompts.HeadingText); the fake's tests drive the real decoders
// (consumers/verdict), so these cannot drift apart silently.
const (
	extractionSchemaName = "verdict_extraction"
	summarySchemaName    = "verdict_summary"
	headingText          = "### Text"
)

// ScriptVerdict scripts the verdict analysis of the texts containing its
// rule's match phrase: the claims the extraction call answers (with their
// triage), the search results of each claim (see Script.SearchHandler)
// with the stance the fake answers for them, and the summary call's
// answer. The post verdict itself is the rubric's, computed from these.
type ScriptVerdict struct {
	Claims []ScriptVerdictClaim `json:"claims"`
	// Summary, Caveats, Sources (URLs the summary cites), Confidence and
	// Label are the summary call's answer (the model's own reading).
	Summary    string   `json:"summary"`
	Caveats    []string `json:"caveats,omitempty"`
	Sources    []string `json:"sources,omitempty"`
	Confidence int      `json:"confidence"`
	Label      string   `json:"label"`
}

// ScriptVerdictClaim is one claim of the extraction answer.
type ScriptVerdictClaim struct {
	Text    string `json:"text"`
	Context string `json:"context"`
	// Kind is FACTUAL, OPINION, PREDICTION or NOT_A_CLAIM.
	Kind          string  `json:"kind"`
	Specificity   float64 `json:"specificity"`
	TimeSensitive bool    `json:"timeSensitive,omitempty"`
	CurrentEvents bool    `json:"currentEvents,omitempty"`
	Numeric       bool    `json:"numeric,omitempty"`
	Reason        string  `json:"reason"`
	// Sources are the search stand-in's results for the claim's queries
	// (a source's publishedAt is its date there), and a source's stance is
	// what the fake answers when a passage holding its snippet is judged
	// against the claim.
	Sources []ScriptSource `json:"sources,omitempty"`
}

var (
	verdictKinds  = []string{"FACTUAL", "OPINION", "PREDICTION", "NOT_A_CLAIM"}
	verdictLabels = []string{"True", "MostlyTrue", "Mixed", "Misleading", "False", "Unverifiable", "Opinion"}
)

func (v *ScriptVerdict) check(where string) error {
	if strings.TrimSpace(v.Summary) == "" {
		return fmt.Errorf("%s: summary is empty", where)
	}
	if !oneOf(v.Label, verdictLabels) {
		return fmt.Errorf("%s: label %q is not one of %v", where, v.Label, verdictLabels)
	}
	if v.Confidence < 0 || v.Confidence > 100 {
		return fmt.Errorf("%s: confidence %d is not in 0..100", where, v.Confidence)
	}
	for i, u := range v.Sources {
		if !absoluteHTTP(u) {
			return fmt.Errorf("%s: sources[%d] must be an absolute http(s) url", where, i)
		}
	}
	texts := map[string]bool{}
	for j, c := range v.Claims {
		where := fmt.Sprintf("%s claims[%d]", where, j)
		switch {
		case strings.TrimSpace(c.Text) == "" || strings.TrimSpace(c.Reason) == "":
			return fmt.Errorf("%s: text and reason must not be empty", where)
		case !oneOf(c.Kind, verdictKinds):
			return fmt.Errorf("%s: kind %q is not one of %v", where, c.Kind, verdictKinds)
		case c.Specificity < 0 || c.Specificity > 1:
			return fmt.Errorf("%s: specificity %v is not in [0, 1]", where, c.Specificity)
		case texts[collapse(c.Text)]:
			return fmt.Errorf("%s: the text %q is scripted twice", where, c.Text)
		}
		texts[collapse(c.Text)] = true
		for k, s := range c.Sources {
			if !absoluteHTTP(s.URL) {
				return fmt.Errorf("%s sources[%d]: url must be absolute http(s)", where, k)
			}
			if strings.TrimSpace(s.Title) == "" || strings.TrimSpace(s.Snippet) == "" {
				return fmt.Errorf("%s sources[%d]: title and snippet must not be empty", where, k)
			}
			if s.Stance != nil {
				if err := s.Stance.check(); err != nil {
					return fmt.Errorf("%s sources[%d]: %w", where, k, err)
				}
			}
			if s.PublishedAt != "" {
				if _, err := time.Parse(time.RFC3339, s.PublishedAt); err != nil {
					return fmt.Errorf("%s sources[%d]: publishedAt must be RFC 3339", where, k)
				}
			}
		}
	}
	return nil
}

func oneOf(v string, list []string) bool {
	for _, x := range list {
		if v == x {
			return true
		}
	}
	return false
}

func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// verdictRequest reads a verdict analysis request: a structured-output
// request named extractionSchemaName or summarySchemaName. It returns the
// schema name and the analysed text (the "### Text" section); ok is false
// for any other request.
func verdictRequest(ep Endpoint, body []byte) (name, text string, ok bool) {
	name = structuredOutputName(ep, body)
	if name != extractionSchemaName && name != summarySchemaName {
		return "", "", false
	}
	input := responsesInputText(body)
	if ep == ChatCompletions {
		input = chatUserText(body)
	}
	if sections, err := fencedSections(input); err == nil {
		for _, s := range sections {
			if s.heading == headingText {
				return name, s.body, true
			}
		}
	}
	return name, "", true
}

// structuredOutputName is the name of a request's structured-output
// schema (Responses text.format, Chat Completions response_format).
func structuredOutputName(ep Endpoint, body []byte) string {
	var req struct {
		Text struct {
			Format struct {
				Name string `json:"name"`
			} `json:"format"`
		} `json:"text"`
		ResponseFormat struct {
			JSONSchema struct {
				Name string `json:"name"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	if ep == ChatCompletions {
		return req.ResponseFormat.JSONSchema.Name
	}
	return req.Text.Format.Name
}

// verdictAnswer is the scripted answer to a verdict request about text:
// the matched rule's verdict section, or, when no rule with one matches,
// no claims and an Unverifiable summary. It also returns the log entry.
func (sc *Script) verdictAnswer(name, text string) (string, ScriptLogEntry) {
	var v *ScriptVerdict
	entry := ScriptLogEntry{Kind: "extract"}
	if name == summarySchemaName {
		entry.Kind = "summary"
	}
	if rule := sc.rule(text); rule != nil && rule.Verdict != nil {
		v, entry.Rule = rule.Verdict, rule.Name
	}
	if name == extractionSchemaName {
		claims := []map[string]any{}
		if v != nil {
			for _, c := range v.Claims {
				claims = append(claims, map[string]any{"text": c.Text, "context": c.Context, "kind": c.Kind,
					"specificity": c.Specificity, "time_sensitive": c.TimeSensitive, "current_events": c.CurrentEvents,
					"numeric": c.Numeric, "reason": c.Reason})
			}
		}
		entry.Claims = len(claims)
		return string(mustJSON(map[string]any{"claims": claims})), entry
	}
	answer := map[string]any{"summary": "The script has no verdict for this text.", "caveats": []string{},
		"sources": []string{}, "confidence": 0, "label": "Unverifiable"}
	if v != nil {
		answer = map[string]any{"summary": v.Summary, "caveats": nonNil(v.Caveats), "sources": nonNil(v.Sources),
			"confidence": v.Confidence, "label": v.Label}
	}
	entry.Label = answer["label"].(string)
	return string(mustJSON(answer)), entry
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// SearchHandler is a SearXNG-compatible search stand-in (GET
// /search?q=...&format=json, as consumers/websearch's SearXNG client asks)
// answering from the script: a query gets the sources of the scripted
// verdict claim that shares the most words with it (at least two; words
// of letters and digits, compared case-insensitively; the first such
// claim on a tie), in the order given; any other query gets no results.
// Tests serve it with httptest and reach it through a client that allows
// loopback.
func (sc *Script) SearchHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/search":
			http.NotFound(w, r)
			return
		case q.Get("format") != "json":
			http.Error(w, "format=json is required", http.StatusForbidden)
			return
		case strings.TrimSpace(q.Get("q")) == "":
			http.Error(w, "q is required", http.StatusBadRequest)
			return
		}
		results := []map[string]any{}
		if c := sc.searchClaim(q.Get("q")); c != nil {
			for _, s := range c.Sources {
				var published any // null, as SearXNG sends for an undated result
				if s.PublishedAt != "" {
					t, _ := time.Parse(time.RFC3339, s.PublishedAt)
					published = t.UTC().Format("2006-01-02T15:04:05")
				}
				results = append(results, map[string]any{"url": s.URL, "title": s.Title, "content": s.Snippet,
					"publishedDate": published, "engine": "fakeopenai"})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(map[string]any{"query": q.Get("q"), "number_of_results": len(results), "results": results}))
	})
}

// searchClaim is the scripted verdict claim a query finds (see
// SearchHandler), or nil.
func (sc *Script) searchClaim(query string) *ScriptVerdictClaim {
	qw := words(query)
	var best *ScriptVerdictClaim
	bestScore := 1 // at least two shared words
	for i := range sc.Rules {
		v := sc.Rules[i].Verdict
		if v == nil {
			continue
		}
		for j := range v.Claims {
			score := 0
			for w := range words(v.Claims[j].Text) {
				if qw[w] {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = &v.Claims[j], score
			}
		}
	}
	return best
}

// words are the distinct lower-case runs of letters and digits of s.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		out[f] = true
	}
	return out
}
