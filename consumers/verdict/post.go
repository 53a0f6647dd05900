package verdict

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/events"
)

// PostInput is everything the post's verdict depends on.
type PostInput struct {
	// Claims are the verdicts of the extracted claims (Claim's results);
	// those not researched count for nothing but the caveat naming them.
	Claims []ClaimResult
	// Triage is every extracted claim's triage: it tells an opinion-only
	// text from one whose claims could not be researched.
	Triage []Extracted
	// Summary is the model's summary answer; the zero value when there was
	// no summary call (nothing researched).
	Summary Summary
	// SearchResults are the passages of every researched claim: the
	// sources the model may cite, and those filled in when it cites none.
	SearchResults []evidence.Passage
	// Registry resolves a source URL to its registrable domain and tier
	// (the analysis's source registry); nil: the passages' own, recorded
	// when they were assessed.
	Registry func(url string) (domain string, tier int, ok bool)
}

// PostResult is the verdict of the whole text.
type PostResult struct {
	TruthPercent int                      `json:"truth_percent"`
	Confidence   int                      `json:"confidence"`
	Caps         []Cap                    `json:"caps"`
	Label        string                   `json:"label"`
	Band         string                   `json:"band"`
	Summary      string                   `json:"summary"`
	Caveats      []string                 `json:"caveats"`
	Sources      []events.VerdictSourceV1 `json:"sources"`
	// Demoted is the definitive label coherence replaced, else "".
	Demoted string `json:"demoted,omitempty"`
	// Researched counts the researched claims the verdict rests on.
	Researched int `json:"researched"`
}

// Post judges the whole text from its claims' verdicts (see the package
// comment). Caps, Caveats and Sources are never nil, Summary never empty.
func (r Rubric) Post(in PostInput) PostResult {
	var researched []ClaimResult
	for _, c := range in.Claims {
		if c.Researched {
			researched = append(researched, c)
		}
	}
	res := PostResult{Caps: []Cap{}, Caveats: []string{}, Sources: []events.VerdictSourceV1{}, Researched: len(researched)}
	capTo := func(rule string, limit int) {
		res.Caps = append(res.Caps, Cap{Rule: rule, Cap: limit, Before: res.Confidence})
		res.Confidence = min(res.Confidence, limit)
	}
	// The model's confidence is recorded only when it lowers the post's:
	// it is a second opinion, not a finding about the evidence.
	modelCap := func() {
		if in.Summary.Summary != "" && in.Summary.ModelConfidence < res.Confidence {
			capTo(CapModelConfidence, in.Summary.ModelConfidence)
		}
	}
	var label string
	if len(researched) == 0 {
		res.TruthPercent = 50
		if opinionOnly(in.Triage) {
			res.Confidence = r.OpinionConfidence
			modelCap()
			res.Label, res.Band = events.LabelOpinion, events.BandUnverified
			res.Summary = summaryOr(in.Summary, "The text expresses opinions and makes no factual claim to check, so nothing was searched.")
			res.Caveats = r.caveats(in.Summary, res, nil, 0)
			return res
		}
		label = events.LabelUnverifiable
	} else {
		res.TruthPercent, res.Confidence = r.aggregate(researched)
		modelCap()
		for _, rule := range evidenceCaps {
			if limit, ok := strictest(researched, rule); ok {
				capTo(rule, limit)
			}
		}
		label = r.BandLabels[Band(res.TruthPercent, res.Confidence)]
		if r.misleading(researched) {
			label = events.LabelMisleading
		}
	}
	res.Confidence, res.Caps, res.Label, res.Band, res.Demoted = r.cohere(res.TruthPercent, res.Confidence, res.Caps, label)
	var dropped int
	if len(researched) > 0 {
		res.Sources, dropped = r.sources(in)
	}
	res.Summary = summaryOr(in.Summary, r.defaultSummary(res, len(in.Claims)))
	res.Caveats = r.caveats(in.Summary, res, in.Claims, dropped)
	return res
}

// opinionOnly reports whether no claim is FACTUAL or a PREDICTION: the text
// makes no factual claim (no claims at all included).
func opinionOnly(triage []Extracted) bool {
	for _, e := range triage {
		if e.Kind == events.TriageFactual || e.Kind == events.TriagePrediction {
			return false
		}
	}
	return true
}

// keyFalse reports whether a researched claim is confidently false.
func (r Rubric) keyFalse(c ClaimResult) bool {
	return c.TruthPercent <= r.Aggregate.KeyFalseMaxTruth && c.Confidence >= r.Aggregate.KeyFalseMinConfidence
}

// aggregate is the post's truth (the confidence-weighted mean of the
// claims' truth) and confidence (their mean), key false claims weighing
// KeyFalseWeight times as much in both. A claim of confidence 0 weighs as
// 1 in the truth, so the mean is defined.
func (r Rubric) aggregate(claims []ClaimResult) (truth, conf int) {
	var tw, t, cw, c float64
	for _, x := range claims {
		pull := 1.0
		if r.keyFalse(x) {
			pull = r.Aggregate.KeyFalseWeight
		}
		w := pull * float64(max(x.Confidence, 1))
		tw += w
		t += w * float64(x.TruthPercent)
		cw += pull
		c += pull * float64(x.Confidence)
	}
	return int(math.Round(t / tw)), int(math.Round(c / cw))
}

// misleading: a key false claim among mostly true ones.
func (r Rubric) misleading(claims []ClaimResult) bool {
	var key bool
	var lean int
	for _, c := range claims {
		key = key || r.keyFalse(c)
		switch {
		case c.TruthPercent >= r.Aggregate.LeanTrueFrom:
			lean++
		case c.TruthPercent <= r.Aggregate.LeanFalseTo:
			lean--
		}
	}
	return key && lean > 0
}

// strictest is the lowest cap of rule applied to any of the claims.
func strictest(claims []ClaimResult, rule string) (int, bool) {
	limit, found := 0, false
	for _, c := range claims {
		for _, k := range c.Caps {
			if k.Rule == rule && (!found || k.Cap < limit) {
				limit, found = k.Cap, true
			}
		}
	}
	return limit, found
}

// sources are the cited sources that were among the search results, or,
// when none is, the search results themselves (see the package comment);
// dropped counts the citations left out.
func (r Rubric) sources(in PostInput) (out []events.VerdictSourceV1, dropped int) {
	out = []events.VerdictSourceV1{}
	byURL := map[string]evidence.Passage{}
	for _, p := range in.SearchResults {
		if u, err := sources.Normalize(p.URL); err == nil {
			if _, dup := byURL[u]; !dup {
				byURL[u] = p
			}
		}
	}
	seen := map[string]bool{}
	for _, cited := range in.Summary.Sources {
		u, err := sources.Normalize(cited)
		p, found := byURL[u]
		switch {
		case err != nil || !found:
			dropped++
			continue
		case seen[u]:
			continue
		}
		seen[u] = true
		if len(out) < r.Aggregate.MaxCited {
			out = append(out, r.source(in, p, false))
		}
	}
	if len(out) > 0 {
		return out, dropped
	}
	ranked := slices.Clone(in.SearchResults)
	slices.SortStableFunc(ranked, func(a, b evidence.Passage) int {
		if c := cmp.Compare(effectiveTier(a.Tier), effectiveTier(b.Tier)); c != 0 {
			return c
		}
		return cmp.Compare(strength(b), strength(a))
	})
	domains := map[string]bool{}
	for _, p := range ranked {
		s := r.source(in, p, true)
		if _, err := sources.Normalize(p.URL); err != nil || domains[s.Domain] {
			continue
		}
		domains[s.Domain] = true
		out = append(out, s)
		if len(out) == r.Aggregate.MaxFromSearch {
			break
		}
	}
	return out, dropped
}

// source describes a passage as a verdict source, its domain and tier from
// the registry when it resolves the URL.
func (r Rubric) source(in PostInput, p evidence.Passage, fromSearch bool) events.VerdictSourceV1 {
	s := events.VerdictSourceV1{URL: p.URL, Title: strings.TrimSpace(p.Title), Domain: p.Domain, Tier: effectiveTier(p.Tier), FromSearch: fromSearch}
	if in.Registry != nil {
		if d, t, ok := in.Registry(p.URL); ok {
			s.Domain, s.Tier = d, effectiveTier(t)
		}
	}
	if s.Title == "" {
		s.Title = s.Domain
	}
	return s
}

func strength(p evidence.Passage) float64 { return math.Max(p.Stance.Entail, p.Stance.Contradict) }

func summaryOr(s Summary, fallback string) string {
	if s.Summary != "" {
		return s.Summary
	}
	return fallback
}

// defaultSummary is the summary when the model gave none.
func (r Rubric) defaultSummary(res PostResult, claims int) string {
	if res.Researched == 0 {
		return "None of the text's statements could be researched: they are predictions, or too vague to check."
	}
	return fmt.Sprintf("%d of %d statements were researched; on the evidence found the text is %s (truth %d%%, confidence %d%%).",
		res.Researched, claims, labelWords[res.Label], res.TruthPercent, res.Confidence)
}

var labelWords = map[string]string{
	events.LabelTrue: "true", events.LabelMostlyTrue: "mostly true", events.LabelMixed: "mixed",
	events.LabelMisleading: "misleading", events.LabelFalse: "false", events.LabelUnverifiable: "unverifiable",
	events.LabelOpinion: "opinion",
}

// capWords say why each cap binds, for the caveats.
var capWords = map[string]string{
	CapModelConfidence:       "the model's own confidence is lower",
	CapNoSearchTimeSensitive: "a time-sensitive claim was not searched",
	CapStaleSources:          "the newest source on a current-events claim is over a year old",
	CapSingleLowTier:         "a claim rests on a single social-media, blog or unreliable source",
	CapApproximateNumber:     "no source states a claim's specific number or date exactly",
	CapUnverifiable:          "an unverifiable verdict cannot be more confident",
}

// caveats are the model's caveats, then the rubric's: each cap that
// lowered the confidence, a demoted label, citations dropped, claims not
// researched. Duplicates are dropped; at most MaxCaveats model caveats.
func (r Rubric) caveats(s Summary, res PostResult, claims []ClaimResult, dropped int) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(c string) {
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, c := range s.Caveats[:min(len(s.Caveats), MaxCaveats)] {
		add(c)
	}
	for _, k := range res.Caps {
		if k.Before > k.Cap {
			add(fmt.Sprintf("Confidence held at %d%% (from %d%%): %s.", k.Cap, k.Before, capWords[k.Rule]))
		}
	}
	if res.Demoted != "" {
		add(fmt.Sprintf("The evidence leans %s, but with confidence below %d%% the verdict is Unverifiable.",
			labelWords[res.Demoted], r.Caps.DefinitiveMin))
	}
	if dropped > 0 {
		add(fmt.Sprintf("%d cited %s not among the search results and %s not shown.", dropped,
			plural(dropped, "source was", "sources were"), plural(dropped, "is", "are")))
	}
	if n := len(claims) - res.Researched; n > 0 && res.Researched > 0 {
		add(fmt.Sprintf("%d of %d statements %s not researched (opinion, prediction, not a claim, or too vague).",
			n, len(claims), plural(n, "was", "were")))
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
