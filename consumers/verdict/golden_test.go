package verdict_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/verdict"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update once to create %s", path)
	require.Equal(t, string(want), string(got))
}

// workedClaim is one claim of a worked example: its triage, Gate 1, the
// evidence, the engine's judgement and the rubric's verdict.
type workedClaim struct {
	Triage     verdict.Extracted    `json:"triage"`
	Researched bool                 `json:"researched"`
	Reason     string               `json:"reason"`
	Passages   []evidence.Passage   `json:"passages"`
	Assessment *evidence.Assessment `json:"assessment"`
	Verdict    verdict.ClaimResult  `json:"verdict"`
}

type worked struct {
	Text          string             `json:"text"`
	Rubric        string             `json:"rubric"`
	Policy        string             `json:"policy"`
	Extraction    json.RawMessage    `json:"extraction_answer"`
	Claims        []workedClaim      `json:"claims"`
	SummaryAnswer json.RawMessage    `json:"summary_answer"`
	Post          verdict.PostResult `json:"post"`
}

// run is the whole judgement of an analysis, as the stage runs it, from
// the model's raw answers and each claim's passages (by claim text).
func run(t *testing.T, text string, extraction, summary []byte, evidenceOf map[string][]evidence.Passage) worked {
	t.Helper()
	r := verdict.DefaultRubric()
	pol := evidence.DefaultPolicy()
	w := worked{Text: text, Rubric: r.Version(), Policy: pol.Version(), Extraction: extraction, SummaryAnswer: summary}
	claims, err := verdict.DecodeExtraction(extraction, verdict.MaxClaims)
	require.NoError(t, err)
	var results []verdict.ClaimResult
	var searched []evidence.Passage
	for _, e := range claims {
		ok, reason := r.Researched(e)
		wc := workedClaim{Triage: e, Researched: ok, Reason: reason, Passages: []evidence.Passage{}}
		in := verdict.ClaimInput{Triage: e, Now: now}
		if ok {
			wc.Passages = evidenceOf[e.Text]
			require.NotEmpty(t, wc.Passages, e.Text)
			a := pol.Assess(true, wc.Passages)
			wc.Assessment = &a
			in.Assessment, in.Passages, in.Searched = a, wc.Passages, true
			searched = append(searched, wc.Passages...)
		}
		wc.Verdict = r.Claim(in)
		results = append(results, wc.Verdict)
		w.Claims = append(w.Claims, wc)
	}
	var s verdict.Summary
	if summary != nil {
		s, err = verdict.DecodeSummary(summary)
		require.NoError(t, err)
	}
	w.Post = r.Post(verdict.PostInput{Claims: results, Triage: claims, Summary: s, SearchResults: searched})
	return w
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// A false post: a wrong opening year and a wrong colour, each refuted by
// independent official and reference sources, and an opinion that is not
// researched. A Reddit thread leaning the post's way is too weak to take
// a side. The model's invented citation is dropped.
func TestWorkedExampleFalsePost(t *testing.T) {
	text := "The Golden Gate Bridge opened in 1952 and it is painted blue. Honestly the most beautiful bridge in the world."
	extraction := []byte(`{"claims":[
 {"text":"The Golden Gate Bridge opened in 1952.","context":"The Golden Gate Bridge opened in 1952 and it is painted blue.","kind":"FACTUAL","specificity":0.9,"time_sensitive":false,"current_events":false,"numeric":true,"reason":"A dated historical event."},
 {"text":"The Golden Gate Bridge is painted blue.","context":"The Golden Gate Bridge opened in 1952 and it is painted blue.","kind":"FACTUAL","specificity":0.7,"time_sensitive":true,"current_events":false,"numeric":false,"reason":"A checkable property of the bridge, as of today."},
 {"text":"The Golden Gate Bridge is the most beautiful bridge in the world.","context":"Honestly the most beautiful bridge in the world.","kind":"OPINION","specificity":0.4,"time_sensitive":false,"current_events":false,"numeric":false,"reason":"A matter of taste."}
]}`)
	evidenceOf := map[string][]evidence.Passage{
		"The Golden Gate Bridge opened in 1952.": {
			{URL: "https://nps.gov/goga/learn/historyculture/golden-gate-bridge.htm", Domain: "nps.gov", Tier: 1, Rule: "wildcard:*.gov",
				Title: "Golden Gate Bridge - National Park Service", Snippet: "The bridge opened to pedestrians on May 27, 1937, and to vehicles the next day.",
				PublishedAt: day(2024, 5, 2), Origin: evidence.OriginSearch, Stance: evidence.Stance{Entail: 0.02, Contradict: 0.95, Neutral: 0.03},
				Num: evidence.NumMismatch, Recency: 0.9},
			{URL: "https://britannica.com/topic/golden-gate-bridge", Domain: "britannica.com", Tier: 2, Rule: "exact:britannica.com",
				Title: "Golden Gate Bridge | Britannica", Snippet: "Golden Gate Bridge, suspension bridge spanning the Golden Gate, opened in 1937.",
				Origin: evidence.OriginSearch, Stance: evidence.Stance{Entail: 0.03, Contradict: 0.9, Neutral: 0.07}, Num: evidence.NumMismatch, Recency: 0.5},
			{URL: "https://reddit.com/r/sanfrancisco/comments/abc", Domain: "reddit.com", Tier: 4, Rule: "exact:reddit.com",
				Title: "When did the bridge open?", Snippet: "pretty sure it was the fifties", PublishedAt: day(2021, 1, 9),
				Origin: evidence.OriginSearch, Stance: evidence.Stance{Entail: 0.2, Contradict: 0.1, Neutral: 0.7}, Recency: 0.3},
		},
		"The Golden Gate Bridge is painted blue.": {
			{URL: "https://goldengate.org/bridge/history-research/international-orange", Domain: "goldengate.org", Tier: 3, Rule: "default",
				Title: "International Orange", Snippet: "The Golden Gate Bridge is painted International Orange.", PublishedAt: day(2025, 11, 20),
				Origin: evidence.OriginSearch, Stance: evidence.Stance{Entail: 0.01, Contradict: 0.92, Neutral: 0.07}, Recency: 1},
			{URL: "https://apnews.com/article/golden-gate-paint", Domain: "apnews.com", Tier: 2, Rule: "exact:apnews.com",
				Title: "Painters keep the Golden Gate orange", Snippet: "crews repaint the bridge in its signature International Orange",
				PublishedAt: day(2025, 6, 1), Origin: evidence.OriginSearch, Stance: evidence.Stance{Entail: 0.02, Contradict: 0.85, Neutral: 0.13}, Recency: 0.95},
		},
	}
	summary := []byte(`{"summary":"Both factual claims are wrong: official and reference sources date the opening to 1937, not 1952, and the bridge is painted International Orange, not blue.","caveats":["The colour was checked against the bridge district's own site and one news report."],"sources":["https://www.nps.gov/goga/learn/historyculture/golden-gate-bridge.htm","https://goldengatebridge-facts.example/1952","https://apnews.com/article/golden-gate-paint"],"confidence":88,"label":"False"}`)
	golden(t, "false-post.golden.json", run(t, text, extraction, summary, evidenceOf))
}

// An opinion post: no factual claim, so nothing is searched, no summary
// call is made, and the post is Opinion.
func TestWorkedExampleOpinionPost(t *testing.T) {
	text := "Pineapple on pizza is the best thing ever invented. Who even disagrees?"
	extraction := []byte(`{"claims":[
 {"text":"Pineapple on pizza is the best thing ever invented.","context":"Pineapple on pizza is the best thing ever invented.","kind":"OPINION","specificity":0.3,"time_sensitive":false,"current_events":false,"numeric":false,"reason":"A statement of taste."},
 {"text":"Who even disagrees?","context":"Who even disagrees?","kind":"NOT_A_CLAIM","specificity":0,"time_sensitive":false,"current_events":false,"numeric":false,"reason":"A rhetorical question."}
]}`)
	golden(t, "opinion-post.golden.json", run(t, text, extraction, nil, nil))
}
