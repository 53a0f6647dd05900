package verdict

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/errata-dev/errata/events"
)

// Range is an inclusive range of percentages.
type Range struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

func (r Range) clamp(v int) int { return min(max(v, r.Min), r.Max) }

// at is the point s ∈ [0, 1] of the way through the range, rounded.
func (r Range) at(s float64) int {
	return r.Min + int(math.Round(float64(r.Max-r.Min)*unit(s)))
}

// TruthRanges hold a claim's truth percentage inside its engine verdict's
// range.
type TruthRanges struct {
	Supported Range `json:"supported"`
	Refuted   Range `json:"refuted"`
	Contested Range `json:"contested"`
	// NotEnough is also the range of a claim without an assessment.
	NotEnough Range `json:"not_enough_evidence"`
}

// ConfidenceBands are factSocial's calibration bands, each tied to the
// evidence that justifies it (see the package comment).
type ConfidenceBands struct {
	High       Range `json:"high"`       // Gate 4 HIGH
	Medium     Range `json:"medium"`     // Gate 4 MEDIUM
	OneStrong  Range `json:"one_strong"` // one independent source of quality ≥ StrongQuality
	Partial    Range `json:"partial"`    // one weaker source, or several weak ones agreeing
	Mixed      Range `json:"mixed"`      // CONTESTED, Gate 4 LOW, or sources disagreeing
	Tangential Range `json:"tangential"` // passages, none taking a side
	None       Range `json:"none"`       // nothing found, or not searched
	// StrongQuality is the least reliability of "one strong source"
	// (tier 2's in the default evidence policy).
	StrongQuality float64 `json:"strong_quality"`
	// AgreeingShare is the least Gate 4 agreement of "several weak
	// sources agreeing".
	AgreeingShare float64 `json:"agreeing_share"`
	// DomainSaturation: independent domains count toward the position in
	// a band up to this many.
	DomainSaturation int `json:"domain_saturation"`
}

// CapRules are factSocial's anti-pattern caps and the coherence rules.
type CapRules struct {
	NoSearchTimeSensitive int `json:"no_search_time_sensitive"`
	StaleCurrentEvents    int `json:"stale_sources_current_events"`
	// StaleAfterDays: a source older than this many days before the
	// analysis is stale.
	StaleAfterDays int `json:"stale_after_days"`
	SingleLowTier  int `json:"single_low_tier_source"`
	// LowTierFrom: tiers from this one up (4 social media and blogs, 5
	// unreliable) are low.
	LowTierFrom       int `json:"low_tier_from"`
	ApproximateNumber int `json:"approximate_number"`
	// A passage takes a side when its entail or contradict probability is
	// at least SideAt; the caps read the passages that do (all of them
	// when none does).
	SideAt float64 `json:"side_at"`
	// DefinitiveMin is the least confidence of a definitive label;
	// UnverifiableMax the most of Unverifiable.
	DefinitiveMin   int `json:"definitive_min"`
	UnverifiableMax int `json:"unverifiable_max"`
}

// PostRules aggregate claims into the post's verdict.
type PostRules struct {
	// A key false claim (truth ≤ KeyFalseMaxTruth, confidence ≥
	// KeyFalseMinConfidence) weighs KeyFalseWeight times as much.
	KeyFalseMaxTruth      int     `json:"key_false_max_truth"`
	KeyFalseMinConfidence int     `json:"key_false_min_confidence"`
	KeyFalseWeight        float64 `json:"key_false_weight"`
	// Misleading: a key false claim, and more researched claims with truth
	// ≥ LeanTrueFrom than with truth ≤ LeanFalseTo.
	LeanTrueFrom int `json:"lean_true_from"`
	LeanFalseTo  int `json:"lean_false_to"`
	// MaxCited sources the model cites are kept; MaxFromSearch are filled
	// from the search results when none is.
	MaxCited      int `json:"max_cited"`
	MaxFromSearch int `json:"max_from_search"`
}

// Rubric is every threshold a verdict depends on. Its Version (name and
// content hash) is recorded with every analysis attempt, so a replay knows
// exactly which numbers produced a verdict.
type Rubric struct {
	Name string `json:"name"`
	// MinSpecificity is Gate 1's least specificity of a researched claim.
	MinSpecificity float64         `json:"min_specificity"`
	Truth          TruthRanges     `json:"truth"`
	Confidence     ConfidenceBands `json:"confidence"`
	Caps           CapRules        `json:"caps"`
	// BandLabels maps each FactHarbor band to factSocial's label.
	BandLabels map[string]string `json:"band_labels"`
	// OpinionConfidence is the confidence of an Opinion verdict (factSocial:
	// confidence in the classification, typically 80–95).
	OpinionConfidence int       `json:"opinion_confidence"`
	Aggregate         PostRules `json:"post"`
}

// DefaultRubric is factsocial-v1: factSocial's calibration bands and caps,
// FactHarbor's Gate 1 threshold and bands.
func DefaultRubric() Rubric {
	return Rubric{
		Name:           "factsocial-v1",
		MinSpecificity: 0.3,
		Truth: TruthRanges{
			Supported: Range{72, 100},
			Refuted:   Range{0, 28},
			Contested: Range{43, 57},
			NotEnough: Range{29, 71},
		},
		Confidence: ConfidenceBands{
			High:             Range{90, 100},
			Medium:           Range{75, 89},
			OneStrong:        Range{75, 89},
			Partial:          Range{60, 74},
			Mixed:            Range{40, 59},
			Tangential:       Range{20, 39},
			None:             Range{0, 19},
			StrongQuality:    0.85,
			AgreeingShare:    0.6,
			DomainSaturation: 5,
		},
		Caps: CapRules{
			NoSearchTimeSensitive: 40,
			StaleCurrentEvents:    50,
			StaleAfterDays:        365,
			SingleLowTier:         50,
			LowTierFrom:           4,
			ApproximateNumber:     70,
			SideAt:                0.6,
			DefinitiveMin:         40,
			UnverifiableMax:       40,
		},
		BandLabels: map[string]string{
			events.BandTrue:         events.LabelTrue,
			events.BandMostlyTrue:   events.LabelMostlyTrue,
			events.BandLeaningTrue:  events.LabelMostlyTrue,
			events.BandMixed:        events.LabelMixed,
			events.BandUnverified:   events.LabelUnverifiable,
			events.BandLeaningFalse: events.LabelFalse,
			events.BandMostlyFalse:  events.LabelFalse,
			events.BandFalse:        events.LabelFalse,
		},
		OpinionConfidence: 85,
		Aggregate: PostRules{
			KeyFalseMaxTruth:      28,
			KeyFalseMinConfidence: 60,
			KeyFalseWeight:        3,
			LeanTrueFrom:          58,
			LeanFalseTo:           42,
			MaxCited:              10,
			MaxFromSearch:         5,
		},
	}
}

// Version names the rubric and its content: "<name>@<first 12 hex of the
// sha256 of its JSON>" (map keys marshal sorted, so the bytes are stable).
func (r Rubric) Version() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("verdict: rubric does not marshal: %v", err)) // plain data: cannot happen
	}
	sum := sha256.Sum256(b)
	return r.Name + "@" + hex.EncodeToString(sum[:])[:12]
}

// Validate checks that the rubric is usable.
func (r Rubric) Validate() error {
	var errs []error
	if r.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if !(r.MinSpecificity >= 0 && r.MinSpecificity <= 1) {
		errs = append(errs, fmt.Errorf("min_specificity %v is outside [0, 1]", r.MinSpecificity))
	}
	c := r.Confidence
	// In a fixed order, so the errors are always listed alike.
	for _, f := range []struct {
		name string
		rg   Range
	}{
		{"truth.supported", r.Truth.Supported}, {"truth.refuted", r.Truth.Refuted}, {"truth.contested", r.Truth.Contested},
		{"truth.not_enough_evidence", r.Truth.NotEnough}, {"confidence.high", c.High}, {"confidence.medium", c.Medium},
		{"confidence.one_strong", c.OneStrong}, {"confidence.partial", c.Partial}, {"confidence.mixed", c.Mixed},
		{"confidence.tangential", c.Tangential}, {"confidence.none", c.None},
	} {
		if f.rg.Min < 0 || f.rg.Max > 100 || f.rg.Min > f.rg.Max {
			errs = append(errs, fmt.Errorf("%s %d..%d is not a range within 0..100", f.name, f.rg.Min, f.rg.Max))
		}
	}
	if !(c.StrongQuality >= 0 && c.StrongQuality <= 1) || !(c.AgreeingShare >= 0 && c.AgreeingShare <= 1) || c.DomainSaturation < 1 {
		errs = append(errs, errors.New("strong_quality and agreeing_share must be in [0, 1], domain_saturation at least 1"))
	}
	k := r.Caps
	for _, f := range []struct {
		name string
		v    int
	}{
		{"no_search_time_sensitive", k.NoSearchTimeSensitive}, {"stale_sources_current_events", k.StaleCurrentEvents},
		{"single_low_tier_source", k.SingleLowTier}, {"approximate_number", k.ApproximateNumber}, {"definitive_min", k.DefinitiveMin},
		{"unverifiable_max", k.UnverifiableMax}, {"opinion_confidence", r.OpinionConfidence},
	} {
		if f.v < 0 || f.v > 100 {
			errs = append(errs, fmt.Errorf("%s %d is outside 0..100", f.name, f.v))
		}
	}
	if k.StaleAfterDays < 1 || k.LowTierFrom < 1 || k.LowTierFrom > 5 || !(k.SideAt > 0 && k.SideAt <= 1) {
		errs = append(errs, errors.New("stale_after_days must be positive, low_tier_from a tier (1-5), side_at in (0, 1]"))
	}
	for _, b := range events.Bands {
		l, ok := r.BandLabels[b]
		if !ok || !slices.Contains(events.Labels, l) || l == events.LabelOpinion || l == events.LabelMisleading {
			errs = append(errs, fmt.Errorf("band %s needs a label (any but Opinion and Misleading), not %q", b, l))
		}
	}
	if len(r.BandLabels) != len(events.Bands) {
		errs = append(errs, errors.New("band_labels names an unknown band"))
	}
	p := r.Aggregate
	if !(p.KeyFalseWeight >= 1) || p.MaxCited < 1 || p.MaxFromSearch < 1 {
		errs = append(errs, errors.New("key_false_weight must be at least 1, max_cited and max_from_search at least 1"))
	}
	return errors.Join(errs...)
}

// Band is FactHarbor's band of a truth percentage: TRUE 86–100,
// MOSTLY-TRUE 72–85, LEANING-TRUE 58–71, MIXED 43–57 with confidence ≥ 45,
// UNVERIFIED 43–57 with confidence < 45, LEANING-FALSE 29–42, MOSTLY-FALSE
// 15–28, FALSE 0–14. A truth above 100 is TRUE, below 0 FALSE.
func Band(truthPercent, confidence int) string {
	switch {
	case truthPercent >= 86:
		return events.BandTrue
	case truthPercent >= 72:
		return events.BandMostlyTrue
	case truthPercent >= 58:
		return events.BandLeaningTrue
	case truthPercent >= 43 && confidence >= 45:
		return events.BandMixed
	case truthPercent >= 43:
		return events.BandUnverified
	case truthPercent >= 29:
		return events.BandLeaningFalse
	case truthPercent >= 15:
		return events.BandMostlyFalse
	default:
		return events.BandFalse
	}
}

// definitive labels need confidence ≥ Caps.DefinitiveMin.
func definitive(label string) bool {
	switch label {
	case events.LabelTrue, events.LabelMostlyTrue, events.LabelMixed, events.LabelMisleading, events.LabelFalse:
		return true
	}
	return false
}

// unit is v held in [0, 1]; NaN is 0.
func unit(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Min(math.Max(v, 0), 1)
}
