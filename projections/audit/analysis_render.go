package audit

import (
	"fmt"
	"io"
	"strings"
)

// AnalysisText renders an analysis trail for a terminal: one section per
// part, every step with its time, type, event id and log position.
func AnalysisText(w io.Writer, t *AnalysisTrail) error {
	r := &textWriter{w: w}
	r.line(0, "Analysis %s  status %s", t.AnalysisID, t.Status)
	r.line(1, "%d events; tokens %s", t.Steps, usage(t.Usage))

	r.section("Requests")
	if len(t.Requests) == 0 {
		r.line(1, "(no request on the analyses topic)")
	}
	for _, q := range t.Requests {
		what := q.InputKind
		switch {
		case q.Platform != "":
			what += fmt.Sprintf(" %s %s (post %s, version %s)", q.Platform, q.ExternalID, q.PostID, q.PostVersionID)
		case q.URL != "":
			what += " " + q.URL
		}
		r.line(1, "%s from %s, %s analysis, prompt version %s", what, q.Source, q.AnalysisType, q.PromptVersion)
		r.step(2, q.Step)
		if q.Title != "" {
			r.kv2("title", q.Title)
		}
		if q.RequesterKey != "" {
			r.kv2("requester", q.RequesterKey)
		}
		r.kv2("text", fmt.Sprintf("sha256 %s, %d characters", q.ContentSHA256, len([]rune(q.Text))))
		r.block(3, "text", q.Text)
	}

	for _, a := range t.Attempts {
		r.section(fmt.Sprintf("Attempt %d", a.Attempt))
		if a.Started != nil {
			r.step(1, *a.Started)
			for _, p := range a.Prompts {
				r.kv("prompt", fmt.Sprintf("%s %s sha256 %s", p.Name, p.Version, p.SHA256))
			}
			r.kv("model", a.Provider+" "+a.Model)
			if a.Search != "" {
				r.kv("search", a.Search)
			}
			r.kv("versions", fmt.Sprintf("registry %s, policy %s, rubric %s", a.RegistryVersion, a.PolicyVersion, a.RubricVersion))
			if a.Worker != "" {
				r.kv("worker", a.Worker)
			}
		} else {
			r.line(1, "(no attempt_started event)")
		}
		r.kv("tokens", usage(a.Usage))
		for _, x := range a.Exchanges {
			r.line(1, "- %s exchange %d: %s %s, HTTP %d, %d ms", x.Stage, x.Seq, x.Provider, x.Model, x.HTTPStatus, x.DurationMS)
			r.step(2, x.Step)
			r.line(2, "prompt %s %s; request %d bytes, response %d bytes; tokens %s", x.Prompt.Name, x.Prompt.Version,
				len(x.RawRequest), len(x.RawResponse), usage(x.Usage))
			if x.Error != "" {
				r.line(2, "error: %s", x.Error)
			}
		}
		for _, c := range a.Claims {
			r.line(1, "- claim %d %s: %s", c.Index, c.ClaimID, clip(c.Text))
			if c.Step.EventID != "" {
				r.step(2, c.Step)
			} else {
				r.line(2, "(no claim_extracted event)")
			}
			if c.Context != "" && c.Context != c.Text {
				r.kv2("context", clip(c.Context))
			}
			if tr := c.Triage; tr != nil {
				flags := []string{}
				for _, f := range []struct {
					on   bool
					name string
				}{{tr.TimeSensitive, "time-sensitive"}, {tr.CurrentEvents, "current events"}, {tr.Numeric, "numeric"}} {
					if f.on {
						flags = append(flags, f.name)
					}
				}
				research := "not researched"
				if tr.Researched {
					research = "researched"
				}
				if len(flags) > 0 {
					research += " (" + strings.Join(flags, ", ") + ")"
				}
				r.kv2("gate 1", fmt.Sprintf("%s, specificity %g, %s: %s", tr.Kind, tr.Specificity, research, tr.Reason))
				r.step(3, tr.Step)
			}
			for _, q := range c.Queries {
				line := fmt.Sprintf("%s %q: %d result(s)", q.Kind, q.Query, len(q.Results))
				if q.Error != "" {
					line += ", error: " + q.Error
				}
				r.kv2("query", line)
				r.step(3, q.Step)
				for _, res := range q.Results {
					r.line(3, "result %s %q", res.URL, res.Title)
				}
			}
			for _, s := range c.Sources {
				src := s.Source
				line := fmt.Sprintf("%s tier %d (%s) from %s: entail %.2f, contradict %.2f, neutral %.2f",
					src.URL, src.Tier, src.Rule, src.Origin, src.Entail, src.Contradict, src.Neutral)
				if src.Num != "" {
					line += ", numbers " + src.Num
				}
				if src.StanceNote != "" {
					line += ", note: " + src.StanceNote
				}
				r.kv2("source", line)
				r.step(3, s.Step)
			}
			if v := c.Verdict; v != nil {
				r.kv2("verdict", fmt.Sprintf("%s / %s, truth %d%%, confidence %d%%%s; engine %s score %d, Gate 4 %s",
					v.Label, v.Band, v.TruthPercent, v.Confidence, capsText(v.Caps), orNone(v.Verdict), v.Score, orNone(v.Gate4)))
				r.step(3, v.Step)
				r.line(3, "features: e_max %g, e_mean3 %g, c_max %g, agree_dom %d, rel_avg %g, rec_max %g, num_ok %d",
					v.Features.EMax, v.Features.EMean3, v.Features.CMax, v.Features.AgreeDom, v.Features.RelAvg, v.Features.RecMax, v.Features.NumOK)
				r.line(3, "summary: %s", clip(v.Summary))
			}
		}
		if v := a.PostVerdict; v != nil {
			r.line(1, "post verdict: %s / %s, truth %d%%, confidence %d%%%s, over %d claim(s)",
				v.Label, v.Band, v.TruthPercent, v.Confidence, capsText(v.Caps), v.Claims)
			r.step(2, v.Step)
			r.line(2, "summary: %s", clip(v.Summary))
			for _, c := range v.Caveats {
				r.line(2, "caveat: %s", clip(c))
			}
			for _, s := range v.Sources {
				from := ""
				if s.FromSearch {
					from = " (filled from the search results)"
				}
				r.line(2, "source: %s tier %d %q%s", s.URL, s.Tier, s.Title, from)
			}
		}
		if e := a.End; e != nil {
			if e.Outcome == "COMPLETED" {
				r.line(1, "completed: %d claim(s), %d researched", e.Claims, e.Researched)
			} else {
				retry := "no retry"
				if e.Retryable {
					retry = "another attempt follows"
					if e.RetryAt != "" {
						retry += " at " + e.RetryAt
					}
				}
				r.line(1, "failed (%s): %s", retry, e.Reason)
			}
			r.step(2, e.Step)
		}
	}
	return r.err
}

func capsText(cs []Cap) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s ≤ %d (was %d)", c.Rule, c.Cap, c.Before)
	}
	return " (capped: " + strings.Join(parts, "; ") + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
