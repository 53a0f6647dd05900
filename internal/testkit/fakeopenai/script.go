package fakeopenai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/errata-dev/errata/events/content"
)

// Script is a scripted investigator for end-to-end runs (errata fake-openai
// --script FILE). Each rule names a phrase; an investigation whose post text
// contains it gets the rule's claims from stage 1 (one submit_correction
// call each, in the order given), and the validator answers each claim with
// the verdict the script gives it. A post no rule matches ends without
// claims. A source may carry a stance, which the fake answers when the
// evidence engine judges a passage holding its snippet against its claim
// (see Script.stance); every other passage is neutral. An appeal review
// (consumers/appeals) may be answered otherwise (ScriptSource.AppealStance).
// The script is test data: its verdicts and stances check nothing.
type Script struct {
	// APIKey is the only key the fake accepts (GET /v1/models answers 401
	// for any other, so the API's key check says "invalid"). Empty: any key.
	APIKey string       `json:"apiKey,omitempty"`
	Rules  []ScriptRule `json:"rules"`
}

// ScriptRule scripts the investigation of the posts containing Match.
type ScriptRule struct {
	// Name identifies the rule in the request log.
	Name string `json:"name"`
	// Match is a phrase of the post text (both normalized like post text:
	// curly quotes, dashes, whitespace); the first rule that matches is used.
	Match  string        `json:"match"`
	Claims []ScriptClaim `json:"claims"`
	// Verdict scripts the verdict analysis of the matching texts (nil:
	// no claims, an Unverifiable summary).
	Verdict *ScriptVerdict `json:"verdict,omitempty"`
}

// ScriptClaim is one correction stage 1 submits, and its verdict.
type ScriptClaim struct {
	// Text and Context are sent as written; the worker accepts them only
	// when they quote the post verbatim.
	Text      string         `json:"text"`
	Context   string         `json:"context"`
	Summary   string         `json:"summary"`
	Reasoning string         `json:"reasoning"`
	Sources   []ScriptSource `json:"sources"`
	// Approved is the validator's verdict (required, so that a script says
	// which claims must never be published).
	Approved *bool `json:"approved"`
	// Reason is the verdict's explanation (a default when empty).
	Reason string `json:"reason,omitempty"`
}

// ScriptSource is a source of a claim.
type ScriptSource struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
	// Stance is the stance the fake answers for a passage containing
	// Snippet when it is judged against this claim (see Script.stance);
	// nil: neutral.
	Stance *ScriptStance `json:"stance,omitempty"`
	// AppealStance, when set, replaces Stance when an appeal review judges
	// the passage: a stance request whose metadata names the appeal
	// (appeal_id, as consumers/appeals sends it on the Responses API), so a
	// script can have a claim published by its investigation and then
	// withdrawn (or upheld) by the review of an appeal. Nil: the review is
	// answered like any other stance request.
	AppealStance *ScriptStance `json:"appealStance,omitempty"`
	// PublishedAt (RFC 3339) dates a verdict claim's source in the search
	// stand-in's results (Script.SearchHandler); empty: undated.
	PublishedAt string `json:"publishedAt,omitempty"`
}

// LoadScript reads and checks a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScript decodes a script (unknown fields are errors, so a misspelt
// key cannot silently change a test) and checks it.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var sc Script
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("fakeopenai script: %w", err)
	}
	if err := sc.check(); err != nil {
		return nil, fmt.Errorf("fakeopenai script: %w", err)
	}
	return &sc, nil
}

func (sc *Script) check() error {
	if len(sc.Rules) == 0 {
		return errors.New("no rules")
	}
	names := map[string]bool{}
	for i, r := range sc.Rules {
		where := fmt.Sprintf("rules[%d]", i)
		switch {
		case strings.TrimSpace(r.Name) == "":
			return fmt.Errorf("%s: name is empty", where)
		case names[r.Name]:
			return fmt.Errorf("%s: name %q is used twice", where, r.Name)
		case collapse(r.Match) == "":
			return fmt.Errorf("%s (%s): match is empty", where, r.Name)
		}
		names[r.Name] = true
		if r.Verdict != nil {
			if err := r.Verdict.check(fmt.Sprintf("rules[%d] (%s) verdict", i, r.Name)); err != nil {
				return err
			}
		}
		texts := map[string]bool{}
		for j, c := range r.Claims {
			where := fmt.Sprintf("rules[%d] (%s) claims[%d]", i, r.Name, j)
			for _, f := range [][2]string{{"text", c.Text}, {"context", c.Context}, {"summary", c.Summary}, {"reasoning", c.Reasoning}} {
				if strings.TrimSpace(f[1]) == "" {
					return fmt.Errorf("%s: %s is empty", where, f[0])
				}
			}
			if c.Approved == nil {
				return fmt.Errorf("%s: approved (the validator's verdict) is missing", where)
			}
			if texts[collapse(c.Text)] {
				return fmt.Errorf("%s: the text %q is scripted twice", where, c.Text)
			}
			texts[collapse(c.Text)] = true
			if len(c.Sources) == 0 {
				return fmt.Errorf("%s: no sources", where)
			}
			for k, s := range c.Sources {
				u, err := url.Parse(s.URL)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return fmt.Errorf("%s sources[%d]: url must be absolute http(s)", where, k)
				}
				if strings.TrimSpace(s.Title) == "" || strings.TrimSpace(s.Snippet) == "" {
					return fmt.Errorf("%s sources[%d]: title and snippet must not be empty", where, k)
				}
				for _, st := range []*ScriptStance{s.Stance, s.AppealStance} {
					if st == nil {
						continue
					}
					if err := st.check(); err != nil {
						return fmt.Errorf("%s sources[%d]: %w", where, k, err)
					}
				}
			}
		}
	}
	return nil
}

// rule returns the first rule whose phrase occurs in the post text.
func (sc *Script) rule(post string) *ScriptRule {
	post = collapse(post)
	for i := range sc.Rules {
		if strings.Contains(post, collapse(sc.Rules[i].Match)) {
			return &sc.Rules[i]
		}
	}
	return nil
}

// ScriptLogEntry is one line of the request log Play writes: what the
// fake answered, so a test can count investigations and verdicts.
type ScriptLogEntry struct {
	Seq int `json:"seq"`
	// Kind is "investigate" (a stage-1 start), "continue" (a stage-1 turn
	// after tool outputs), "validate", "stance", "extract" and "summary"
	// (the verdict analysis's calls) or "other".
	Kind string `json:"kind"`
	// Rule is the matched rule ("" when none matched).
	Rule string `json:"rule"`
	// Claims is the number of submissions of an "investigate" answer, or
	// of claims of an "extract" answer.
	Claims int `json:"claims,omitempty"`
	// Label is the label of a "summary" answer.
	Label string `json:"label,omitempty"`
	// Text and Approved describe a "validate" answer; Text is also the
	// scripted claim a "stance" request matched.
	Text     string `json:"text,omitempty"`
	Approved *bool  `json:"approved,omitempty"`
	// Passages is the number of passages of a "stance" request, Matched
	// how many of them got a scripted stance (the others are neutral).
	Passages int `json:"passages,omitempty"`
	Matched  int `json:"matched,omitempty"`
	// Appeal is the appeal whose review sent a "stance" request (its
	// metadata's appeal_id; empty for every other stance request).
	Appeal string `json:"appeal,omitempty"`
}

// Play makes the fake answer POST /v1/responses from sc, and stance
// requests (consumers/evidence/stance) and the verdict analysis's
// extraction and summary requests (consumers/analyst) on both
// /v1/responses and /v1/chat/completions; other Chat Completions requests
// stay unscripted. GET /search (SearchURL) is then the script's SearXNG
// stand-in (SearchHandler).
// When sc has an API key, every other key is refused. Each answer is
// logged to log as one JSON line (ScriptLogEntry); log may be nil.
func (s *Server) Play(sc *Script, log io.Writer) {
	if sc.APIKey != "" {
		s.RequireAPIKey(sc.APIKey)
	}
	s.mu.Lock()
	s.search = sc.SearchHandler()
	s.mu.Unlock()
	var mu sync.Mutex
	record := func(e ScriptLogEntry) {
		if log == nil {
			return
		}
		line, _ := json.Marshal(e)
		mu.Lock()
		defer mu.Unlock()
		_, _ = log.Write(append(line, '\n'))
	}
	stance := func(req Request) (Step, bool) {
		claim, passages, ok, err := stanceRequest(req.Endpoint, req.Body)
		if !ok {
			return Step{}, false
		}
		if err != nil {
			record(ScriptLogEntry{Seq: req.Seq, Kind: "other"})
			return badStanceRequest(err), true
		}
		appeal := appealOf(req.Endpoint, req.Body)
		text, stances, matched := sc.stance(claim, passages, appeal != "")
		record(ScriptLogEntry{Seq: req.Seq, Kind: "stance", Text: text, Passages: len(passages), Matched: matched,
			Appeal: appeal})
		return textReply(req.Endpoint, stanceAnswer(stances)), true
	}
	verdict := func(req Request) (Step, bool) {
		name, text, ok := verdictRequest(req.Endpoint, req.Body)
		if !ok {
			return Step{}, false
		}
		answer, entry := sc.verdictAnswer(name, text)
		entry.Seq = req.Seq
		record(entry)
		return textReply(req.Endpoint, answer), true
	}
	s.HandleFunc(ChatCompletions, func(req Request) Step {
		if st, ok := stance(req); ok {
			return st
		}
		if st, ok := verdict(req); ok {
			return st
		}
		return Fail(http.StatusInternalServerError, APIError{Type: "server_error", Code: "fake_unscripted",
			Message: fmt.Sprintf("fakeopenai: the script answers only stance requests on %s (request %d)", req.Path, req.Seq)})
	})
	s.HandleFunc(Responses, func(req Request) Step {
		if st, ok := stance(req); ok {
			return st
		}
		if st, ok := verdict(req); ok {
			return st
		}
		body := req.JSON()
		post, _ := inputSection(req.Body, "### Post text")
		rule := sc.rule(post)
		entry := ScriptLogEntry{Seq: req.Seq}
		if rule != nil {
			entry.Rule = rule.Name
		}
		if candidate, ok := inputSection(req.Body, "### Candidate claim"); ok {
			entry.Kind = "validate"
			approved, reason := sc.verdict(rule, candidate)
			entry.Approved = &approved
			var c struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal([]byte(candidate), &c)
			entry.Text = c.Text
			record(entry)
			verdict, _ := json.Marshal(map[string]any{"approved": approved, "reason": reason})
			return Reply(Response{Output: []any{Message(Text(string(verdict)))}})
		}
		if prev, _ := body["previous_response_id"].(string); prev != "" {
			entry.Kind = "continue"
			record(entry)
			return Reply(Response{Output: []any{Message(Text("Scripted investigation finished."))}})
		}
		if post == "" {
			entry.Kind = "other"
			record(entry)
			return Reply(Response{Output: []any{Message(Text("The script has no answer for this request."))}})
		}
		entry.Kind = "investigate"
		if rule == nil || len(rule.Claims) == 0 {
			record(entry)
			return Reply(Response{Output: []any{Message(Text("The script flags nothing in this post."))}})
		}
		entry.Claims = len(rule.Claims)
		record(entry)
		out := make([]any, 0, len(rule.Claims))
		for i, c := range rule.Claims {
			sources := make([]map[string]string, len(c.Sources))
			for k, src := range c.Sources {
				sources[k] = map[string]string{"url": src.URL, "title": src.Title, "snippet": src.Snippet}
			}
			out = append(out, FunctionCall(fmt.Sprintf("call_script_%d_%d", req.Seq, i+1), "submit_correction", map[string]any{
				"text": c.Text, "context": c.Context, "summary": c.Summary, "reasoning": c.Reasoning, "sources": sources,
			}))
		}
		return Reply(Response{Output: out})
	})
}

// verdict is the scripted verdict of a candidate claim (the JSON the
// validator sends): its claim's, or a rejection when the script does not
// know the claim.
func (sc *Script) verdict(rule *ScriptRule, candidate string) (bool, string) {
	var c struct {
		Text string `json:"text"`
	}
	if json.Unmarshal([]byte(candidate), &c) != nil || rule == nil {
		return false, "Scripted verdict: the script has no such claim."
	}
	for _, claim := range rule.Claims {
		if collapse(claim.Text) == collapse(c.Text) {
			reason := claim.Reason
			if reason == "" {
				reason = "Scripted verdict of the fake provider."
			}
			return *claim.Approved, reason
		}
	}
	return false, "Scripted verdict: the script has no such claim."
}

// inputSection is the fenced body of the input section under heading (the
// line after the heading opens the fence; its END twin closes it), searched
// in the text of every input message.
func inputSection(body []byte, heading string) (string, bool) {
	_, after, ok := strings.Cut(responsesInputText(body), heading+"\n")
	if !ok {
		return "", false
	}
	open, rest, _ := strings.Cut(after, "\n")
	closeLine := strings.Replace(open, "BEGIN", "END", 1)
	section, _, found := strings.Cut(rest, "\n"+closeLine)
	return section, found
}

// responsesInputText joins the text of every input message of a Responses
// request (input may also be a plain string).
func responsesInputText(body []byte) string {
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	var msgs []struct {
		Content json.RawMessage `json:"content"` // a string, or a list of parts
	}
	if json.Unmarshal(req.Input, &msgs) != nil {
		var text string
		_ = json.Unmarshal(req.Input, &text)
		return text
	}
	var all strings.Builder
	for _, m := range msgs {
		all.WriteString(contentText(m.Content))
	}
	return all.String()
}

// collapse is s as the server compares post text: normalized (quotes,
// dashes, whitespace runs), so a script may quote the page as displayed.
func collapse(s string) string { return content.Normalize(s) }
