package verdict_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

var now = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

// factual is a researched claim that triggers no cap.
var factual = verdict.Extracted{Text: "The bridge opened in 1932.", Kind: events.TriageFactual, Specificity: 0.8}

func assessed(v string, eMax, cMax float64, g evidence.Gate) evidence.Assessment {
	return evidence.Assessment{Verdict: v, Features: evidence.Features{EMax: eMax, CMax: cMax}, Gate: g}
}

// medium is a supported claim at Gate 4 MEDIUM: truth 90, confidence 86.
var medium = assessed(evidence.VerdictSupported, 0.9, 0.1, evidence.Gate{Level: evidence.GateMedium, Sources: 2, Quality: 0.9, Agreement: 1})

func passage(domain string, tier int, entail, contradict float64) evidence.Passage {
	return evidence.Passage{URL: "https://" + domain + "/a", Domain: domain, Tier: tier,
		Stance: evidence.Stance{Entail: entail, Contradict: contradict, Neutral: 1 - entail - contradict}}
}

func dated(p evidence.Passage, age time.Duration) evidence.Passage {
	p.PublishedAt = now.Add(-age)
	return p
}

func numbered(p evidence.Passage, n evidence.Num) evidence.Passage {
	p.Num = n
	return p
}

var twoGood = []evidence.Passage{passage("census.gov", 1, 0.9, 0), passage("reuters.com", 2, 0.8, 0)}

// The truth percentage: 50 + 50·(e_max − c_max), held in the verdict's
// range.
func TestClaimTruth(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name       string
		verdict    string
		eMax, cMax float64
		want       int
	}{
		{"supported", evidence.VerdictSupported, 0.9, 0.1, 90},
		{"supported, weakly: at least MOSTLY-TRUE", evidence.VerdictSupported, 0.7, 0.39, 72},
		{"supported, fully", evidence.VerdictSupported, 1, 0, 100},
		{"refuted, fully", evidence.VerdictRefuted, 0, 1, 0},
		{"refuted", evidence.VerdictRefuted, 0.3, 0.8, 25},
		{"refuted with some support: at most MOSTLY-FALSE", evidence.VerdictRefuted, 0.6, 0.7, 28},
		{"contested, leaning true", evidence.VerdictContested, 0.9, 0.6, 57},
		{"contested, leaning false", evidence.VerdictContested, 0.7, 0.9, 43},
		{"not enough evidence, nothing either way", evidence.VerdictNotEnough, 0, 0, 50},
		{"not enough evidence, one supporting source", evidence.VerdictNotEnough, 0.65, 0, 71},
		{"not enough evidence, one contradicting source", evidence.VerdictNotEnough, 0, 0.6, 29},
		{"not enough evidence, a little support", evidence.VerdictNotEnough, 0.3, 0.1, 60},
		{"no assessment", "", 0, 0, 50},
		{"NaN features count as 0", evidence.VerdictNotEnough, nan, nan, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
				Assessment: assessed(tt.verdict, tt.eMax, tt.cMax, evidence.Gate{Level: evidence.GateHigh, Sources: 3, Quality: 0.9, Agreement: 1}),
				Passages:   twoGood})
			require.Equal(t, tt.want, res.TruthPercent)
			require.True(t, res.Researched)
		})
	}
}

// The confidence band follows the evidence; the position in it, quality,
// agreement and independent domains.
func TestClaimConfidence(t *testing.T) {
	g := func(level string, sources int, quality, agreement float64) evidence.Gate {
		return evidence.Gate{Level: level, Sources: sources, Quality: quality, Agreement: agreement}
	}
	tests := []struct {
		name     string
		verdict  string
		gate     evidence.Gate
		passages []evidence.Passage
		want     int
		label    string
	}{
		{"Gate 4 HIGH: 90-100", evidence.VerdictSupported, g(evidence.GateHigh, 3, 0.9, 1), twoGood, 98, events.LabelTrue},
		{"Gate 4 MEDIUM: 75-89", evidence.VerdictSupported, g(evidence.GateMedium, 2, 0.9, 1), twoGood, 86, events.LabelTrue},
		{"contested: 40-59", evidence.VerdictContested, g(evidence.GateLow, 2, 0.7, 0.5), twoGood, 50, events.LabelMixed},
		{"Gate 4 LOW: 40-59", evidence.VerdictNotEnough, g(evidence.GateLow, 2, 0.7, 0.5), twoGood, 50, events.LabelMostlyTrue},
		{"several weak sources agreeing: 60-74", evidence.VerdictSupported, g(evidence.GateInsufficient, 2, 0.35, 1), twoGood, 68, events.LabelTrue},
		{"several sources disagreeing: 40-59", evidence.VerdictNotEnough, g(evidence.GateInsufficient, 3, 0.35, 1.0/3), twoGood, 48, events.LabelMostlyTrue},
		{"one strong source: 75-89", evidence.VerdictNotEnough, g(evidence.GateInsufficient, 1, 0.95, 1), twoGood, 85, events.LabelMostlyTrue},
		{"one weaker source: 60-74", evidence.VerdictNotEnough, g(evidence.GateInsufficient, 1, 0.6, 1), twoGood, 68, events.LabelMostlyTrue},
		{"tangential results only: 20-39", evidence.VerdictNotEnough, g(evidence.GateInsufficient, 0, 0, 0),
			[]evidence.Passage{passage("example.org", 3, 0, 0)}, 20, events.LabelUnverifiable},
		{"nothing found: 0-19", evidence.VerdictNotEnough, g(evidence.GateInsufficient, 0, 0, 0), nil, 0, events.LabelUnverifiable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
				Assessment: assessed(tt.verdict, 0.9, 0.1, tt.gate), Passages: tt.passages})
			require.Equal(t, tt.want, res.Confidence)
			require.Equal(t, tt.label, res.Label)
			require.Empty(t, res.Caps)
			require.NotNil(t, res.Caps)
		})
	}
}

// Each cap, applied and not: an applied cap is recorded with the
// confidence before it, whether or not it lowered anything.
func TestClaimCaps(t *testing.T) {
	timeSensitive := factual
	timeSensitive.TimeSensitive = true
	current := factual
	current.CurrentEvents = true
	numeric := factual
	numeric.Numeric = true
	everything := factual
	everything.TimeSensitive, everything.CurrentEvents, everything.Numeric = true, true, true
	const year = 365 * 24 * time.Hour
	tests := []struct {
		name     string
		triage   verdict.Extracted
		searched bool
		noClock  bool
		a        evidence.Assessment
		passages []evidence.Passage
		caps     []verdict.Cap
		conf     int
		label    string
	}{
		{name: "no cap", triage: factual, searched: true, a: medium, passages: twoGood, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},

		{name: "time-sensitive, not searched: ≤ 40", triage: timeSensitive, a: medium, passages: twoGood,
			caps: []verdict.Cap{{verdict.CapNoSearchTimeSensitive, 40, 86}}, conf: 40, label: events.LabelTrue},
		{name: "time-sensitive, not searched, nothing found: held at 0", triage: timeSensitive,
			caps: []verdict.Cap{{verdict.CapNoSearchTimeSensitive, 40, 0}}, conf: 0, label: events.LabelUnverifiable},
		{name: "time-sensitive, searched", triage: timeSensitive, searched: true, a: medium, passages: twoGood, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "not searched, not time-sensitive", triage: factual, a: medium, passages: twoGood, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},

		{name: "current events, newest source over a year old: ≤ 50", triage: current, searched: true, a: medium,
			passages: []evidence.Passage{dated(twoGood[0], year+time.Hour), dated(twoGood[1], 2*year)},
			caps:     []verdict.Cap{{verdict.CapStaleSources, 50, 86}}, conf: 50, label: events.LabelTrue},
		{name: "current events, newest source under a year old", triage: current, searched: true, a: medium,
			passages: []evidence.Passage{dated(twoGood[0], year-time.Hour), dated(twoGood[1], 3*year)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "current events, a fresh source taking no side does not count", triage: current, searched: true, a: medium,
			passages: []evidence.Passage{dated(twoGood[0], 2*year), dated(passage("blog.example", 4, 0.1, 0), time.Hour)},
			caps:     []verdict.Cap{{verdict.CapStaleSources, 50, 86}}, conf: 50, label: events.LabelTrue},
		{name: "current events, no dated source", triage: current, searched: true, a: medium, passages: twoGood, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "old sources on a claim that is not about current events", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{dated(twoGood[0], 5*year)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "current events without the analysis time", triage: current, searched: true, noClock: true, a: medium,
			passages: []evidence.Passage{dated(twoGood[0], 5*year)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},

		{name: "a single tier-4 source: ≤ 50", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{passage("reddit.com", 4, 0.9, 0), passage("example.org", 3, 0.2, 0)},
			caps:     []verdict.Cap{{verdict.CapSingleLowTier, 50, 86}}, conf: 50, label: events.LabelTrue},
		{name: "a single domain of tier 5, two passages", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{passage("rumours.example", 5, 0.9, 0), passage("rumours.example", 5, 0.7, 0)},
			caps:     []verdict.Cap{{verdict.CapSingleLowTier, 50, 86}}, conf: 50, label: events.LabelTrue},
		{name: "a single source of unknown tier counts as the lowest", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{passage("x.example", 0, 0, 0.9)},
			caps:     []verdict.Cap{{verdict.CapSingleLowTier, 50, 86}}, conf: 50, label: events.LabelTrue},
		{name: "a single tier-3 source", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{passage("example.org", 3, 0.9, 0)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "two tier-4 sources", triage: factual, searched: true, a: medium,
			passages: []evidence.Passage{passage("reddit.com", 4, 0.9, 0), passage("medium.com", 4, 0.9, 0)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},

		{name: "a specific number, no figure to compare (approximate or none): ≤ 70", triage: numeric, searched: true, a: medium, passages: twoGood,
			caps: []verdict.Cap{{verdict.CapApproximateNumber, 70, 86}}, conf: 70, label: events.LabelTrue},
		{name: "a specific number, a precise mismatching figure: evidence, not approximation", triage: numeric, searched: true, a: medium,
			passages: []evidence.Passage{numbered(twoGood[0], evidence.NumMismatch), twoGood[1]}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},
		{name: "a specific number with a matching figure", triage: numeric, searched: true, a: medium,
			passages: []evidence.Passage{twoGood[0], numbered(twoGood[1], evidence.NumMatch)}, caps: []verdict.Cap{}, conf: 86, label: events.LabelTrue},

		{name: "caps apply in order, each recorded with the confidence before it", triage: everything, a: medium,
			passages: []evidence.Passage{dated(passage("reddit.com", 4, 0.9, 0), 2*year)},
			caps: []verdict.Cap{{verdict.CapNoSearchTimeSensitive, 40, 86}, {verdict.CapStaleSources, 50, 40},
				{verdict.CapSingleLowTier, 50, 40}, {verdict.CapApproximateNumber, 70, 40}},
			conf: 40, label: events.LabelTrue},

		{name: "capped to exactly 40: the definitive label stays", triage: timeSensitive,
			a:        assessed(evidence.VerdictRefuted, 0, 0.9, evidence.Gate{Level: evidence.GateInsufficient, Sources: 1, Quality: 0.95, Agreement: 1}),
			passages: twoGood, caps: []verdict.Cap{{verdict.CapNoSearchTimeSensitive, 40, 85}}, conf: 40, label: events.LabelFalse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := now
			if tt.noClock {
				at = time.Time{}
			}
			res := verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: tt.triage, Searched: tt.searched, Now: at,
				Assessment: tt.a, Passages: tt.passages})
			require.Equal(t, tt.caps, res.Caps)
			require.Equal(t, tt.conf, res.Confidence)
			require.Equal(t, tt.label, res.Label)
			require.Equal(t, verdict.Band(res.TruthPercent, res.Confidence), res.Band)
		})
	}
}

// Coherence: a definitive label needs confidence 40, and an Unverifiable
// verdict stays at 40 or below (recorded only when that lowers it).
func TestClaimCoherence(t *testing.T) {
	weakRefuted := assessed(evidence.VerdictRefuted, 0, 0.9, evidence.Gate{Level: evidence.GateInsufficient})
	res := verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now, Assessment: weakRefuted,
		Passages: []evidence.Passage{passage("example.org", 3, 0, 0.9)}})
	require.Equal(t, verdict.ClaimResult{Researched: true, TruthPercent: 5, Confidence: 20, Caps: []verdict.Cap{},
		Label: events.LabelUnverifiable, Band: events.BandFalse, Demoted: events.LabelFalse}, res,
		"refuted at confidence 20: FALSE on FactHarbor's scale, but no definitive label")

	at39 := verdict.DefaultRubric()
	at39.Confidence.Tangential = verdict.Range{Min: 39, Max: 39}
	res = at39.Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
		Assessment: assessed(evidence.VerdictSupported, 1, 0, evidence.Gate{}), Passages: []evidence.Passage{passage("example.org", 3, 0, 0)}})
	require.Equal(t, events.LabelUnverifiable, res.Label)
	require.Equal(t, events.LabelTrue, res.Demoted)
	require.Equal(t, 39, res.Confidence)

	at40 := verdict.DefaultRubric()
	at40.Confidence.Tangential = verdict.Range{Min: 40, Max: 40}
	res = at40.Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
		Assessment: assessed(evidence.VerdictSupported, 1, 0, evidence.Gate{}), Passages: []evidence.Passage{passage("example.org", 3, 0, 0)}})
	require.Equal(t, events.LabelTrue, res.Label, "40 is enough for a definitive label")
	require.Empty(t, res.Demoted)

	// Truth 50 at confidence 44: UNVERIFIED, so Unverifiable, held at 40.
	at44 := verdict.DefaultRubric()
	at44.Confidence.Mixed = verdict.Range{Min: 44, Max: 44}
	res = at44.Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
		Assessment: assessed(evidence.VerdictContested, 0.8, 0.8, evidence.Gate{Level: evidence.GateLow, Sources: 2}), Passages: twoGood})
	require.Equal(t, verdict.ClaimResult{Researched: true, TruthPercent: 50, Confidence: 40,
		Caps: []verdict.Cap{{Rule: verdict.CapUnverifiable, Cap: 40, Before: 44}}, Label: events.LabelUnverifiable, Band: events.BandUnverified}, res)

	// At 45 the same claim is MIXED, a definitive label: no cap.
	at44.Confidence.Mixed = verdict.Range{Min: 45, Max: 45}
	res = at44.Claim(verdict.ClaimInput{Triage: factual, Searched: true, Now: now,
		Assessment: assessed(evidence.VerdictContested, 0.8, 0.8, evidence.Gate{Level: evidence.GateLow, Sources: 2}), Passages: twoGood})
	require.Equal(t, verdict.ClaimResult{Researched: true, TruthPercent: 50, Confidence: 45, Caps: []verdict.Cap{},
		Label: events.LabelMixed, Band: events.BandMixed}, res)
}

// A claim that is not researched has no evidence verdict.
func TestClaimNotResearched(t *testing.T) {
	for _, tt := range []struct {
		kind  string
		spec  float64
		label string
		conf  int
	}{
		{events.TriageOpinion, 0.9, events.LabelOpinion, 85},
		{events.TriagePrediction, 0.9, events.LabelUnverifiable, 0},
		{events.TriageNotAClaim, 0.9, events.LabelUnverifiable, 0},
		{events.TriageFactual, 0.1, events.LabelUnverifiable, 0},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			res := verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: verdict.Extracted{Text: "x", Kind: tt.kind, Specificity: tt.spec,
				TimeSensitive: true}, Assessment: medium, Passages: twoGood, Now: now})
			require.Equal(t, verdict.ClaimResult{TruthPercent: 50, Confidence: tt.conf, Caps: []verdict.Cap{}, Label: tt.label,
				Band: events.BandUnverified}, res)
		})
	}
}
