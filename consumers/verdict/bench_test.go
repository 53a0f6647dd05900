package verdict_test

import (
	"fmt"
	"testing"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/verdict"
)

// A claim with eight passages, every cap's condition to check.
func BenchmarkClaim(b *testing.B) {
	r := verdict.DefaultRubric()
	var ps []evidence.Passage
	for i := range 8 {
		ps = append(ps, dated(passage(fmt.Sprintf("site%d.com", i), 1+i%5, 0.1*float64(i%8), 0.05), 0))
	}
	triage := factual
	triage.TimeSensitive, triage.CurrentEvents, triage.Numeric = true, true, true
	pol := evidence.DefaultPolicy()
	in := verdict.ClaimInput{Triage: triage, Passages: ps, Searched: true, Now: now, Assessment: pol.Assess(true, ps)}
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Claim(in)
	}
}

// A post of twenty researched claims with 160 search results, the model
// citing ten of them and one it made up.
func BenchmarkPost(b *testing.B) {
	r := verdict.DefaultRubric()
	in := verdict.PostInput{Summary: verdict.Summary{Summary: "s", ModelConfidence: 80}}
	for i := range 20 {
		c := trueClaim
		if i%5 == 0 {
			c = falseClaim
		}
		in.Claims = append(in.Claims, c)
		in.Triage = append(in.Triage, factual)
		for j := range 8 {
			p := passage(fmt.Sprintf("site%d-%d.com", i, j), 1+j%5, 0.9, 0)
			in.SearchResults = append(in.SearchResults, p)
			if j == 0 && i < 10 {
				in.Summary.Sources = append(in.Summary.Sources, p.URL)
			}
		}
	}
	in.Summary.Sources = append(in.Summary.Sources, "https://made-up.com/x")
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Post(in)
	}
}
