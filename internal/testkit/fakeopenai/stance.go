package fakeopenai

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
)

// The stance request's layout and answer, as consumers/evidence/stance
// sends them (prompts.StanceSchemaName, prompts.HeadingClaim,
// prompts.PassageHeading); the fake's tests drive the real stance provider,
// so these cannot drift apart silently.
const (
	stanceSchemaName = "stance_judgements"
	headingClaim     = "### Claim"
	headingPassage   = "### Passage "
)

// ScriptStance is a scripted stance: the probabilities that a source's
// passage entails the claim, contradicts it, or neither. Each is in [0, 1]
// and they sum to 1 (± 0.05).
type ScriptStance struct {
	Entail     float64 `json:"entail"`
	Contradict float64 `json:"contradict"`
	Neutral    float64 `json:"neutral"`
}

// neutralStance is the answer for a passage the script does not know.
var neutralStance = ScriptStance{Neutral: 1}

func (st ScriptStance) check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"entail", st.Entail}, {"contradict", st.Contradict}, {"neutral", st.Neutral}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("stance %s %v is not in [0, 1]", f.name, f.v)
		}
	}
	if sum := st.Entail + st.Contradict + st.Neutral; math.Abs(sum-1) > 0.05 {
		return fmt.Errorf("stance probabilities sum to %.3f, not 1", sum)
	}
	return nil
}

// stanceRequest reads a stance request: a structured-output request named
// stanceSchemaName (Responses text.format, Chat Completions
// response_format) whose user input is the claim section, then the passage
// sections "### Passage 1", "### Passage 2", ... in order. ok is false for
// any other request; err reports a stance request that breaks the layout.
func stanceRequest(ep Endpoint, body []byte) (claim string, passages []string, ok bool, err error) {
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
		return "", nil, false, nil
	}
	var text string
	switch {
	case ep == Responses && req.Text.Format.Name == stanceSchemaName:
		text = responsesInputText(body)
	case ep == ChatCompletions && req.ResponseFormat.JSONSchema.Name == stanceSchemaName:
		text = chatUserText(body)
	default:
		return "", nil, false, nil
	}
	sections, err := fencedSections(text)
	if err != nil {
		return "", nil, true, err
	}
	if len(sections) < 2 || sections[0].heading != headingClaim {
		return "", nil, true, errors.New("a stance request needs the claim section, then at least one passage")
	}
	for i, s := range sections[1:] {
		if want := fmt.Sprintf("%s%d", headingPassage, i+1); s.heading != want {
			return "", nil, true, fmt.Errorf("section %d is %q, want %q", i+2, s.heading, want)
		}
		passages = append(passages, s.body)
	}
	return sections[0].body, passages, true, nil
}

type section struct{ heading, body string }

// fencedSections splits text made of sections (a heading line, the fence's
// BEGIN line, the body, the matching END line, then a blank line or the
// end) in order. The fence lines are read from the first section; since
// content cannot contain them, text inside a body that imitates a heading
// or a marker stays part of that body.
func fencedSections(text string) ([]section, error) {
	var out []section
	var open, closeLine string
	rest := text
	for strings.TrimSpace(rest) != "" {
		rest = strings.TrimLeft(rest, "\n")
		heading, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("section %d: no fence after the heading %q", len(out)+1, heading)
		}
		line, after, _ := strings.Cut(after, "\n")
		if open == "" {
			if !strings.HasPrefix(line, "<<<UNTRUSTED-DATA-BEGIN ") {
				return nil, fmt.Errorf("section %d: %q is not a fence line", len(out)+1, line)
			}
			open, closeLine = line, strings.Replace(line, "BEGIN", "END", 1)
		}
		if line != open {
			return nil, fmt.Errorf("section %d: the fence line differs from the first section's", len(out)+1)
		}
		body, after, found := strings.Cut(after, closeLine+"\n")
		if !found {
			return nil, fmt.Errorf("section %d (%s): the fence is not closed", len(out)+1, heading)
		}
		out = append(out, section{heading: heading, body: strings.TrimSuffix(body, "\n")})
		rest = after
	}
	return out, nil
}

// stance is the scripted stance of each passage of a stance request. The
// claim is the scripted claim (of an investigation, or of a verdict
// analysis) whose text the request's claim contains (the longest such
// text, compared normalized); each passage takes the stance of that
// claim's source whose snippet it contains (the longest snippet).
// Everything else, a source without a stance included, is neutral (entail
// 0, contradict 0, neutral 1). In an appeal review (appeal), a source's
// AppealStance, when it has one, replaces its Stance.
func (sc *Script) stance(claim string, passages []string, appeal bool) (claimText string, out []ScriptStance, matched int) {
	type scripted struct {
		text    string
		sources []ScriptSource
	}
	var best *scripted
	c := collapse(claim)
	consider := func(text string, sources []ScriptSource) {
		if t := collapse(text); strings.Contains(c, t) && (best == nil || len(t) > len(collapse(best.text))) {
			best = &scripted{text: text, sources: sources}
		}
	}
	for i := range sc.Rules {
		for _, sclaim := range sc.Rules[i].Claims {
			consider(sclaim.Text, sclaim.Sources)
		}
		if v := sc.Rules[i].Verdict; v != nil {
			for _, vc := range v.Claims {
				consider(vc.Text, vc.Sources)
			}
		}
	}
	out = make([]ScriptStance, len(passages))
	for k, p := range passages {
		out[k] = neutralStance
		if best == nil {
			continue
		}
		p = collapse(p)
		var src *ScriptSource
		for i := range best.sources {
			s := &best.sources[i]
			if snip := collapse(s.Snippet); strings.Contains(p, snip) && (src == nil || len(snip) > len(collapse(src.Snippet))) {
				src = s
			}
		}
		if src == nil {
			continue
		}
		st := src.Stance
		if appeal && src.AppealStance != nil {
			st = src.AppealStance
		}
		if st != nil {
			out[k] = *st
			matched++
		}
	}
	if best != nil {
		claimText = best.text
	}
	return claimText, out, matched
}

// metadataAppealID is the request metadata key naming the appeal whose
// review sent a stance request (consumers/appeals).
const metadataAppealID = "appeal_id"

// appealOf is the appeal a request's metadata names, or "": the Responses
// API carries metadata, Chat Completions none (so an appeal review on that
// endpoint is answered like any other stance request).
func appealOf(ep Endpoint, body []byte) string {
	if ep != Responses {
		return ""
	}
	var req struct {
		Metadata map[string]string `json:"metadata"`
	}
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	return req.Metadata[metadataAppealID]
}

// stanceAnswer is the strict answer to a stance request.
func stanceAnswer(stances []ScriptStance) string {
	type judgement struct {
		Index int `json:"index"`
		ScriptStance
	}
	js := make([]judgement, len(stances))
	for i, st := range stances {
		js[i] = judgement{Index: i + 1, ScriptStance: st}
	}
	return string(mustJSON(map[string]any{"judgements": js}))
}

// textReply answers a request of ep with an assistant message holding text.
func textReply(ep Endpoint, text string) Step {
	if ep == ChatCompletions {
		return ChatReply(ChatCompletion{Content: text})
	}
	return Reply(Response{Output: []any{Message(Text(text))}})
}

// badStanceRequest is the 400 for a stance request the fake cannot read: a
// bug in the request builder, never a scripted outcome.
func badStanceRequest(err error) Step {
	return Fail(http.StatusBadRequest, APIError{Type: "invalid_request_error", Code: "fake_bad_stance_request",
		Message: "fakeopenai: unreadable stance request: " + err.Error()})
}

// chatUserText joins the text of the user messages of a Chat Completions
// request.
func chatUserText(body []byte) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	var all strings.Builder
	for _, m := range req.Messages {
		if m.Role == "user" {
			all.WriteString(contentText(m.Content))
		}
	}
	return all.String()
}

// contentText is the text of a message content: a string, or the text parts
// of a list of parts.
func contentText(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text) // image parts between text parts add nothing
	}
	return b.String()
}
