package verdict

import (
	"math"
	"time"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/events"
)

// Cap rules, as recorded in Cap.Rule.
const (
	CapNoSearchTimeSensitive = "no_search_time_sensitive"
	CapStaleSources          = "stale_sources_current_events"
	CapSingleLowTier         = "single_low_tier_source"
	CapApproximateNumber     = "approximate_number"
	CapUnverifiable          = "coherence_unverifiable"
	// CapModelConfidence (posts only): the model's own confidence, when
	// lower than the evidence's.
	CapModelConfidence = "model_confidence"
)

// evidenceCaps are the caps a claim's evidence can trigger, in the order
// they apply; a post inherits those applied to its researched claims.
var evidenceCaps = []string{CapNoSearchTimeSensitive, CapStaleSources, CapSingleLowTier, CapApproximateNumber}

// ClaimInput is everything a claim's verdict depends on.
type ClaimInput struct {
	Triage Extracted
	// Assessment is the evidence engine's judgement of Passages (the zero
	// value when the claim was not searched).
	Assessment evidence.Assessment
	Passages   []evidence.Passage
	// Searched says whether a search was run for the claim.
	Searched bool
	// Now is when the analysis runs (the attempt's start, from its
	// event): the staleness cap measures source ages from it.
	Now time.Time
}

// Cap is one cap applied: its rule, the cap, and the confidence before it
// (at most Cap when the rule held without lowering anything).
type Cap struct {
	Rule   string `json:"rule"`
	Cap    int    `json:"cap"`
	Before int    `json:"before"`
}

// ClaimResult is a claim's verdict.
type ClaimResult struct {
	// Researched is Gate 1's decision; a claim that is not researched has
	// no evidence verdict and does not count in the post's.
	Researched   bool   `json:"researched"`
	TruthPercent int    `json:"truth_percent"`
	Confidence   int    `json:"confidence"`
	Caps         []Cap  `json:"caps"`
	Label        string `json:"label"`
	Band         string `json:"band"`
	// Demoted is the definitive label coherence replaced with
	// Unverifiable (confidence below Caps.DefinitiveMin), else "".
	Demoted string `json:"demoted,omitempty"`
}

// Claim judges one claim: the truth percentage from the engine's
// verdict and features, the confidence from Gate 4's sources, the caps,
// then the band, the label and coherence (see the package comment). Caps
// is never nil.
func (r Rubric) Claim(in ClaimInput) ClaimResult {
	if ok, _ := r.Researched(in.Triage); !ok {
		res := ClaimResult{TruthPercent: 50, Caps: []Cap{}, Band: events.BandUnverified, Label: events.LabelUnverifiable}
		if in.Triage.Kind == events.TriageOpinion {
			res.Label, res.Confidence = events.LabelOpinion, r.OpinionConfidence
		}
		return res
	}
	conf := r.confidence(in.Assessment, len(in.Passages) > 0)
	caps := []Cap{}
	apply := func(rule string, limit int, holds bool) {
		if holds {
			caps = append(caps, Cap{Rule: rule, Cap: limit, Before: conf})
			conf = min(conf, limit)
		}
	}
	sources := r.sidedPassages(in.Passages)
	apply(CapNoSearchTimeSensitive, r.Caps.NoSearchTimeSensitive, !in.Searched && in.Triage.TimeSensitive)
	apply(CapStaleSources, r.Caps.StaleCurrentEvents, in.Triage.CurrentEvents && r.stale(sources, in.Now))
	apply(CapSingleLowTier, r.Caps.SingleLowTier, r.singleLowTier(sources))
	apply(CapApproximateNumber, r.Caps.ApproximateNumber, in.Triage.Numeric && !numberSettled(in.Passages))
	res := ClaimResult{Researched: true, TruthPercent: r.truth(in.Assessment)}
	res.Confidence, res.Caps, res.Label, res.Band, res.Demoted = r.cohere(res.TruthPercent, conf, caps, r.BandLabels[Band(res.TruthPercent, conf)])
	return res
}

// cohere applies the coherence rules to a label: a definitive label needs
// Caps.DefinitiveMin, and Unverifiable stays at most Caps.UnverifiableMax
// (recorded only when it lowers the confidence). It returns the final
// confidence, caps, label, band and the demoted label.
func (r Rubric) cohere(truth, conf int, caps []Cap, label string) (int, []Cap, string, string, string) {
	demoted := ""
	if definitive(label) && conf < r.Caps.DefinitiveMin {
		demoted, label = label, events.LabelUnverifiable
	}
	if label == events.LabelUnverifiable && conf > r.Caps.UnverifiableMax {
		caps = append(caps, Cap{Rule: CapUnverifiable, Cap: r.Caps.UnverifiableMax, Before: conf})
		conf = r.Caps.UnverifiableMax
	}
	return conf, caps, label, Band(truth, conf), demoted
}

// truth is round(50 + 50·(e_max − c_max)) held in the verdict's range.
func (r Rubric) truth(a evidence.Assessment) int {
	t := int(math.Round(50 + 50*(unit(a.Features.EMax)-unit(a.Features.CMax))))
	switch a.Verdict {
	case evidence.VerdictSupported:
		return r.Truth.Supported.clamp(t)
	case evidence.VerdictRefuted:
		return r.Truth.Refuted.clamp(t)
	case evidence.VerdictContested:
		return r.Truth.Contested.clamp(t)
	default: // NOT_ENOUGH_EVIDENCE, or no assessment
		return r.Truth.NotEnough.clamp(t)
	}
}

// confidence is factSocial's band for the evidence, and the position in
// it from Gate 4's quality, agreement and independent domains.
func (r Rubric) confidence(a evidence.Assessment, anyPassage bool) int {
	c := r.Confidence
	g := a.Gate
	var band Range
	switch {
	case a.Verdict == evidence.VerdictContested:
		band = c.Mixed
	case g.Level == evidence.GateHigh:
		band = c.High
	case g.Level == evidence.GateMedium:
		band = c.Medium
	case g.Level == evidence.GateLow:
		band = c.Mixed
	case g.Sources >= 2 && g.Agreement >= c.AgreeingShare:
		band = c.Partial
	case g.Sources >= 2:
		band = c.Mixed
	case g.Sources == 1 && g.Quality >= c.StrongQuality:
		band = c.OneStrong
	case g.Sources == 1:
		band = c.Partial
	case anyPassage:
		band = c.Tangential
	default:
		band = c.None
	}
	sat := float64(min(max(g.Sources, 0), c.DomainSaturation)) / float64(c.DomainSaturation)
	return band.at((unit(g.Quality) + unit(g.Agreement) + sat) / 3)
}

// sidedPassages are the passages taking a side (entail or contradict ≥
// SideAt), or every passage when none does.
func (r Rubric) sidedPassages(ps []evidence.Passage) []evidence.Passage {
	var out []evidence.Passage
	for _, p := range ps {
		if p.Stance.Entail >= r.Caps.SideAt || p.Stance.Contradict >= r.Caps.SideAt {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return ps
	}
	return out
}

// stale reports whether the newest dated source is more than
// StaleAfterDays before now. Without a dated source, or without now, it
// cannot tell, and says no.
func (r Rubric) stale(ps []evidence.Passage, now time.Time) bool {
	if now.IsZero() {
		return false
	}
	var newest time.Time
	for _, p := range ps {
		if p.PublishedAt.After(newest) {
			newest = p.PublishedAt
		}
	}
	return !newest.IsZero() && newest.Before(now.Add(-time.Duration(r.Caps.StaleAfterDays)*24*time.Hour))
}

// singleLowTier reports whether the sources are one independent domain,
// of a low tier (its best tier among its passages; an unknown tier counts
// as the lowest).
func (r Rubric) singleLowTier(ps []evidence.Passage) bool {
	if len(ps) == 0 {
		return false
	}
	domain, tier := ps[0].Domain, effectiveTier(ps[0].Tier)
	for _, p := range ps[1:] {
		if p.Domain != domain {
			return false
		}
		tier = min(tier, effectiveTier(p.Tier))
	}
	return tier >= r.Caps.LowTierFrom
}

func effectiveTier(t int) int {
	if t < 1 || t > 5 {
		return 5
	}
	return t
}

// numberSettled reports whether a passage states a figure exact enough to
// compare with the claim's: one that matches it, or one of the same kind
// with another value (checks.Numbers). A precise contradicting figure is
// evidence, not approximation; an approximate or uncertain one settles
// nothing.
func numberSettled(ps []evidence.Passage) bool {
	for _, p := range ps {
		if p.Num == evidence.NumMatch || p.Num == evidence.NumMismatch {
			return true
		}
	}
	return false
}
