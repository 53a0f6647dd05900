package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Publish modes: which claims a validator approved are shown to readers.
const (
	// PublishStrict shows an approved claim only when the evidence passes
	// the publish rule (Refuted, authoritative contradiction, no reliable
	// support, Gate 4 at least the minimum). The default.
	PublishStrict = "strict"
	// PublishValidatorOnly shows every approved claim, as before the
	// engine existed; the assessment is still computed and recorded.
	PublishValidatorOnly = "validator-only"
)

// Weights of Tsao's raw score; CMax is subtracted.
type Weights struct {
	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	AgreeDom float64 `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	CMax     float64 `json:"c_max"`
	NumOK    float64 `json:"num_ok"`
}

// GateLevel is one row of Gate 4: the least number of independent sources
// with a stance, their least mean reliability, and the least share of
// them agreeing with the verdict.
type GateLevel struct {
	Level      string  `json:"level"`
	MinSources int     `json:"min_sources"`
	MinQuality float64 `json:"min_quality"`
	MinAgree   float64 `json:"min_agreement"`
}

// PublishRule is the precision-first rule for inline flags.
type PublishRule struct {
	Mode string `json:"mode"`
	// A tier-1 source, or MinIndependentTier2 independent domains of tier
	// ≤ 2, must contradict the claim.
	MinIndependentTier2 int `json:"min_independent_tier2"`
	// No tier-≤2 source may support the claim: a passage blocks when its
	// entailment reaches SupportBlockAt (lower than the agreement
	// threshold: doubt withholds).
	SupportBlockAt float64 `json:"support_block_at"`
	// MinGate is the least Gate 4 level.
	MinGate string `json:"min_gate"`
}

// Rules are every threshold and weight a judgement depends on: the
// content of a Policy, and what its version hashes.
type Rules struct {
	Name    string  `json:"name"`
	Weights Weights `json:"weights"`
	// score = round(100·σ((raw − Center)/Scale))
	Center float64 `json:"center"`
	Scale  float64 `json:"scale"`
	// TopK passages, ranked by how much they say either way, feed the
	// features; e_mean3 and rel_avg read the top three.
	TopK int `json:"top_k"`
	// A passage agrees (supports) when entail ≥ AgreeEntail and contradict
	// < AgreeContradictBelow; it contradicts under the mirror rule.
	AgreeEntail          float64 `json:"agree_entail"`
	AgreeContradictBelow float64 `json:"agree_contradict_below"`
	// AgreeDomSaturation: agree_dom counts in the score up to this many.
	AgreeDomSaturation int `json:"agree_dom_saturation"`

	// Verdict thresholds, applied in this order.
	ContestedEMax      float64 `json:"contested_e_max"`
	ContestedCMax      float64 `json:"contested_c_max"`
	RefutedCMax        float64 `json:"refuted_c_max"`
	SupportedEMax      float64 `json:"supported_e_max"`
	SupportedAgreeDom  int     `json:"supported_agree_dom"`
	SupportedCMaxBelow float64 `json:"supported_c_max_below"`

	// TierReliability maps tiers 1-5 to source reliability (index 0 unused).
	TierReliability [6]float64 `json:"tier_reliability"`
	// UnknownRecency is the recency weight of a passage without a date.
	UnknownRecency float64 `json:"unknown_recency"`

	// Gate4 levels from the highest down; below the last is INSUFFICIENT.
	Gate4   []GateLevel `json:"gate4"`
	Publish PublishRule `json:"publish"`
}

// Gate 4 levels.
const (
	GateHigh         = "HIGH"
	GateMedium       = "MEDIUM"
	GateLow          = "LOW"
	GateInsufficient = "INSUFFICIENT"
)

var gateRank = map[string]int{GateInsufficient: 0, GateLow: 1, GateMedium: 2, GateHigh: 3}

// Policy is a named set of Rules and their Version (name and content
// hash), which every assessment records. A policy never changes once made
// (NewPolicy): its version is computed once and always names the rules it
// judges by. The zero Policy has no rules; make one with NewPolicy.
type Policy struct {
	rules   Rules
	version string
}

// NewPolicy makes a policy of r (a copy: changing r later changes nothing).
func NewPolicy(r Rules) Policy {
	r.Gate4 = slices.Clone(r.Gate4)
	return Policy{rules: r, version: r.version()}
}

// Rules returns a copy of the policy's rules (to derive another policy).
func (p Policy) Rules() Rules {
	r := p.rules
	r.Gate4 = slices.Clone(r.Gate4)
	return r
}

// Name is the policy's name.
func (p Policy) Name() string { return p.rules.Name }

// PublishMode is the policy's publish mode (PublishStrict or
// PublishValidatorOnly).
func (p Policy) PublishMode() string { return p.rules.Publish.Mode }

// UnknownRecency is the recency weight of a passage without a date.
func (p Policy) UnknownRecency() float64 { return p.rules.UnknownRecency }

// Version names the policy and its content: "<name>@<first 12 hex of the
// sha256 of its rules' JSON>". Two policies with one name but different
// numbers never share a version.
func (p Policy) Version() string { return p.version }

// Validate checks that the policy is usable.
func (p Policy) Validate() error { return p.rules.Validate() }

// DefaultPolicy is the strict policy: Tsao's weights and thresholds
// (num_ok a small bonus, as his notes suggest), FactHarbor's Gate 4, and
// the strict publish rule.
func DefaultPolicy() Policy {
	return NewPolicy(Rules{
		Name:    "strict-v1",
		Weights: Weights{EMax: 0.40, EMean3: 0.20, AgreeDom: 0.15, RelAvg: 0.15, RecMax: 0.10, CMax: 0.25, NumOK: 0.05},
		Center:  0.5, Scale: 0.15,
		TopK:        8,
		AgreeEntail: 0.6, AgreeContradictBelow: 0.5, AgreeDomSaturation: 3,
		ContestedEMax: 0.7, ContestedCMax: 0.5,
		RefutedCMax:   0.7,
		SupportedEMax: 0.7, SupportedAgreeDom: 2, SupportedCMaxBelow: 0.4,
		TierReliability: [6]float64{0, 0.95, 0.85, 0.6, 0.35, 0.1},
		UnknownRecency:  0.5,
		Gate4: []GateLevel{
			{Level: GateHigh, MinSources: 3, MinQuality: 0.7, MinAgree: 0.8},
			{Level: GateMedium, MinSources: 2, MinQuality: 0.6, MinAgree: 0.6},
			{Level: GateLow, MinSources: 2, MinQuality: 0.5, MinAgree: 0.4},
		},
		Publish: PublishRule{Mode: PublishStrict, MinIndependentTier2: 2, SupportBlockAt: 0.5, MinGate: GateMedium},
	})
}

// ValidatorOnlyPolicy is DefaultPolicy publishing whatever the validator
// approves: an operator's explicit choice, recorded like any other.
func ValidatorOnlyPolicy() Policy {
	r := DefaultPolicy().Rules()
	r.Name = "validator-only-v1"
	r.Publish.Mode = PublishValidatorOnly
	return NewPolicy(r)
}

// Policies are the named policies an operator can choose
// (ERRATA_EVIDENCE_POLICY).
func Policies() map[string]Policy {
	out := map[string]Policy{}
	for _, p := range []Policy{DefaultPolicy(), ValidatorOnlyPolicy()} {
		out[p.Name()] = p
	}
	return out
}

// PolicyByName returns a named policy.
func PolicyByName(name string) (Policy, error) {
	p, ok := Policies()[name]
	if !ok {
		names := make([]string, 0, len(Policies()))
		for n := range Policies() {
			names = append(names, n)
		}
		sort.Strings(names)
		return Policy{}, fmt.Errorf("evidence policy %q is unknown (known: %v)", name, names)
	}
	return p, nil
}

// Validate checks that the rules are usable.
func (p Rules) Validate() error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if p.Scale <= 0 || p.TopK < 3 || p.AgreeDomSaturation < 1 {
		errs = append(errs, errors.New("scale must be positive, top_k at least 3, agree_dom_saturation at least 1"))
	}
	for t := 1; t <= 5; t++ {
		if r := p.TierReliability[t]; r < 0 || r > 1 || math.IsNaN(r) {
			errs = append(errs, fmt.Errorf("tier %d reliability %v is outside [0, 1]", t, r))
		}
	}
	for _, g := range p.Gate4 {
		if _, ok := gateRank[g.Level]; !ok || g.Level == GateInsufficient {
			errs = append(errs, fmt.Errorf("gate level %q is unknown", g.Level))
		}
	}
	switch p.Publish.Mode {
	case PublishStrict, PublishValidatorOnly:
	default:
		errs = append(errs, fmt.Errorf("publish mode %q is unknown", p.Publish.Mode))
	}
	if _, ok := gateRank[p.Publish.MinGate]; !ok {
		errs = append(errs, fmt.Errorf("publish min_gate %q is unknown", p.Publish.MinGate))
	}
	return errors.Join(errs...)
}

// version is Policy.Version of these rules.
func (p Rules) version() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("evidence: policy does not marshal: %v", err)) // plain data: cannot happen
	}
	sum := sha256.Sum256(b)
	return p.Name + "@" + hex.EncodeToString(sum[:])[:12]
}

// reliability is the reliability of a tier; an unknown tier counts as the
// least reliable.
func (p *Rules) reliability(tier int) float64 {
	if tier < 1 || tier > 5 {
		return p.TierReliability[5]
	}
	return p.TierReliability[tier]
}

// GateAtLeast reports whether level is at least floor.
func GateAtLeast(level, floor string) bool { return gateRank[level] >= gateRank[floor] }
