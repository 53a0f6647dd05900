package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
)

func gold(t *testing.T, dataset, file string, opts LoadOptions) *Report {
	t.Helper()
	set, err := Load(dataset, file, opts)
	require.NoError(t, err)
	r, err := Evaluate(context.Background(), set, Options{Lane: LaneGold, Policy: evidence.DefaultPolicy()})
	require.NoError(t, err)
	return r
}

func verdictRow(s, r, c, n int) map[string]int {
	return map[string]int{evidence.VerdictSupported: s, evidence.VerdictRefuted: r, evidence.VerdictContested: c, evidence.VerdictNotEnough: n}
}

// TestGoldLaneHandLabelled checks the metric arithmetic on
// testdata/climate-fever.hand.jsonl, worked out by hand under the default
// policy (articles A..E; R refutes, S supports, N neither; every article a
// tier-2 source; two contradicting articles and no support give Refuted,
// Gate 4 MEDIUM and a flag):
//
//	c1  REFUTES          R(A) R(B) N N N        REFUTED    flagged      TP
//	c2  REFUTES          R(A) R(B) R(E) N N     REFUTED    flagged      TP
//	c3  REFUTES          R(A) N N N N           REFUTED    withheld     FN  no_authoritative_contradiction + gate4_below_minimum (1 source)
//	c4  REFUTES          R(A) S(B) N N N        CONTESTED  withheld     FN
//	c5  REFUTES          R(A:1) R(A:2) N N N    REFUTED    withheld     FN  one article: same two rules
//	c6  SUPPORTS         S(A) S(B) N N N        SUPPORTED  -            TN
//	c7  SUPPORTS         S(A) N N N N           NOT_ENOUGH (agree_dom 1) TN
//	c8  SUPPORTS         R(A) R(B) N N N        REFUTED    flagged      FP
//	c9  NOT_ENOUGH_INFO  N N N N N              NOT_ENOUGH              TN
//	c10 DISPUTED         S(A) R(B) N N N        CONTESTED               TN
//	c11 DISPUTED         S(A) S(B) S(C) N N     SUPPORTED               TN
//
// TP 2, FP 1, FN 3, TN 5: precision 2/3, recall 2/5, F1 2·2/(2·2+1+3) =
// 1/2, false-positive rate 1/6, coverage 7/11 (c1 c2 c3 c5 c6 c8 c11),
// recall ceiling 4/5 (c1 c2 c3 c5 REFUTED).
func TestGoldLaneHandLabelled(t *testing.T) {
	r := gold(t, ClimateFever, "testdata/climate-fever.hand.jsonl", LoadOptions{})
	require.Equal(t, Counts{TP: 2, FP: 1, FN: 3, TN: 5, Positives: 5, Negatives: 6, Flagged: 3, Definite: 7, RefutedPositives: 4}, r.Counts)
	require.Equal(t, 2.0/3.0, r.Precision)
	require.Equal(t, 2.0/5.0, r.Recall)
	require.Equal(t, 0.5, r.F1)
	require.Equal(t, 1.0/6.0, r.FalsePositiveRate)
	require.Equal(t, 7.0/11.0, r.Coverage)
	require.Equal(t, 4.0/5.0, r.RecallCeiling)
	require.Equal(t, 11, r.Records)
	require.Equal(t, 11, r.Evaluated)
	require.Equal(t, 11, r.Lines)
	require.Equal(t, []string{"c8"}, r.FalsePositives)
	require.Equal(t, map[string]map[string]int{
		"REFUTES":         verdictRow(0, 4, 1, 0),
		"SUPPORTS":        verdictRow(1, 1, 0, 1),
		"NOT_ENOUGH_INFO": verdictRow(0, 0, 0, 1),
		"DISPUTED":        verdictRow(1, 0, 1, 0),
	}, r.Confusion)
	require.Equal(t, map[string]int{"REFUTES": 2, "SUPPORTS": 1, "NOT_ENOUGH_INFO": 0, "DISPUTED": 0}, r.FlaggedByLabel)
	require.Equal(t, Disputed{Label: "DISPUTED", Claims: 2, Verdicts: verdictRow(1, 0, 1, 0), Flagged: 0}, r.Disputed)
	require.Equal(t, []RuleCost{
		{Rule: evidence.ReasonNoAuthority, Alone: 0, WithOthers: 2, RecallIfDropped: 2.0 / 5.0},
		{Rule: evidence.ReasonReliableSupport, Alone: 0, WithOthers: 0, RecallIfDropped: 2.0 / 5.0},
		{Rule: evidence.ReasonGateBelowMinimum, Alone: 0, WithOthers: 2, RecallIfDropped: 2.0 / 5.0},
	}, r.RuleCosts)
	require.Equal(t, map[string]int{"no_authoritative_contradiction+gate4_below_minimum": 2}, r.WithheldByRules)
	require.Equal(t, "REFUTES", r.PositiveLabel)
	require.Equal(t, evidence.DefaultPolicy().Version(), r.PolicyVersion)
	require.Equal(t, Tokens{}, r.Tokens)
	require.NotNil(t, r.CostUSD)
	require.Zero(t, *r.CostUSD)
	require.Contains(t, strings.Join(r.Assumptions, "\n"), "each distinct article counts as an independent tier-2 source")
	require.Contains(t, strings.Join(r.Assumptions, "\n"), "the validator is assumed to approve every claim")
}

// TestGoldLaneFactcheckBenchHandLabelled checks fcb-factuality and
// fcb-stance on testdata/fcb-*.hand.jsonl (passages P1..P7, each its own
// tier-2 source; r refute, p partially-support = entail 0.6, c
// completely-support, i irrelevant):
//
//	claim  factuality           passages         verdict     publish rule                                  fcb-stance label
//	F1     false                r1 r2 i3         REFUTED     flagged                                       refute
//	F2     false                r1 p4 i3         REFUTED     no_authority + reliable_support + gate (LOW)  refute
//	F3     false                r1 r2 p4         REFUTED     reliable_source_supports alone (gate MEDIUM)  refute
//	F4     true                 c5 c6            SUPPORTED   -                                             support
//	F5     true                 r1 r1(dup) r7    REFUTED     flagged                                       refute
//	F6     not_enough_evidence  i3 i6            NOT_ENOUGH  -                                             irrelevant-only
//	F7     false                (none)           not covered
//	F8     (not in factuality)  r1 c5            CONTESTED   -                                             refute+support
//
// fcb-factuality: TP 1 (F1), FN 2 (F2 F3), FP 1 (F5), TN 2 (F4 F6):
// precision 1/2, recall 1/3, F1 2/(2+1+2) = 2/5, false-positive rate 1/3,
// coverage 5/6; rules: reliable_source_supports alone 1 (F3, recall if
// dropped 2/3), each of the three among others 1 (F2).
// fcb-stance: positives F1 F2 F3 F5, TP 2 (F1 F5), FN 2, FP 0, TN 3:
// precision 1, recall 1/2, F1 4/6, false-positive rate 0, coverage 5/7,
// the one refute+support claim CONTESTED.
func TestGoldLaneFactcheckBenchHandLabelled(t *testing.T) {
	r := gold(t, FCBFactuality, "testdata/fcb-factuality.hand.jsonl", LoadOptions{EvidenceFile: "testdata/fcb-stance.hand.jsonl"})
	require.Equal(t, Counts{TP: 1, FP: 1, FN: 2, TN: 2, Positives: 3, Negatives: 3, Flagged: 2, Definite: 5, RefutedPositives: 3}, r.Counts)
	require.Equal(t, 1.0/2.0, r.Precision)
	require.Equal(t, 1.0/3.0, r.Recall)
	require.Equal(t, 2.0/5.0, r.F1)
	require.Equal(t, 1.0/3.0, r.FalsePositiveRate)
	require.Equal(t, 5.0/6.0, r.Coverage)
	require.Equal(t, 7, r.Records)
	require.Equal(t, 6, r.Evaluated)
	require.Equal(t, 1, r.NotCovered)
	require.Equal(t, map[string]int{"false": 1}, r.NotCoveredBy)
	require.Equal(t, 7+18, r.Lines)
	require.Equal(t, []string{"line 5"}, r.FalsePositives)
	require.Equal(t, map[string]map[string]int{
		"true":                verdictRow(1, 1, 0, 0),
		"false":               verdictRow(0, 3, 0, 0),
		"not_enough_evidence": verdictRow(0, 0, 0, 1),
	}, r.Confusion)
	require.Equal(t, map[string]int{"true": 1, "false": 1, "not_enough_evidence": 0}, r.FlaggedByLabel)
	require.Equal(t, Disputed{Label: "", Verdicts: map[string]int{}}, r.Disputed)
	require.Equal(t, []RuleCost{
		{Rule: evidence.ReasonNoAuthority, Alone: 0, WithOthers: 1, RecallIfDropped: 1.0 / 3.0},
		{Rule: evidence.ReasonReliableSupport, Alone: 1, WithOthers: 1, RecallIfDropped: 2.0 / 3.0},
		{Rule: evidence.ReasonGateBelowMinimum, Alone: 0, WithOthers: 1, RecallIfDropped: 1.0 / 3.0},
	}, r.RuleCosts)
	require.Equal(t, map[string]int{
		"no_authoritative_contradiction+reliable_source_supports+gate4_below_minimum": 1,
		"reliable_source_supports": 1,
	}, r.WithheldByRules)
	require.Contains(t, strings.Join(r.Assumptions, "\n"), "independent source of assumed tier 2")
	require.Contains(t, strings.Join(r.Assumptions, "\n"), "(1 duplicates dropped)")

	s := gold(t, FCBStance, "testdata/fcb-stance.hand.jsonl", LoadOptions{})
	require.Equal(t, Counts{TP: 2, FP: 0, FN: 2, TN: 3, Positives: 4, Negatives: 3, Flagged: 2, Definite: 5, RefutedPositives: 4}, s.Counts)
	require.Equal(t, 1.0, s.Precision)
	require.Equal(t, 1.0/2.0, s.Recall)
	require.Equal(t, 4.0/6.0, s.F1)
	require.Equal(t, 0.0, s.FalsePositiveRate)
	require.Equal(t, 5.0/7.0, s.Coverage)
	require.Equal(t, map[string]map[string]int{
		"support":         verdictRow(1, 0, 0, 0),
		"refute":          verdictRow(0, 4, 0, 0),
		"refute+support":  verdictRow(0, 0, 1, 0),
		"irrelevant-only": verdictRow(0, 0, 0, 1),
	}, s.Confusion)
	require.Equal(t, Disputed{Label: "refute+support", Claims: 1, Verdicts: verdictRow(0, 0, 1, 0)}, s.Disputed)
}

// A tier-1 assumption lets one contradicting passage flag: the flag
// changes the numbers, so it is recorded.
func TestAssumedTier(t *testing.T) {
	r := gold(t, FCBFactuality, "testdata/fcb-factuality.hand.jsonl", LoadOptions{EvidenceFile: "testdata/fcb-stance.hand.jsonl", AssumedTier: 1})
	require.Equal(t, 1, r.AssumedTier)
	require.Contains(t, strings.Join(r.Assumptions, "\n"), "independent source of assumed tier 1")
	// F2 (r1 p4): a tier-1 contradiction, but p4 supports at 0.6 and Gate
	// 4 stays LOW, so it is still withheld; nothing else changes.
	require.Equal(t, 1, r.Counts.TP)
	require.Equal(t, []RuleCost{
		{Rule: evidence.ReasonNoAuthority, Alone: 0, WithOthers: 0, RecallIfDropped: 1.0 / 3.0},
		{Rule: evidence.ReasonReliableSupport, Alone: 1, WithOthers: 1, RecallIfDropped: 2.0 / 3.0},
		{Rule: evidence.ReasonGateBelowMinimum, Alone: 0, WithOthers: 1, RecallIfDropped: 1.0 / 3.0},
	}, r.RuleCosts)
	_, err := Load(FCBStance, "testdata/fcb-stance.hand.jsonl", LoadOptions{AssumedTier: 6})
	require.EqualError(t, err, "assumed tier 6 is not a tier (1-5)")
}

// With nothing to count, every rate is 0 and the JSON has no NaN.
func TestEmptyIsZeroNotNaN(t *testing.T) {
	set := &Set{Dataset: ClimateFever, Labels: climateFeverLabels, Positive: "REFUTES", Disputed: "DISPUTED", NotCovered: map[string]int{}}
	r, err := Evaluate(context.Background(), set, Options{Lane: LaneGold, Policy: evidence.DefaultPolicy()})
	require.NoError(t, err)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	require.NotContains(t, string(b), "NaN")
	for _, v := range []float64{r.Precision, r.Recall, r.F1, r.FalsePositiveRate, r.Coverage, r.RecallCeiling} {
		require.Zero(t, v)
	}
}

func TestLimit(t *testing.T) {
	r := gold(t, ClimateFever, "testdata/climate-fever.hand.jsonl", LoadOptions{Limit: 3})
	require.Equal(t, 3, r.Records)
	require.Equal(t, Counts{TP: 2, FN: 1, Positives: 3, Flagged: 2, Definite: 3, RefutedPositives: 3}, r.Counts)
	s := gold(t, FCBStance, "testdata/fcb-stance.hand.jsonl", LoadOptions{Limit: 2})
	require.Equal(t, 2, s.Records)
	require.Equal(t, 18, s.Lines) // grouping by claim reads the whole file
}

func TestJSONKeys(t *testing.T) {
	r := gold(t, ClimateFever, "testdata/climate-fever.hand.jsonl", LoadOptions{})
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	for _, k := range []string{"dataset", "lane", "records", "precision", "recall", "f1", "false_positive_rate", "coverage",
		"policy_version", "confusion", "flagged_by_label", "assumptions", "rule_costs", "disputed", "tokens", "cost_usd"} {
		require.Contains(t, m, k)
	}
	require.Equal(t, "climate-fever", m["dataset"])
	require.Equal(t, "gold", m["lane"])
	require.Equal(t, 0.0, m["cost_usd"])
}

func TestUnknownLaneAndPolicy(t *testing.T) {
	set, err := Load(ClimateFever, "testdata/climate-fever.hand.jsonl", LoadOptions{})
	require.NoError(t, err)
	_, err = Evaluate(context.Background(), set, Options{Lane: "oracle", Policy: evidence.DefaultPolicy()})
	require.EqualError(t, err, `lane "oracle" is unknown (known: gold, provider)`)
	_, err = Evaluate(context.Background(), set, Options{Lane: LaneGold})
	require.ErrorContains(t, err, "policy: ")
	_, err = Evaluate(context.Background(), set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy()})
	require.EqualError(t, err, "provider lane: no stancer")
}
