package evidence_test

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update once to create %s", path)
	require.Equal(t, string(want), string(got))
}

// Tsao's worked example (seed 002): the spacecraft claim with its stated
// features. The seed prints score 92, but its own formula gives 94 for
// these features: 0.40·0.95 + 0.20·0.88 + 0.15·min(4/3, 1) + 0.15·0.85 +
// 0.10·1.0 − 0.25·0.12 = 0.9035, and 100·σ((0.9035 − 0.5)/0.15) = 93.6.
// The formula is what the policy records, so 94 is the golden score; the
// verdict, Supported, agrees with the seed. num_ok (a bonus Tsao lists as
// a future feature) is 0 here, as in the example's feature list.
func TestSpacecraftExample(t *testing.T) {
	p := evidence.DefaultPolicy()
	f := evidence.Features{EMax: 0.95, EMean3: 0.88, CMax: 0.12, AgreeDom: 4, RelAvg: 0.85, RecMax: 1.0}
	raw, score := p.Score(f)
	require.InDelta(t, 0.9035, raw, 1e-9)
	require.Equal(t, 94, score)
	require.Equal(t, evidence.VerdictSupported, p.Verdict(f))

	// The same claim from passages: the two citations of the example and
	// two more agreeing domains; a stale, neutral page from a blog.
	passages := []evidence.Passage{
		{URL: "https://credible-space-agency.gov/stat_2024", Domain: "credible-space-agency.gov", Tier: 1, Rule: "wildcard:*.gov",
			Snippet: "Our database recorded 9,210 operational satellites as of January 1, 2024, confirming the growth trend.",
			Stance:  evidence.Stance{Entail: 0.95, Contradict: 0.02, Neutral: 0.03}, Num: evidence.NumMatch, Recency: 1.0},
		{URL: "https://major-university-study.edu/space_tech_2024", Domain: "major-university-study.edu", Tier: 2, Rule: "wildcard:*.edu",
			Snippet: "With the recent launches, the total count of active spacecraft surpassed the 9k mark in late 2023.",
			Stance:  evidence.Stance{Entail: 0.88, Contradict: 0.05, Neutral: 0.07}, Num: evidence.NumMatch, Recency: 0.97},
		{URL: "https://reuters.com/space/satellites-2024", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com",
			Stance: evidence.Stance{Entail: 0.81, Contradict: 0.12, Neutral: 0.07}, Recency: 0.95},
		{URL: "https://esa.int/space-environment-report-2024", Domain: "esa.int", Tier: 1, Rule: "exact:esa.int",
			Stance: evidence.Stance{Entail: 0.77, Contradict: 0.03, Neutral: 0.2}, Recency: 0.96},
		{URL: "https://example.blogspot.com/2019/satellites", Domain: "example.blogspot.com", Tier: 4, Rule: "parent:blogspot.com",
			Stance: evidence.Stance{Entail: 0.1, Contradict: 0.1, Neutral: 0.8}, Recency: 0.3},
	}
	a := p.Assess(true, passages)
	require.Equal(t, evidence.VerdictSupported, a.Verdict)
	require.Equal(t, 4, a.Features.AgreeDom)
	require.Equal(t, 1, a.Features.NumOK)
	require.False(t, a.Decision.Publish, "a supported claim is never flagged")
	require.Equal(t, evidence.ReasonNotRefuted, a.Decision.Reason)
	golden(t, "spacecraft.assessment.json", a)
}

func stance(e, c float64) evidence.Stance {
	return evidence.Stance{Entail: e, Contradict: c, Neutral: math.Max(0, 1-e-c)}
}

func src(domain string, tier int, e, c float64) evidence.Passage {
	return evidence.Passage{URL: "https://" + domain + "/a", Domain: domain, Tier: tier, Rule: "test", Stance: stance(e, c), Recency: 0.8}
}

// The verdict precedence: Contested before Refuted before Supported.
func TestVerdictPrecedence(t *testing.T) {
	p := evidence.DefaultPolicy()
	for _, tc := range []struct {
		name string
		f    evidence.Features
		want string
	}{
		{"contested beats refuted", evidence.Features{EMax: 0.7, CMax: 0.9, AgreeDom: 3}, evidence.VerdictContested},
		{"contested at both thresholds", evidence.Features{EMax: 0.7, CMax: 0.5}, evidence.VerdictContested},
		{"refuted", evidence.Features{EMax: 0.69, CMax: 0.7}, evidence.VerdictRefuted},
		{"just below refuted", evidence.Features{EMax: 0.1, CMax: 0.6999}, evidence.VerdictNotEnough},
		{"supported", evidence.Features{EMax: 0.7, AgreeDom: 2, CMax: 0.39}, evidence.VerdictSupported},
		{"one domain is not enough", evidence.Features{EMax: 0.99, AgreeDom: 1}, evidence.VerdictNotEnough},
		{"contradiction 0.4 blocks support", evidence.Features{EMax: 0.69, AgreeDom: 5, CMax: 0.4}, evidence.VerdictNotEnough},
		{"nothing", evidence.Features{}, evidence.VerdictNotEnough},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, p.Verdict(tc.f)) })
	}
}

// The strict publish rule, rule by rule.
func TestPublishRule(t *testing.T) {
	p := evidence.DefaultPolicy()
	for _, tc := range []struct {
		name     string
		approved bool
		ps       []evidence.Passage
		publish  bool
		reason   string
		failed   []string
		gate     string
	}{
		{"one tier-1 source contradicts, one more agrees with it", true,
			[]evidence.Passage{src("census.gov", 1, 0.02, 0.95), src("apnews.com", 2, 0.05, 0.9)},
			true, evidence.ReasonPublished, nil, evidence.GateMedium},
		{"two independent tier-2 domains contradict", true,
			[]evidence.Passage{src("reuters.com", 2, 0, 0.9), src("apnews.com", 2, 0.1, 0.8)},
			true, evidence.ReasonPublished, nil, evidence.GateMedium},
		{"two passages of one tier-2 domain are one source", true,
			[]evidence.Passage{src("reuters.com", 2, 0, 0.9), {URL: "https://reuters.com/b", Domain: "reuters.com", Tier: 2, Rule: "test", Stance: stance(0, 0.9)}},
			false, evidence.ReasonNoAuthority, []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum}, evidence.GateInsufficient},
		{"a lone tier-1 source: authority but Gate 4 below MEDIUM", true,
			[]evidence.Passage{src("census.gov", 1, 0, 0.95)},
			false, evidence.ReasonGateBelowMinimum, []string{evidence.ReasonGateBelowMinimum}, evidence.GateInsufficient},
		{"tier-3 and tier-4 sources only", true,
			[]evidence.Passage{src("someblog.net", 3, 0, 0.95), src("medium.com", 4, 0, 0.95), src("x.com", 4, 0, 0.9)},
			false, evidence.ReasonNoAuthority, []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum}, evidence.GateInsufficient},
		{"contradictory good sources are contested, never flagged", true,
			[]evidence.Passage{src("census.gov", 1, 0, 0.95), src("bls.gov", 1, 0.9, 0.05), src("reuters.com", 2, 0, 0.9)},
			false, evidence.ReasonContested, []string{evidence.ReasonContested, evidence.ReasonReliableSupport}, evidence.GateMedium},
		{"a tier-2 source half-supporting withholds", true,
			[]evidence.Passage{src("census.gov", 1, 0, 0.95), src("reuters.com", 2, 0, 0.9), src("apnews.com", 2, 0.5, 0.1)},
			false, evidence.ReasonReliableSupport, []string{evidence.ReasonReliableSupport}, evidence.GateMedium},
		{"refuted but the validator did not approve", false,
			[]evidence.Passage{src("reuters.com", 2, 0, 0.9), src("apnews.com", 2, 0.1, 0.8)},
			false, evidence.ReasonNotApproved, []string{evidence.ReasonNotApproved}, evidence.GateMedium},
		{"no evidence", true, nil,
			false, evidence.ReasonNoEvidence, []string{evidence.ReasonNoEvidence, evidence.ReasonNotRefuted, evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum}, evidence.GateInsufficient},
		{"neutral passages only", true,
			[]evidence.Passage{src("census.gov", 1, 0.1, 0.1), src("reuters.com", 2, 0.2, 0.1)},
			false, evidence.ReasonNotRefuted, []string{evidence.ReasonNotRefuted, evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum}, evidence.GateInsufficient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := p.Assess(tc.approved, tc.ps)
			require.Equal(t, tc.publish, a.Decision.Publish)
			require.Equal(t, tc.reason, a.Decision.Reason)
			require.Equal(t, tc.failed, a.Decision.Failed)
			require.Equal(t, tc.gate, a.Gate.Level)
		})
	}
}

// Gate 4's levels at their thresholds.
func TestGate4(t *testing.T) {
	p := evidence.DefaultPolicy()
	for _, tc := range []struct {
		name string
		ps   []evidence.Passage
		want evidence.Gate
	}{
		{"three tier-1/2 domains all contradicting: HIGH", []evidence.Passage{src("a.gov", 1, 0, 0.9), src("b.com", 2, 0, 0.9), src("c.com", 2, 0, 0.9)},
			evidence.Gate{Level: evidence.GateHigh, Sources: 3, Quality: (0.95 + 0.85 + 0.85) / 3, Agreement: 1}},
		{"three with one dissent: 67% agreement, MEDIUM", []evidence.Passage{src("a.gov", 1, 0, 0.9), src("b.com", 2, 0, 0.9), src("c.com", 2, 0.65, 0.1)},
			evidence.Gate{Level: evidence.GateMedium, Sources: 3, Quality: (0.95 + 0.85 + 0.85) / 3, Agreement: 2.0 / 3}},
		{"two tier-3 domains: quality 0.6, MEDIUM", []evidence.Passage{src("a.net", 3, 0, 0.9), src("b.net", 3, 0, 0.9)},
			evidence.Gate{Level: evidence.GateMedium, Sources: 2, Quality: 0.6, Agreement: 1}},
		{"tier 3 and tier 4: quality 0.475, INSUFFICIENT", []evidence.Passage{src("a.net", 3, 0, 0.9), src("x.com", 4, 0, 0.9)},
			evidence.Gate{Level: evidence.GateInsufficient, Sources: 2, Quality: 0.475, Agreement: 1}},
		{"neutral domains do not count", []evidence.Passage{src("a.gov", 1, 0, 0.9), src("b.gov", 1, 0.2, 0.2)},
			evidence.Gate{Level: evidence.GateInsufficient, Sources: 1, Quality: 0.95, Agreement: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := p.Assess(true, tc.ps).Gate
			require.Equal(t, tc.want.Level, g.Level)
			require.Equal(t, tc.want.Sources, g.Sources)
			require.InDelta(t, tc.want.Quality, g.Quality, 1e-9)
			require.InDelta(t, tc.want.Agreement, g.Agreement, 1e-9)
		})
	}
}

// validator-only publishes what the validator approved, still recording
// the assessment; its version differs from the strict policy's.
func TestValidatorOnlyPolicy(t *testing.T) {
	p := evidence.ValidatorOnlyPolicy()
	a := p.Assess(true, []evidence.Passage{src("x.com", 4, 0.9, 0)})
	require.True(t, a.Decision.Publish)
	require.Equal(t, evidence.VerdictNotEnough, a.Verdict)
	require.False(t, p.Assess(false, nil).Decision.Publish)
	require.NotEqual(t, evidence.DefaultPolicy().Version(), p.Version())
	require.Regexp(t, `^validator-only-v1@[0-9a-f]{12}$`, p.Version())
	named, err := evidence.PolicyByName("strict-v1")
	require.NoError(t, err)
	require.Equal(t, evidence.DefaultPolicy().Version(), named.Version())
	_, err = evidence.PolicyByName("lenient")
	require.ErrorContains(t, err, `evidence policy "lenient" is unknown`)
	for _, p := range evidence.Policies() {
		require.NoError(t, p.Validate())
	}
}

// Changing any number changes the version: an assessment's recorded
// version names exactly the rules it was judged by.
func TestPolicyVersionCoversEveryNumber(t *testing.T) {
	base := evidence.DefaultPolicy()
	require.Equal(t, base.Version(), evidence.DefaultPolicy().Version(), "stable")
	require.Equal(t, base.Version(), evidence.NewPolicy(base.Rules()).Version(), "the same rules, the same version")
	changed := base.Rules()
	changed.Publish.SupportBlockAt = 0.55
	require.NotEqual(t, base.Version(), evidence.NewPolicy(changed).Version())
	changed = base.Rules()
	changed.TierReliability[4] = 0.4
	require.NotEqual(t, base.Version(), evidence.NewPolicy(changed).Version())
	changed = base.Rules()
	changed.Gate4[0].MinSources = 4
	require.NotEqual(t, base.Version(), evidence.NewPolicy(changed).Version())
}

// A policy never changes once made: neither the rules it was made of nor
// the copies it hands out reach it, so its version (computed once) always
// names what it judges by.
func TestPolicyIsImmutable(t *testing.T) {
	r := evidence.DefaultPolicy().Rules()
	p := evidence.NewPolicy(r)
	version := p.Version()
	ps := []evidence.Passage{src("census.gov", 1, 0.02, 0.95), src("reuters.com", 2, 0, 0.9), src("apnews.com", 2, 0.1, 0.8)}
	want := p.Assess(true, ps)
	require.True(t, want.Decision.Publish)
	require.Equal(t, evidence.GateHigh, want.Gate.Level)

	r.Gate4[0].MinSources = 99
	r.Publish.Mode, r.Name = evidence.PublishValidatorOnly, "changed"
	got := p.Rules()
	got.Gate4[0].MinSources = 99
	got.TierReliability[1] = 0
	require.Equal(t, version, p.Version())
	require.Equal(t, want, p.Assess(true, ps))
	require.Equal(t, evidence.DefaultPolicy().Rules(), p.Rules())
	require.Equal(t, "strict-v1", p.Name())
	require.Equal(t, evidence.PublishStrict, p.PublishMode())
	require.Equal(t, 0.5, p.UnknownRecency())
}

// A stance that is not a probability distribution counts as neutral: it
// can never make a flag.
func TestInvalidStanceCountsAsNeutral(t *testing.T) {
	p := evidence.DefaultPolicy()
	bad := []evidence.Stance{
		{Contradict: math.NaN()}, {Contradict: math.Inf(1)}, {Entail: -0.5, Contradict: 1.5},
		{Contradict: 0.9, Neutral: 0.9}, {Contradict: 2}, {},
	}
	for _, s := range bad {
		require.Error(t, s.Validate())
		ps := []evidence.Passage{src("census.gov", 1, 0, 0), src("reuters.com", 2, 0, 0), src("apnews.com", 2, 0, 0)}
		for i := range ps {
			ps[i].Stance = s
		}
		a := p.Assess(true, ps)
		require.False(t, a.Decision.Publish)
		require.Equal(t, evidence.VerdictNotEnough, a.Verdict)
		require.Zero(t, a.Features.CMax)
		b, err := json.Marshal(a)
		require.NoError(t, err, "an assessment always marshals (no NaN)")
		require.NotContains(t, string(b), "NaN")
	}
}

// The result does not depend on the order passages arrive in.
func TestAssessIgnoresPassageOrder(t *testing.T) {
	p := evidence.DefaultPolicy()
	ps := []evidence.Passage{
		src("census.gov", 1, 0.02, 0.95), src("reuters.com", 2, 0, 0.9), src("apnews.com", 2, 0.3, 0.6),
		src("x.com", 4, 0.9, 0), src("a.net", 3, 0.5, 0.5), src("b.net", 3, 0.1, 0.1), src("c.net", 3, 0.2, 0.7),
		src("d.net", 3, 0.6, 0.2), src("e.net", 3, 0.1, 0.75), src("f.net", 3, 0.05, 0.05),
		// Two sentences of one article, equally strong either way (gold evidence).
		{URL: "https://en.wikipedia.org/wiki/A", Domain: "wiki:A", Tier: 2, Rule: "gold", Stance: stance(1, 0)},
		{URL: "https://en.wikipedia.org/wiki/A", Domain: "wiki:A", Tier: 2, Rule: "gold", Stance: stance(0, 1)},
	}
	want := p.Assess(true, ps)
	for i := range 20 {
		shuffled := slices.Clone(ps)
		// A deterministic permutation per round.
		for j := range shuffled {
			k := (j*7 + i*3) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		require.Equal(t, want, p.Assess(true, shuffled))
	}
}
