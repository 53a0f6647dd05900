package workbench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}

func str(s string) *string { return &s }

// reportJob is a finished analysis of a page whose claims, sources and
// titles carry markup and script links.
func reportJob() serving.Analysis {
	created := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	completed := created.Add(95 * time.Second)
	src := func(url, domain string, tier int, e, c, n float64) serving.ClaimSource {
		return serving.ClaimSource{URL: url, Domain: domain, Tier: tier, Rule: domain, Origin: "search", Entail: e, Contradict: c, Neutral: n}
	}
	return serving.Analysis{
		ID: "3f7e1c2a-9b4d-5e6f-8a1b-2c3d4e5f6a7b", Status: events.StatusComplete,
		Input: serving.AnalysisInput{Kind: "URL", URL: str("https://news.example/tower?a=1&b=<2>"),
			Title: str(`Tower "facts" <script>alert(1)</script>`), TextLength: 812},
		Versions: serving.AnalysisVersions{
			Prompts:  []serving.AnalysisPrompt{{Name: "verdict-extract", Version: "v2", SHA256: strings.Repeat("1f", 32)}},
			Provider: "chat-completions", Model: "gpt-5-mini", Registry: "starter@" + strings.Repeat("a", 12),
			Policy: "strict-v1", Rubric: "factsocial-v1",
		},
		Claims: []serving.AnalysisClaim{
			{ID: "c0", Index: 0, Text: "The tower was completed in 1925.", Context: "It says: the tower was completed in 1925.",
				Triage: &serving.ClaimTriage{Kind: "FACTUAL", Specificity: 0.92, TimeSensitive: false, Numeric: true, Researched: true, Reason: "a date"},
				Queries: []serving.ClaimQuery{{Query: "tower completed year", Kind: "keyword", Results: []serving.QueryResult{
					{URL: "https://www.britannica.com/tower", Title: "Tower | Britannica", Snippet: "completed in 1889"},
					{URL: "data:text/html,<script>alert(1)</script>", Title: "<b>data</b>", Snippet: ""},
				}}, {Query: "tower 1925", Kind: "timeline", Results: []serving.QueryResult{}, Error: str("search provider timed out")}},
				Sources: []serving.ClaimSource{
					src("https://www.britannica.com/tower", "britannica.com", 2, 0.05, 0.9, 0.05),
					src("https://www.britannica.com/tower#history", "britannica.com", 2, 0.5, 0.2, 0.3),
					src("https://blog.example/post", "blog.example", 5, 0.7, 0.1, 0.2),
				},
				Verdict: &serving.ClaimVerdict{Engine: str("REFUTED"), Score: 9, Gate4: str("MEDIUM"), TruthPercent: 10, Confidence: 50,
					Label: "False", Band: "FALSE", Caps: []serving.VerdictCap{{Rule: "single_low_tier_source", Cap: 50, Before: 81}},
					Summary: "Britannica dates it to 1889."}},
			{ID: "c1", Index: 1, Text: "It will stand for 500 more years.", Context: "",
				Triage:  &serving.ClaimTriage{Kind: "PREDICTION", Specificity: 0.4, Researched: false, Reason: "about the future"},
				Queries: []serving.ClaimQuery{}, Sources: []serving.ClaimSource{src("https://neutral.example/", "neutral.example", 3, 0.1, 0.1, 0.8)},
				Verdict: nil},
		},
		Verdict: &serving.PostVerdict{Label: "Misleading", Band: "MOSTLY-FALSE", TruthPercent: 22, Confidence: 50,
			Caps:    []serving.VerdictCap{{Rule: "single_low_tier_source", Cap: 50, Before: 81}, {Rule: "a_new_rule", Cap: 45, Before: 50}},
			Summary: "The completion date is wrong; the prediction cannot be checked.",
			Caveats: []string{"Predictions are not checked."},
			Sources: []serving.VerdictSource{{URL: "https://www.britannica.com/tower", Title: "", Domain: "britannica.com", Tier: 2, FromSearch: true}}},
		CreatedAt: created, CompletedAt: &completed,
	}
}

func TestReportGolden(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, RenderReport(&b, Report{Analysis: reportJob(), Permalink: "https://errata.example/app/analyses/3f7e1c2a-9b4d-5e6f-8a1b-2c3d4e5f6a7b",
		Generated: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)}))
	out := b.String()
	require.NotContains(t, out, "<script>")
	require.NotContains(t, out, `href="data:`)
	require.Contains(t, out, `<title>Errata report: Tower &#34;facts&#34; &lt;script&gt;alert(1)&lt;/script&gt;</title>`)
	golden(t, "report.html", b.Bytes())
}

// A pending job has its own report: no verdict yet, no claims.
func TestReportPending(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, RenderReport(&b, Report{Analysis: serving.Analysis{ID: "x", Status: events.StatusPending,
		Input: serving.AnalysisInput{Kind: "TEXT", TextLength: 12}}, Permalink: "http://127.0.0.1/app/analyses/x"}))
	out := b.String()
	require.Contains(t, out, "No verdict yet: the analysis is PENDING.")
	require.Contains(t, out, "No claims extracted.")
	require.Contains(t, out, "No source was assessed.")
	require.Contains(t, out, "<h1>Submitted text</h1>")

	b.Reset()
	require.NoError(t, RenderReport(&b, Report{Analysis: serving.Analysis{ID: "x", Status: events.StatusFailed,
		Failure: str("the provider refused <the key>"), Input: serving.AnalysisInput{Kind: "TEXT"}}}))
	require.Contains(t, b.String(), "The analysis failed: the provider refused &lt;the key&gt;")
}

func TestStance(t *testing.T) {
	for _, tc := range []struct {
		e, c, n float64
		want    string
	}{
		{0.9, 0.05, 0.05, StanceSupports},
		{0.05, 0.9, 0.05, StanceRefutes},
		{0.1, 0.2, 0.7, StanceNeutral},
		{0.4, 0.4, 0.2, StanceSupports}, // a tie goes to the first
		{0.2, 0.4, 0.4, StanceRefutes},
		{0, 0, 0, StanceSupports},
	} {
		require.Equal(t, tc.want, Stance(tc.e, tc.c, tc.n), "%v", tc)
	}
}

// One column per domain in order of first appearance with its best tier;
// a cell is the claim's strongest passage from the domain.
func TestCoverageMatrix(t *testing.T) {
	m := CoverageMatrix(reportJob().Claims)
	require.Equal(t, []MatrixDomain{{"britannica.com", 2}, {"blog.example", 5}, {"neutral.example", 3}}, m.Domains)
	require.Len(t, m.Rows, 2)
	require.Equal(t, []MatrixCell{{Stance: StanceRefutes, Strength: 0.9, Passages: 2}, {Stance: StanceSupports, Strength: 0.7, Passages: 1}, {}}, m.Rows[0].Cells)
	require.Equal(t, []MatrixCell{{}, {}, {Stance: StanceNeutral, Strength: 0.1, Passages: 1}}, m.Rows[1].Cells)
	require.Empty(t, CoverageMatrix(nil).Domains)
}

func BenchmarkRenderReport(b *testing.B) {
	job := reportJob()
	r := Report{Analysis: job, Permalink: "https://errata.example/app/analyses/" + job.ID, Generated: time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := RenderReport(&buf, r); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}
