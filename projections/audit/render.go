package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
)

// JSON renders the trail as indented JSON (field order as declared), with
// a trailing newline and without HTML escaping.
func JSON(t *Trail) ([]byte, error) {
	return renderJSON(t)
}

func renderJSON(t any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("render trail: %w", err)
	}
	return buf.Bytes(), nil
}

// clipAt bounds long texts (inputs, instructions, outputs) in the text
// rendering; the JSON rendering has them whole.
const clipAt = 600

// Text renders the trail for a terminal: one section per part, every step
// with its time, type, event id and log position.
func Text(w io.Writer, t *Trail) error {
	r := &textWriter{w: w}
	r.line(0, "Investigation %s  status %s", t.InvestigationID, t.Status)
	r.line(1, "post %s %s (post %s, version %s)", t.Platform, t.ExternalID, t.PostID, t.PostVersionID)
	r.line(1, "%d events; tokens %s", t.Steps, usage(t.Usage))

	r.section("Post version")
	if pv := t.PostVersion; pv == nil {
		r.line(1, "(no registration of this version on the posts topic)")
	} else {
		r.kv("url", pv.URL)
		r.kv("version hash", pv.VersionHash)
		r.kv("content hash", pv.ContentHash)
		r.kv("occurrences", pv.OccurrencesHash)
		r.kv("word count", fmt.Sprint(pv.WordCount))
		r.kv("registered", fmt.Sprintf("%d time(s); first %s", pv.Registrations, pv.FirstProvenance))
		r.step(2, pv.FirstRegistered)
		if pv.ServerFetchError != "" {
			r.kv("server fetch", pv.ServerFetchError)
		}
		if pv.ServerVerified != nil {
			r.kv("verified", "first SERVER_VERIFIED registration")
			r.step(2, *pv.ServerVerified)
		}
		for _, a := range pv.Anomalies {
			r.kv("anomaly", fmt.Sprintf("%s %s: observed %q, server %q", a.Kind, a.Field, a.ObservedValue, a.ServerValue))
			r.step(2, a.Step)
		}
	}

	r.section("Configuration")
	c := t.Configuration
	switch {
	case c.Spec != nil:
		r.kv("name", fmt.Sprintf("%s (%s)", c.Name, c.ID))
		sp := c.Spec
		r.kv("model", sp.Model)
		if sp.ValidatorModel != "" {
			r.kv("validator model", sp.ValidatorModel)
		}
		if sp.Provider != "" {
			r.kv("provider", sp.Provider)
		}
		r.kv("prompts", fmt.Sprintf("investigator %s, validator %s", sp.InvestigatorPrompt, sp.ValidatorPrompt))
		r.kv("policy", sp.Policy)
		r.kv("author context", fmt.Sprint(sp.AuthorContext))
	case c.ID == events.DefaultConfigurationID:
		r.kv("name", c.Name+" (the worker's own settings)")
	default:
		r.kv("name", fmt.Sprintf("(not in this trail) %s", c.ID))
	}
	if t.ExperimentID != "" {
		r.kv("experiment", fmt.Sprintf("%s, arm %s", t.ExperimentID, t.Arm))
	}
	if t.Supersedes != "" {
		r.kv("supersedes", t.Supersedes)
	}
	for _, id := range t.SupersededBy {
		r.kv("superseded by", id)
	}

	r.section("Requests")
	for _, q := range t.Requests {
		who := q.Source
		if q.RequesterKey != "" {
			who += ", requester " + q.RequesterKey
		}
		if q.UniqueViewScore != 0 {
			who += fmt.Sprintf(", unique-view score %d", q.UniqueViewScore)
		}
		r.line(1, "%s", who)
		r.step(2, q.Step)
	}
	for _, k := range t.UserKeys {
		r.line(1, "user key attached (sealed by key-ring id %q, expires %s; the key is never in the log)", k.KeyRingID, k.ExpiresAt)
		r.step(2, k.Step)
	}

	r.section("Input")
	if in := t.Input; in == nil {
		r.line(1, "(not snapshotted)")
	} else {
		r.step(1, in.Step)
		r.kv("provenance", in.Provenance)
		format := in.Format + " from " + in.MarkdownSource
		if in.RendererVersion != "" {
			format += " (renderer " + in.RendererVersion + ")"
		}
		r.kv("format", format)
		r.kv("content", fmt.Sprintf("sha256 %s, %d chars", in.ContentSHA256, len(in.Content)))
		r.kv("text", fmt.Sprintf("sha256 %s, %d words", in.TextSHA256, in.WordCount))
		for _, im := range in.Images {
			r.kv("image", fmt.Sprintf("[IMAGE:%d] %s %s %d bytes sha256 %s (blob %s)", im.Placeholder, im.SourceURL, im.MediaType, im.Bytes, im.SHA256, im.BlobKey))
		}
		for _, s := range in.SkippedImages {
			r.kv("skipped", s.URL+": "+s.Reason)
		}
		if u := in.Update; u != nil {
			r.kv("update of", fmt.Sprintf("investigation %s (version %s), %d prior claim(s)", u.PriorInvestigationID, u.PriorPostVersionID, len(u.PriorClaims)))
			r.block(2, "diff", u.Diff)
		}
		r.block(2, "content", in.Content)
	}

	for _, a := range t.Attempts {
		r.section(fmt.Sprintf("Attempt %d of series %d", a.Attempt, a.Series))
		if a.Started != nil {
			r.step(1, *a.Started)
		}
		r.kv("prompt", fmt.Sprintf("%s %s sha256 %s", a.Prompt.Name, a.Prompt.Version, a.Prompt.SHA256))
		r.kv("model", a.Provider+" "+a.Model)
		r.kv("web search", a.WebSearch)
		r.kv("round cap", fmt.Sprint(a.RoundCap))
		r.kv("paid by", a.Credential+" key")
		if a.Worker != "" {
			r.kv("worker", a.Worker)
		}
		names := make([]string, len(a.Tools))
		for i, tool := range a.Tools {
			names[i] = tool.Name
		}
		r.kv("tools", strings.Join(names, ", "))
		r.kv("input", "event "+a.InputEventID)
		r.block(2, "instructions", a.Instructions)
		for _, x := range a.Exchanges {
			r.exchange(1, x)
		}
		for _, s := range a.Submissions {
			r.line(1, "- claim submission %d (%s, call %s): %s", s.Seq, s.Disposition, s.CallID, s.SubmissionID)
			r.step(2, s.Step)
			r.kv2("text", s.Correction.Text)
			r.kv2("summary", s.Correction.Summary)
			r.kv2("reasoning", clip(s.Correction.Reasoning))
			for _, src := range s.Correction.Sources {
				r.kv2("source", src.URL+" ("+src.Title+")")
			}
			for _, x := range s.Exchanges {
				r.exchange(2, x)
			}
			if v := s.Validation; v != nil {
				r.kv2("verdict", fmt.Sprintf("%s after %d try(ies) by %s %s (prompt %s %s): %s", v.Outcome, v.Tries, v.Provider, v.Model, v.Prompt.Name, v.Prompt.Version, v.Reason))
				r.step(3, v.Step)
			} else if s.Disposition == "ACCEPTED" {
				r.kv2("verdict", "(none yet)")
			}
			for _, x := range s.AssessorExchanges {
				r.exchange(2, x)
			}
			if as := s.Assessment; as != nil {
				r.assessment(as)
			}
		}
		for _, rt := range a.Retains {
			r.line(1, "- retain prior claim %s (%s, call %s)", rt.PriorClaimID, rt.Disposition, rt.CallID)
			r.step(2, rt.Step)
		}
		if s := a.StageOne; s != nil {
			r.line(1, "- stage 1 finished: %d round(s), %d submission(s), %d accepted, %d retained, forced final %t", s.Rounds, s.Submissions, s.Accepted, s.Retained, s.ForcedFinal)
			r.step(2, s.Step)
			r.block(2, "final text", s.FinalText)
		}
		if f := a.Failure; f != nil {
			retry := ""
			if f.RetryAt != "" {
				retry = "; retry at " + f.RetryAt
			}
			r.line(1, "- attempt failed: %s %s: %s%s", f.Class, f.Kind, f.Message, retry)
			r.step(2, f.Step)
		}
		r.line(1, "tokens of the attempt: %s", usage(a.Usage))
	}

	r.section("Result")
	for _, f := range t.Failures {
		r.line(1, "FAILED (series %d) after %d attempt(s): %s", f.Series, f.Attempts, f.Reason)
		r.step(2, f.Step)
	}
	if res := t.Result; res != nil {
		r.line(1, "COMPLETE by attempt %d of series %d: %s %s, prompt %s, provenance %s, %d claim(s)",
			res.Attempt, res.Series, res.Provider, res.Model, res.PromptVersion, res.Provenance, len(res.Claims))
		r.step(2, res.Step)
		if pub, held := decisions(t, res); pub+len(held) > 0 {
			line := fmt.Sprintf("assessments of the attempt: %d published, %d withheld", pub, len(held))
			if len(held) > 0 {
				line += " (" + strings.Join(held, ", ") + ")"
			}
			r.line(1, "%s", line)
		}
		for _, c := range res.Claims {
			r.line(1, "- claim %s: %q", c.ID, c.Text)
			if c.SubmissionID != "" {
				r.kv2("from", "submission "+c.SubmissionID)
			}
			r.kv2("summary", c.Summary)
			for _, src := range c.Sources {
				r.kv2("source", src.URL+" ("+src.Title+")")
			}
		}
	} else if len(t.Failures) == 0 {
		r.line(1, "(none yet)")
	}
	r.section("Tokens")
	for _, a := range t.Attempts {
		r.line(1, "attempt %d.%d  %s", a.Series, a.Attempt, usage(a.Usage))
	}
	r.line(1, "total        %s", usage(t.Usage))
	return r.err
}

// decisions counts the assessments of the attempt that produced res:
// published ones, and the reasons of the withheld ones, in order.
func decisions(t *Trail, res *Result) (published int, withheld []string) {
	for _, a := range t.Attempts {
		if a.Series != res.Series || a.Attempt != res.Attempt {
			continue
		}
		for _, s := range a.Submissions {
			switch as := s.Assessment; {
			case as == nil:
			case as.Published:
				published++
			default:
				withheld = append(withheld, as.Reason)
			}
		}
	}
	return published, withheld
}

// assessment prints an evidence assessment under its submission.
func (r *textWriter) assessment(as *Assessment) {
	decision := "PUBLISHED"
	if !as.Published {
		decision = "WITHHELD: " + as.Reason + " (failed: " + strings.Join(as.Failed, ", ") + ")"
	}
	r.kv2("assessment", fmt.Sprintf("%s, score %d (raw %v): %s", as.Verdict, as.Score, as.Raw, decision))
	r.step(3, as.Step)
	g := as.Gate4
	r.kv2("gate 4", fmt.Sprintf("%s: %d independent source(s) with a stance, quality %v, agreement %v", g.Level, g.Sources, g.Quality, g.Agreement))
	f := as.Features
	r.kv2("features", fmt.Sprintf("e_max %v, e_mean3 %v, c_max %v, agree_dom %d, rel_avg %v, rec_max %v, num_ok %d",
		f.EMax, f.EMean3, f.CMax, f.AgreeDom, f.RelAvg, f.RecMax, f.NumOK))
	r.kv2("policy", fmt.Sprintf("%s, publish mode %s; registry %s", as.PolicyVersion, as.PublishMode, as.RegistryVersion))
	if as.StanceProvider != "" || as.StancePrompt != nil {
		stance := as.StanceProvider + " " + as.StanceModel
		if p := as.StancePrompt; p != nil {
			stance += fmt.Sprintf(" (prompt %s %s sha256 %s)", p.Name, p.Version, p.SHA256)
		}
		r.kv2("stance", stance)
	}
	if as.Causal {
		r.kv2("causal", "yes (a timeline query ran)")
	}
	for _, q := range as.Queries {
		outcome := fmt.Sprintf("%d result(s)", q.Results)
		if q.Error != "" {
			outcome = "failed: " + q.Error
		}
		r.kv2("query", fmt.Sprintf("%s %q: %s", q.Kind, q.Query, outcome))
	}
	for _, s := range as.Sources {
		line := fmt.Sprintf("tier %d (%s) %s from %s: entail %v, contradict %v, neutral %v", s.Tier, s.Rule, s.URL, s.Origin,
			s.Entail, s.Contradict, s.Neutral)
		if s.StanceNote != "" {
			line += " (" + s.StanceNote + ")"
		}
		if s.Num != "" {
			line += ", numbers " + s.Num
		}
		line += fmt.Sprintf(", recency %v", s.Recency)
		if s.PublishedAt != "" {
			line += ", published " + s.PublishedAt
		}
		r.kv2("source", line)
	}
	for _, d := range as.Dropped {
		r.kv2("dropped", fmt.Sprintf("%s from %s: %s", d.URL, d.Origin, d.Reason))
	}
}

func usage(u Usage) string {
	return fmt.Sprintf("%d in (%d cached), %d out (%d reasoning), %d total",
		u.InputTokens, u.CachedInputTokens, u.OutputTokens, u.ReasoningTokens, u.TotalTokens)
}

func clip(s string) string {
	r := []rune(s)
	if len(r) <= clipAt {
		return s
	}
	return string(r[:clipAt]) + fmt.Sprintf("… (%d more characters; --json has all)", len(r)-clipAt)
}

type textWriter struct {
	w   io.Writer
	err error
}

func (r *textWriter) line(indent int, format string, args ...any) {
	if r.err != nil {
		return
	}
	_, r.err = fmt.Fprintf(r.w, "%s%s\n", strings.Repeat("  ", indent), fmt.Sprintf(format, args...))
}

func (r *textWriter) section(title string) {
	r.line(0, "")
	r.line(0, "== %s ==", title)
}

func (r *textWriter) kv(k, v string)  { r.line(1, "%-13s %s", k+":", v) }
func (r *textWriter) kv2(k, v string) { r.line(2, "%-11s %s", k+":", v) }

func (r *textWriter) step(indent int, s Step) {
	r.line(indent, "@ %s  %s  event %s  %s", s.Time.UTC().Format(time.RFC3339Nano), s.Type, s.EventID, s.Position)
}

// block prints a multi-line text, clipped, indented under its label.
func (r *textWriter) block(indent int, label, text string) {
	if text == "" {
		return
	}
	r.line(indent-1, "%s:", label)
	for _, l := range strings.Split(clip(text), "\n") {
		r.line(indent, "| %s", l)
	}
}

func (r *textWriter) exchange(indent int, x *Exchange) {
	head := fmt.Sprintf("- %s exchange round %d: %s %s, HTTP %d, %d ms", strings.ToLower(x.Stage), x.Round, x.Provider, x.Model, x.HTTPStatus, x.DurationMS)
	if x.ResponseStatus != "" {
		head += ", " + x.ResponseStatus
	}
	r.line(indent, "%s", head)
	r.step(indent+1, x.Step)
	in := indent + 1
	if x.RequestID != "" {
		r.line(in, "request id %s", x.RequestID)
	}
	r.line(in, "prompt %s %s; request %d bytes, response %d bytes; tokens %s", x.Prompt.Name, x.Prompt.Version, len(x.RawRequest), len(x.RawResponse), usage(x.Usage))
	for _, s := range x.Reasoning {
		r.line(in, "reasoning: %s", clip(s))
	}
	for _, ws := range x.WebSearches {
		what := ws.Query
		if what == "" {
			what = strings.Join(ws.Queries, " | ")
		}
		if what == "" {
			what = ws.URL
		}
		r.line(in, "web search %s %s: %s (%d source(s))", ws.Action, ws.Status, what, len(ws.Sources))
	}
	for _, tc := range x.ToolCalls {
		r.line(in, "tool call %s %s(%s)", tc.CallID, tc.Name, clip(tc.Arguments))
	}
	for _, c := range x.Citations {
		r.line(in, "cites %s", c.URL)
	}
	if x.Text != "" {
		r.line(in, "text: %s", clip(x.Text))
	}
	if len(x.OutputJSON) > 0 {
		r.line(in, "answer: %s", clip(string(x.OutputJSON)))
	}
	if x.Refusal != "" {
		r.line(in, "refusal: %s", clip(x.Refusal))
	}
	for _, tr := range x.ToolResults {
		r.line(in, "tool result %s %s: %s", tr.CallID, tr.Name, clip(tr.Output))
	}
	if e := x.Error; e != nil {
		r.line(in, "error %s %s (status %d, code %q): %s", e.Class, e.Kind, e.StatusCode, e.Code, e.Message)
	}
}
