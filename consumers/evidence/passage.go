package evidence

import (
	"fmt"
	"math"
	"time"
)

// Where a passage came from.
const (
	OriginInvestigator = "investigator" // the investigator's submission
	OriginValidator    = "validator"    // the validator's sources
	OriginSearch       = "search"       // our own search (query decomposition)
	OriginFetch        = "fetch_url"    // a page the investigator fetched
	OriginGold         = "gold"         // a dataset's gold evidence (errata eval)
)

// Stance is how a passage bears on a claim: probabilities that it entails
// the claim, contradicts it, or says nothing about it.
type Stance struct {
	Entail     float64 `json:"entail"`
	Contradict float64 `json:"contradict"`
	Neutral    float64 `json:"neutral"`
}

// NeutralStance is what a passage without a usable stance counts as.
var NeutralStance = Stance{Neutral: 1}

// stanceSumTolerance is how far from 1 the three probabilities may sum.
const stanceSumTolerance = 0.05

// Validate reports whether s is a probability distribution: three finite
// values in [0, 1] that sum to 1 (±0.05).
func (s Stance) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"entail", s.Entail}, {"contradict", s.Contradict}, {"neutral", s.Neutral}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > 1 {
			return fmt.Errorf("stance %s %v is not a probability", f.name, f.v)
		}
	}
	if sum := s.Entail + s.Contradict + s.Neutral; math.Abs(sum-1) > stanceSumTolerance {
		return fmt.Errorf("stance probabilities sum to %.3f, not 1", sum)
	}
	return nil
}

// Num is the outcome of the numeric/date check of a passage against the
// claim (checks.Numbers).
type Num string

// The outcomes of the numeric check.
const (
	NumNotApplicable Num = ""         // the claim has no number or date, or the passage none to compare
	NumMatch         Num = "match"    // the passage's figures agree with the claim's (±2% or ±1 unit)
	NumMismatch      Num = "mismatch" // the passage states the same kind of figure with another value
)

// Passage is one piece of evidence for a claim, with everything the engine
// needs already resolved and recorded: the source's tier from the registry,
// the stance, and the checks.
type Passage struct {
	// URL is the normalized URL (sources.Normalize); Domain its registrable
	// domain, the unit of independence. Tier (1-5) and Rule come from the
	// source registry.
	URL    string `json:"url"`
	Domain string `json:"domain"`
	Tier   int    `json:"tier"`
	Rule   string `json:"rule"`

	Title   string `json:"title,omitempty"`
	Snippet string `json:"snippet,omitempty"`
	// PublishedAt is when the source was published; zero when unknown.
	PublishedAt time.Time `json:"published_at,omitzero"`
	Origin      string    `json:"origin"`

	Stance Stance `json:"stance"`
	Num    Num    `json:"num,omitempty"`
	// Recency is the recency weight in [0, 1] (checks.Recency); the
	// policy's UnknownRecency when the date is unknown.
	Recency float64 `json:"recency"`
}

// supports reports whether p agrees with the claim under Tsao's agreement
// thresholds (entail ≥ 0.6 and contradict < 0.5 by default).
func (p Passage) supports(pol *Rules) bool {
	return p.Stance.Entail >= pol.AgreeEntail && p.Stance.Contradict < pol.AgreeContradictBelow
}

// contradicts is the mirror of supports.
func (p Passage) contradicts(pol *Rules) bool {
	return p.Stance.Contradict >= pol.AgreeEntail && p.Stance.Entail < pol.AgreeContradictBelow
}

// strength is how much a passage says either way.
func (p Passage) strength() float64 { return math.Max(p.Stance.Entail, p.Stance.Contradict) }
