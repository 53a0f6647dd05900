package evidence_test

import (
	"fmt"
	"testing"

	"github.com/errata-dev/errata/consumers/evidence"
)

// benchPassages is a realistic mix for one claim: n passages over n/2
// domains of tiers 1-5, a third contradicting, a quarter supporting, the
// rest neutral, half of them with a numeric check and a known date.
func benchPassages(n int) []evidence.Passage {
	ps := make([]evidence.Passage, n)
	for i := range ps {
		st := evidence.Stance{Entail: 0.05, Contradict: 0.05, Neutral: 0.9}
		switch {
		case i%3 == 0:
			st = evidence.Stance{Entail: 0.02, Contradict: 0.9, Neutral: 0.08}
		case i%4 == 1:
			st = evidence.Stance{Entail: 0.75, Contradict: 0.1, Neutral: 0.15}
		}
		num := evidence.NumNotApplicable
		if i%2 == 0 {
			num = evidence.NumMatch
		}
		d := i / 2
		ps[i] = evidence.Passage{
			URL:    fmt.Sprintf("https://www.site%d.example/article/%d", d, i),
			Domain: fmt.Sprintf("site%d.example", d), Tier: 1 + d%5, Rule: "bench",
			Origin: evidence.OriginSearch, Stance: st, Num: num, Recency: float64(i%10) / 10,
		}
	}
	return ps
}

// BenchmarkAssess is the engine's cost per claim outside provider time:
// features, score, verdict, Gate 4 and the publish decision over the
// claim's passages (stance and tiers already resolved and recorded).
// `errata eval`'s gold lane and replay pay exactly this per claim; compare
// it with BenchmarkOrchestrationOverhead (consumers/investigator), the
// orchestration overhead of a whole investigation.
func BenchmarkAssess(b *testing.B) {
	pol := evidence.DefaultPolicy()
	for _, n := range []int{8, 20, 100} {
		ps := benchPassages(n)
		b.Run(fmt.Sprintf("passages=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var a evidence.Assessment
			for b.Loop() {
				a = pol.Assess(true, ps)
			}
			if a.Verdict == "" {
				b.Fatal("no verdict")
			}
		})
	}
}
