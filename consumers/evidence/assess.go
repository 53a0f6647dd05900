package evidence

import (
	"cmp"
	"math"
	"slices"
)

// Verdicts of the engine.
const (
	VerdictSupported = "SUPPORTED"
	VerdictRefuted   = "REFUTED"
	VerdictContested = "CONTESTED"
	VerdictNotEnough = "NOT_ENOUGH_EVIDENCE"
)

// Reasons a claim is withheld (Decision.Reason, Decision.Failed), in the
// order the publish rule checks them.
const (
	ReasonPublished        = "published"
	ReasonNotApproved      = "validator_not_approved"
	ReasonNoEvidence       = "no_evidence"
	ReasonContested        = "contested"
	ReasonNotRefuted       = "not_refuted"
	ReasonNoAuthority      = "no_authoritative_contradiction"
	ReasonReliableSupport  = "reliable_source_supports"
	ReasonGateBelowMinimum = "gate4_below_minimum"
)

// Features are Tsao's features over the top-ranked passages.
type Features struct {
	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	CMax     float64 `json:"c_max"`
	AgreeDom int     `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	NumOK    int     `json:"num_ok"`
}

// Gate is Gate 4's evidence sufficiency: the level and what it read.
type Gate struct {
	Level string `json:"level"`
	// Sources is the number of independent domains with a stance
	// (supporting or contradicting); Quality their mean reliability;
	// Agreement the share of them on the verdict's side.
	Sources   int     `json:"sources"`
	Quality   float64 `json:"quality"`
	Agreement float64 `json:"agreement"`
}

// Decision is whether an approved claim is shown to readers, and why not.
type Decision struct {
	Publish bool `json:"publish"`
	// Reason is ReasonPublished or the first rule that failed; Failed lists
	// every rule that failed (so an evaluation can say what each costs).
	Reason string   `json:"reason"`
	Failed []string `json:"failed,omitempty"`
}

// Assessment is the engine's complete judgement of one claim.
type Assessment struct {
	Features Features `json:"features"`
	Raw      float64  `json:"raw"`
	Score    int      `json:"score"`
	Verdict  string   `json:"verdict"`
	Gate     Gate     `json:"gate4"`
	Decision Decision `json:"decision"`
	// Contradicting and Supporting count the independent domains on each
	// side; Tier1Contradicting those of tier 1; ReliableSupporting the
	// passages of tier ≤ 2 at or above the support block threshold.
	Contradicting      int    `json:"contradicting_domains"`
	Supporting         int    `json:"supporting_domains"`
	Tier1Contradicting int    `json:"tier1_contradicting_domains"`
	Tier2Contradicting int    `json:"tier2_contradicting_domains"`
	ReliableSupporting int    `json:"reliable_supporting_passages"`
	PolicyVersion      string `json:"policy_version"`
}

// Assess judges a claim from its passages. approved is the validator's
// decision (an inline flag needs it); passages must already be
// deduplicated by normalized URL. Passages whose stance is not a
// probability distribution count as neutral. Assess is a pure function of
// its arguments.
func (p *Policy) Assess(approved bool, passages []Passage) Assessment {
	return p.rules.assess(approved, passages, p.version)
}

// Score is Tsao's weighted raw score of the features and its 0-100 scale,
// round(100·σ((raw − Center)/Scale)).
func (p *Policy) Score(f Features) (raw float64, score int) { return p.rules.score(f) }

// Verdict applies the precedence: Contested, Refuted, Supported, Not
// enough evidence.
func (p *Policy) Verdict(f Features) string { return p.rules.verdict(f) }

// assess is Policy.Assess under these rules, recording version.
func (p *Rules) assess(approved bool, passages []Passage, version string) Assessment {
	ps := make([]Passage, len(passages))
	copy(ps, passages)
	for i := range ps {
		if ps[i].Stance.Validate() != nil {
			ps[i].Stance = NeutralStance
		}
	}
	a := Assessment{PolicyVersion: version}
	a.Features = p.features(ps)
	a.Raw, a.Score = p.score(a.Features)
	a.Verdict = p.verdict(a.Features)
	p.sides(ps, &a)
	a.Gate = p.gate(ps, a.Verdict)
	a.Decision = p.decide(approved, len(ps) > 0, a)
	return a
}

// rank orders passages by how much they say either way, then by tier,
// URL, snippet and stance, so the top K do not depend on the order the
// passages arrived in.
func rank(ps []Passage) []Passage {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b Passage) int {
		if c := cmp.Compare(b.strength(), a.strength()); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Tier, b.Tier); c != 0 {
			return c
		}
		if c := cmp.Compare(a.URL, b.URL); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Snippet, b.Snippet); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Stance.Contradict, a.Stance.Contradict); c != 0 {
			return c
		}
		return cmp.Compare(b.Stance.Entail, a.Stance.Entail)
	})
	return out
}

func (p *Rules) features(ps []Passage) Features {
	var f Features
	top := rank(ps)
	if len(top) > p.TopK {
		top = top[:p.TopK]
	}
	if len(top) == 0 {
		return f
	}
	entails := make([]float64, 0, len(top))
	agreeing := map[string]bool{}
	for _, x := range top {
		f.EMax = math.Max(f.EMax, x.Stance.Entail)
		f.CMax = math.Max(f.CMax, x.Stance.Contradict)
		f.RecMax = math.Max(f.RecMax, x.Recency)
		entails = append(entails, x.Stance.Entail)
		if x.supports(p) {
			agreeing[x.Domain] = true
			if x.Num == NumMatch {
				f.NumOK = 1
			}
		}
	}
	f.AgreeDom = len(agreeing)
	slices.SortFunc(entails, func(a, b float64) int { return cmp.Compare(b, a) })
	n3 := min(3, len(entails))
	var sum, rel float64
	for i := range n3 {
		sum += entails[i]
		rel += p.reliability(top[i].Tier)
	}
	f.EMean3 = sum / float64(n3)
	f.RelAvg = rel / float64(n3)
	return f
}

// score is Policy.Score under these rules.
func (p *Rules) score(f Features) (raw float64, score int) {
	raw = p.raw(f)
	return raw, int(math.Round(100 / (1 + math.Exp(-(raw-p.Center)/p.Scale))))
}

func (p *Rules) raw(f Features) float64 {
	w := p.Weights
	return w.EMax*f.EMax + w.EMean3*f.EMean3 +
		w.AgreeDom*math.Min(float64(f.AgreeDom)/float64(p.AgreeDomSaturation), 1) +
		w.RelAvg*f.RelAvg + w.RecMax*f.RecMax - w.CMax*f.CMax + w.NumOK*float64(f.NumOK)
}

// verdict is Policy.Verdict under these rules.
func (p *Rules) verdict(f Features) string {
	switch {
	case f.EMax >= p.ContestedEMax && f.CMax >= p.ContestedCMax:
		return VerdictContested
	case f.CMax >= p.RefutedCMax:
		return VerdictRefuted
	case f.EMax >= p.SupportedEMax && f.AgreeDom >= p.SupportedAgreeDom && f.CMax < p.SupportedCMaxBelow:
		return VerdictSupported
	default:
		return VerdictNotEnough
	}
}

// domainView is one independent domain's position.
type domainView struct {
	domain      string
	tier        int
	supports    bool
	contradicts bool
}

// domains reduces passages to one view per registrable domain, in domain
// order (so sums over them are the same on every run): a domain supports
// (contradicts) when any of its passages does, and its tier is the best
// tier among its passages.
func (p *Rules) domains(ps []Passage) []domainView {
	byName := map[string]*domainView{}
	for _, x := range ps {
		d := byName[x.Domain]
		if d == nil {
			d = &domainView{domain: x.Domain, tier: x.Tier}
			byName[x.Domain] = d
		}
		d.tier = min(d.tier, x.Tier)
		d.supports = d.supports || x.supports(p)
		d.contradicts = d.contradicts || x.contradicts(p)
	}
	out := make([]domainView, 0, len(byName))
	for _, d := range byName {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b domainView) int { return cmp.Compare(a.domain, b.domain) })
	return out
}

func (p *Rules) sides(ps []Passage, a *Assessment) {
	for _, d := range p.domains(ps) {
		if d.contradicts {
			a.Contradicting++
			if d.tier == 1 {
				a.Tier1Contradicting++
			}
			if d.tier <= 2 {
				a.Tier2Contradicting++
			}
		}
		if d.supports {
			a.Supporting++
		}
	}
	for _, x := range ps {
		if x.Tier >= 1 && x.Tier <= 2 && x.Stance.Entail >= p.Publish.SupportBlockAt {
			a.ReliableSupporting++
		}
	}
}

// gate computes Gate 4 over the independent domains that take a side. A
// domain on both sides counts once, against agreement.
func (p *Rules) gate(ps []Passage, verdict string) Gate {
	var g Gate
	var quality float64
	var pro, con int
	for _, d := range p.domains(ps) {
		if !d.supports && !d.contradicts {
			continue
		}
		g.Sources++
		quality += p.reliability(d.tier)
		switch {
		case d.supports && d.contradicts:
		case d.supports:
			pro++
		default:
			con++
		}
	}
	if g.Sources > 0 {
		g.Quality = quality / float64(g.Sources)
		agree := max(pro, con) // Contested and not enough evidence: the larger side
		switch verdict {
		case VerdictRefuted:
			agree = con
		case VerdictSupported:
			agree = pro
		}
		g.Agreement = float64(agree) / float64(g.Sources)
	}
	g.Level = GateInsufficient
	for _, l := range p.Gate4 {
		if g.Sources >= l.MinSources && g.Quality >= l.MinQuality && g.Agreement >= l.MinAgree {
			g.Level = l.Level
			break
		}
	}
	return g
}

// decide applies the publish rule. Every failing rule is listed; the first
// one is the reason.
func (p *Rules) decide(approved, anyEvidence bool, a Assessment) Decision {
	var failed []string
	if !approved {
		failed = append(failed, ReasonNotApproved)
	}
	if p.Publish.Mode == PublishValidatorOnly {
		if len(failed) > 0 {
			return Decision{Reason: failed[0], Failed: failed}
		}
		return Decision{Publish: true, Reason: ReasonPublished}
	}
	if !anyEvidence {
		failed = append(failed, ReasonNoEvidence)
	}
	switch a.Verdict {
	case VerdictRefuted:
	case VerdictContested:
		failed = append(failed, ReasonContested)
	default:
		failed = append(failed, ReasonNotRefuted)
	}
	if a.Tier1Contradicting == 0 && a.Tier2Contradicting < p.Publish.MinIndependentTier2 {
		failed = append(failed, ReasonNoAuthority)
	}
	if a.ReliableSupporting > 0 {
		failed = append(failed, ReasonReliableSupport)
	}
	if !GateAtLeast(a.Gate.Level, p.Publish.MinGate) {
		failed = append(failed, ReasonGateBelowMinimum)
	}
	if len(failed) > 0 {
		return Decision{Reason: failed[0], Failed: failed}
	}
	return Decision{Publish: true, Reason: ReasonPublished}
}
