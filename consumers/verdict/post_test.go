package verdict_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

var (
	opinion    = verdict.Extracted{Text: "This is the best city in the world.", Kind: events.TriageOpinion, Specificity: 0.2}
	question   = verdict.Extracted{Text: "Who else has been there?", Kind: events.TriageNotAClaim}
	prediction = verdict.Extracted{Text: "The city will double in size by 2050.", Kind: events.TriagePrediction, Specificity: 0.9}
	vague      = verdict.Extracted{Text: "Things were different back then.", Kind: events.TriageFactual, Specificity: 0.1}

	trueClaim   = verdict.ClaimResult{Researched: true, TruthPercent: 90, Confidence: 86, Caps: []verdict.Cap{}, Label: events.LabelTrue, Band: events.BandTrue}
	falseClaim  = verdict.ClaimResult{Researched: true, TruthPercent: 5, Confidence: 85, Caps: []verdict.Cap{}, Label: events.LabelFalse, Band: events.BandFalse}
	unsureFalse = verdict.ClaimResult{Researched: true, TruthPercent: 5, Confidence: 50, Caps: []verdict.Cap{}, Label: events.LabelFalse, Band: events.BandFalse}
	opinionRes  = verdict.DefaultRubric().Claim(verdict.ClaimInput{Triage: opinion})
)

func TestPostWithoutResearch(t *testing.T) {
	r := verdict.DefaultRubric()
	results := []evidence.Passage{passage("reuters.com", 2, 0.9, 0)}
	tests := []struct {
		name string
		in   verdict.PostInput
		want verdict.PostResult
	}{
		{"opinion only: Opinion, nothing searched", verdict.PostInput{Triage: []verdict.Extracted{opinion, question},
			Claims: []verdict.ClaimResult{opinionRes, r.Claim(verdict.ClaimInput{Triage: question})}},
			verdict.PostResult{TruthPercent: 50, Confidence: 85, Caps: []verdict.Cap{}, Label: events.LabelOpinion, Band: events.BandUnverified,
				Summary: "The text expresses opinions and makes no factual claim to check, so nothing was searched.",
				Caveats: []string{}, Sources: []events.VerdictSourceV1{}}},
		{"no statement at all: Opinion", verdict.PostInput{},
			verdict.PostResult{TruthPercent: 50, Confidence: 85, Caps: []verdict.Cap{}, Label: events.LabelOpinion, Band: events.BandUnverified,
				Summary: "The text expresses opinions and makes no factual claim to check, so nothing was searched.",
				Caveats: []string{}, Sources: []events.VerdictSourceV1{}}},
		{"opinion only, the model less sure: its confidence caps", verdict.PostInput{Triage: []verdict.Extracted{opinion},
			Claims: []verdict.ClaimResult{opinionRes}, SearchResults: results,
			Summary: verdict.Summary{Summary: "A personal view of the city.", Caveats: []string{"Some may read it as a claim about rankings."},
				Sources: []string{"https://reuters.com/a"}, ModelConfidence: 70, ModelLabel: events.LabelOpinion}},
			verdict.PostResult{TruthPercent: 50, Confidence: 70, Caps: []verdict.Cap{{verdict.CapModelConfidence, 70, 85}},
				Label: events.LabelOpinion, Band: events.BandUnverified, Summary: "A personal view of the city.",
				Caveats: []string{"Some may read it as a claim about rankings.", "Confidence held at 70% (from 85%): the model's own confidence is lower."},
				Sources: []events.VerdictSourceV1{}}},
		{"opinion only, the model surer: nothing recorded", verdict.PostInput{Triage: []verdict.Extracted{opinion},
			Claims: []verdict.ClaimResult{opinionRes}, Summary: verdict.Summary{Summary: "A view.", ModelConfidence: 95, ModelLabel: events.LabelOpinion}},
			verdict.PostResult{TruthPercent: 50, Confidence: 85, Caps: []verdict.Cap{}, Label: events.LabelOpinion, Band: events.BandUnverified,
				Summary: "A view.", Caveats: []string{}, Sources: []events.VerdictSourceV1{}}},
		{"a prediction and a vague claim: Unverifiable", verdict.PostInput{Triage: []verdict.Extracted{opinion, prediction, vague},
			Claims:        []verdict.ClaimResult{opinionRes, r.Claim(verdict.ClaimInput{Triage: prediction}), r.Claim(verdict.ClaimInput{Triage: vague})},
			SearchResults: results},
			verdict.PostResult{TruthPercent: 50, Confidence: 0, Caps: []verdict.Cap{}, Label: events.LabelUnverifiable, Band: events.BandUnverified,
				Summary: "None of the text's statements could be researched: they are predictions, or too vague to check.",
				Caveats: []string{}, Sources: []events.VerdictSourceV1{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, r.Post(tt.in))
		})
	}
}

// The post's truth and confidence aggregate the researched claims; a
// confidently false claim pulls hard, and among true ones it makes the
// post Misleading.
func TestPostAggregation(t *testing.T) {
	unsure30 := unsureFalse
	unsure30.Confidence = 30
	withCap := func(c verdict.ClaimResult, k verdict.Cap) verdict.ClaimResult {
		c.Caps = []verdict.Cap{k}
		c.Confidence = min(c.Confidence, k.Cap)
		return c
	}
	tests := []struct {
		name         string
		claims       []verdict.ClaimResult
		summary      verdict.Summary
		truth, conf  int
		caps         []verdict.Cap
		label, band  string
		demoted      string
		extraCaveats []string
	}{
		{name: "all true", claims: []verdict.ClaimResult{trueClaim, trueClaim}, truth: 90, conf: 86, caps: []verdict.Cap{},
			label: events.LabelTrue, band: events.BandTrue},
		{name: "one true, one confidently false: False", claims: []verdict.ClaimResult{trueClaim, falseClaim},
			// truth (90·86 + 5·3·85)/(86 + 3·85) = 26.4; confidence (86 + 3·85)/4 = 85.25
			truth: 26, conf: 85, caps: []verdict.Cap{}, label: events.LabelFalse, band: events.BandMostlyFalse},
		{name: "two true around a confidently false one: Misleading", claims: []verdict.ClaimResult{trueClaim, falseClaim, trueClaim},
			// truth (2·90·86 + 5·255)/(2·86 + 255) = 39.2; confidence (2·86 + 255)/5 = 85.4
			truth: 39, conf: 85, caps: []verdict.Cap{}, label: events.LabelMisleading, band: events.BandLeaningFalse},
		{name: "a false claim held with doubt does not make it Misleading", claims: []verdict.ClaimResult{trueClaim, unsureFalse, trueClaim},
			// truth (2·90·86 + 5·50)/(2·86 + 50) = 70.9; confidence (86 + 50 + 86)/3 = 74
			truth: 71, conf: 74, caps: []verdict.Cap{}, label: events.LabelMostlyTrue, band: events.BandLeaningTrue},
		{name: "the model's lower confidence caps", claims: []verdict.ClaimResult{trueClaim},
			summary: verdict.Summary{Summary: "Two official sources confirm it.", ModelConfidence: 60, ModelLabel: events.LabelTrue},
			truth:   90, conf: 60, caps: []verdict.Cap{{verdict.CapModelConfidence, 60, 86}}, label: events.LabelTrue, band: events.BandTrue,
			extraCaveats: []string{"Confidence held at 60% (from 86%): the model's own confidence is lower."}},
		{name: "a cap applied to a claim applies to the post", claims: []verdict.ClaimResult{
			withCap(trueClaim, verdict.Cap{verdict.CapApproximateNumber, 70, 86}), trueClaim},
			truth: 90, conf: 70, caps: []verdict.Cap{{verdict.CapApproximateNumber, 70, 78}}, label: events.LabelTrue, band: events.BandTrue,
			extraCaveats: []string{"Confidence held at 70% (from 78%): no source states a claim's specific number or date exactly."}},
		{name: "a cap that held without lowering a claim still caps the post", claims: []verdict.ClaimResult{
			withCap(unsure30, verdict.Cap{verdict.CapNoSearchTimeSensitive, 40, 30}), trueClaim, trueClaim},
			// truth (2·90·86 + 5·30)/(2·86 + 30) = 77.4; confidence (30 + 2·86)/3 = 67.3
			truth: 77, conf: 40, caps: []verdict.Cap{{verdict.CapNoSearchTimeSensitive, 40, 67}}, label: events.LabelMostlyTrue,
			band: events.BandMostlyTrue, extraCaveats: []string{"Confidence held at 40% (from 67%): a time-sensitive claim was not searched."}},
		{name: "the strictest cap of a rule, once", claims: []verdict.ClaimResult{
			withCap(trueClaim, verdict.Cap{verdict.CapStaleSources, 50, 86}), withCap(trueClaim, verdict.Cap{verdict.CapStaleSources, 45, 86})},
			truth: 90, conf: 45, caps: []verdict.Cap{{verdict.CapStaleSources, 45, 48}}, label: events.LabelTrue, band: events.BandTrue,
			extraCaveats: []string{"Confidence held at 45% (from 48%): the newest source on a current-events claim is over a year old."}},
		{name: "coherence: a False verdict below 40 is Unverifiable", claims: []verdict.ClaimResult{
			{Researched: true, TruthPercent: 5, Confidence: 30, Caps: []verdict.Cap{}, Label: events.LabelUnverifiable, Band: events.BandFalse}},
			truth: 5, conf: 30, caps: []verdict.Cap{}, label: events.LabelUnverifiable, band: events.BandFalse, demoted: events.LabelFalse,
			extraCaveats: []string{"The evidence leans false, but with confidence below 40% the verdict is Unverifiable."}},
		{name: "coherence: Unverifiable at 44 is held at 40", claims: []verdict.ClaimResult{
			{Researched: true, TruthPercent: 50, Confidence: 44, Caps: []verdict.Cap{}, Label: events.LabelUnverifiable, Band: events.BandUnverified}},
			truth: 50, conf: 40, caps: []verdict.Cap{{verdict.CapUnverifiable, 40, 44}}, label: events.LabelUnverifiable, band: events.BandUnverified,
			extraCaveats: []string{"Confidence held at 40% (from 44%): an unverifiable verdict cannot be more confident."}},
		{name: "a claim of confidence 0 still has a truth", claims: []verdict.ClaimResult{
			{Researched: true, TruthPercent: 60, Confidence: 0, Caps: []verdict.Cap{}, Label: events.LabelUnverifiable, Band: events.BandLeaningTrue}},
			truth: 60, conf: 0, caps: []verdict.Cap{}, label: events.LabelUnverifiable, band: events.BandLeaningTrue, demoted: events.LabelMostlyTrue,
			extraCaveats: []string{"The evidence leans mostly true, but with confidence below 40% the verdict is Unverifiable."}},
	}
	results := []evidence.Passage{passage("reuters.com", 2, 0.9, 0)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := append([]verdict.ClaimResult{opinionRes}, tt.claims...)
			res := verdict.DefaultRubric().Post(verdict.PostInput{Claims: claims, Summary: tt.summary, SearchResults: results})
			require.Equal(t, tt.truth, res.TruthPercent)
			require.Equal(t, tt.conf, res.Confidence)
			require.Equal(t, tt.caps, res.Caps)
			require.Equal(t, tt.label, res.Label)
			require.Equal(t, tt.band, res.Band)
			require.Equal(t, verdict.Band(tt.truth, tt.conf), res.Band)
			require.Equal(t, tt.demoted, res.Demoted)
			require.Equal(t, len(tt.claims), res.Researched)
			want := append(append([]string{}, tt.extraCaveats...),
				fmt.Sprintf("1 of %d statements was not researched (opinion, prediction, not a claim, or too vague).", len(claims)))
			require.Equal(t, want, res.Caveats)
			require.Len(t, res.Sources, 1)
		})
	}
}

// Sources: what the model cites, when it was among the search results;
// otherwise the search results, best tier first, one per domain, at most
// five.
func TestPostSources(t *testing.T) {
	titled := func(p evidence.Passage, url, title string) evidence.Passage {
		p.URL, p.Title = url, title
		return p
	}
	results := []evidence.Passage{
		titled(passage("reuters.com", 2, 0.9, 0), "https://reuters.com/world/a", "Reuters: the bridge opened in 1932"),
		titled(passage("reddit.com", 4, 0.9, 0), "https://reddit.com/r/x/1", "A thread"),
		titled(passage("census.gov", 1, 0, 0.4), "https://census.gov/y", "Census Y"),
		titled(passage("census.gov", 1, 0, 0.9), "https://census.gov/x", ""),
		titled(passage("apnews.com", 2, 0, 0), "https://apnews.com/n", "AP"),
		titled(passage("bbc.co.uk", 2, 0.7, 0), "https://bbc.co.uk/news/1", "BBC"),
		titled(passage("example.org", 3, 0, 0), "https://example.org/p", "Example"),
		titled(passage("rumours.example", 5, 0.9, 0), "https://rumours.example/z", "Rumours"),
		titled(passage("reuters.com", 2, 0.9, 0), "https://reuters.com/world/a", "Reuters again"),
	}
	fromSearch := []events.VerdictSourceV1{
		{URL: "https://census.gov/x", Title: "census.gov", Domain: "census.gov", Tier: 1, FromSearch: true},
		{URL: "https://reuters.com/world/a", Title: "Reuters: the bridge opened in 1932", Domain: "reuters.com", Tier: 2, FromSearch: true},
		{URL: "https://bbc.co.uk/news/1", Title: "BBC", Domain: "bbc.co.uk", Tier: 2, FromSearch: true},
		{URL: "https://apnews.com/n", Title: "AP", Domain: "apnews.com", Tier: 2, FromSearch: true},
		{URL: "https://example.org/p", Title: "Example", Domain: "example.org", Tier: 3, FromSearch: true},
	}
	tests := []struct {
		name     string
		cited    []string
		registry func(string) (string, int, bool)
		want     []events.VerdictSourceV1
		caveats  []string
	}{
		{name: "no citation: filled from the search results", want: fromSearch, caveats: []string{}},
		{name: "cited, in another spelling of a search result; invented and broken citations dropped",
			cited: []string{"https://WWW.Reuters.com/world/a/?utm_source=x#top", "https://made-up.example/fake", "not a url",
				"https://reuters.com/world/a", "https://reddit.com/r/x/1"},
			want: []events.VerdictSourceV1{
				{URL: "https://reuters.com/world/a", Title: "Reuters: the bridge opened in 1932", Domain: "reuters.com", Tier: 2},
				{URL: "https://reddit.com/r/x/1", Title: "A thread", Domain: "reddit.com", Tier: 4},
			},
			caveats: []string{"2 cited sources were not among the search results and are not shown."}},
		{name: "only invented citations: filled from the search results", cited: []string{"https://made-up.example/fake"},
			want: fromSearch, caveats: []string{"1 cited source was not among the search results and is not shown."}},
		{name: "the registry resolves domain and tier", cited: []string{"https://reuters.com/world/a", "https://apnews.com/n"},
			registry: func(u string) (string, int, bool) {
				if u == "https://reuters.com/world/a" {
					return "reuters.com", 1, true
				}
				return "", 0, false
			},
			want: []events.VerdictSourceV1{
				{URL: "https://reuters.com/world/a", Title: "Reuters: the bridge opened in 1932", Domain: "reuters.com", Tier: 1},
				{URL: "https://apnews.com/n", Title: "AP", Domain: "apnews.com", Tier: 2},
			},
			caveats: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := verdict.DefaultRubric().Post(verdict.PostInput{Claims: []verdict.ClaimResult{trueClaim}, SearchResults: results,
				Registry: tt.registry, Summary: verdict.Summary{Summary: "Confirmed.", Caveats: []string{}, Sources: tt.cited, ModelConfidence: 90}})
			require.Equal(t, tt.want, res.Sources)
			require.Equal(t, tt.caveats, res.Caveats)
		})
	}

	many := make([]string, 0, 20)
	var manyResults []evidence.Passage
	for i := range 20 {
		domain := fmt.Sprintf("site%02d.com", i)
		many = append(many, "https://"+domain+"/p")
		manyResults = append(manyResults, titled(passage(domain, 3, 0.9, 0), "https://"+domain+"/p", "T"))
	}
	res := verdict.DefaultRubric().Post(verdict.PostInput{Claims: []verdict.ClaimResult{trueClaim}, SearchResults: manyResults,
		Summary: verdict.Summary{Summary: "Confirmed.", Sources: many, ModelConfidence: 90}})
	require.Len(t, res.Sources, 10, "at most ten cited sources")
	require.Equal(t, "https://site00.com/p", res.Sources[0].URL)
	require.Equal(t, "https://site09.com/p", res.Sources[9].URL)

	res = verdict.DefaultRubric().Post(verdict.PostInput{Claims: []verdict.ClaimResult{trueClaim}})
	require.NotNil(t, res.Sources)
	require.Empty(t, res.Sources, "nothing to cite without search results")
	require.Equal(t, "1 of 1 statements were researched; on the evidence found the text is true (truth 90%, confidence 86%).", res.Summary)
}
