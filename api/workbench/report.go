package workbench

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/projections/serving"
)

//go:embed report.html.tmpl
var reportSource string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"label":    LabelName,
	"labelKey": labelKey,
	"bandKey":  bandKey,
	"capLine":  CapLine,
	"stance":   func(s serving.ClaimSource) string { return Stance(s.Entail, s.Contradict, s.Neutral) },
	"prob":     func(p float64) string { return fmt.Sprintf("%.2f", p) },
	"short":    func(s string) string { return clip(s, 12) },
	"clip":     func(n int, s string) string { return clip(s, n) },
	"deref":    func(s *string) string { return deref(s) },
	"time": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"add":   func(a, b int) int { return a + b },
	"lower": strings.ToLower,
}).Parse(reportSource))

// Report is what the report shows: the job and where it lives.
type Report struct {
	Analysis serving.Analysis
	// Permalink is the job page's absolute address.
	Permalink string
	// Generated is when the report was rendered.
	Generated time.Time
}

// reportView is the template's data.
type reportView struct {
	Report
	Title     string
	Created   *time.Time
	Generated *time.Time
	Matrix    Matrix
}

// RenderReport writes the self-contained HTML report of r to w: the
// verdict narrative, each claim with its Gate 1 triage, searches, sources
// and Gate 4 verdict, the claims × sources coverage matrix, and the
// versions the analysis ran with. No script, no outside resource.
func RenderReport(w io.Writer, r Report) error {
	a := r.Analysis
	created, generated := a.CreatedAt, r.Generated
	v := reportView{Report: r, Title: JobTitle(a), Created: &created, Generated: &generated, Matrix: CoverageMatrix(a.Claims)}
	if err := reportTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("workbench: render report: %w", err)
	}
	return nil
}

// JobTitle names what was analysed: the page's title, else its address,
// else the kind of input.
func JobTitle(a serving.Analysis) string {
	if t := strings.TrimSpace(deref(a.Input.Title)); t != "" {
		return t
	}
	if u := deref(a.Input.URL); u != "" {
		return u
	}
	switch a.Input.Kind {
	case "POST":
		return deref(a.Input.Platform) + " post " + deref(a.Input.ExternalID)
	case "URL":
		return "Submitted page"
	}
	return "Submitted text"
}

// labelNames are factSocial's labels as people read them.
var labelNames = map[string]string{
	"True": "True", "MostlyTrue": "Mostly true", "Mixed": "Mixed", "Misleading": "Misleading",
	"False": "False", "Unverifiable": "Unverifiable", "Opinion": "Opinion",
}

// LabelName is a label as people read it ("MostlyTrue" is "Mostly true").
func LabelName(label string) string {
	if n, ok := labelNames[label]; ok {
		return n
	}
	return label
}

// labelKey is the CSS class suffix of a label: known labels only.
func labelKey(label string) string {
	if _, ok := labelNames[label]; ok {
		return strings.ToLower(label)
	}
	return "unknown"
}

// bandKey is the CSS class suffix of a band: known bands only.
func bandKey(band string) string {
	switch band {
	case "TRUE", "MOSTLY-TRUE", "LEANING-TRUE", "MIXED", "UNVERIFIED", "LEANING-FALSE", "MOSTLY-FALSE", "FALSE":
		return strings.ToLower(band)
	}
	return "unknown"
}

// capRules say what each confidence cap of the rubric means.
var capRules = map[string]string{
	"no_search_time_sensitive":     "no search on a time-sensitive claim",
	"stale_sources_current_events": "newest source more than a year old on a current-events claim",
	"single_low_tier_source":       "a single social-media or blog source",
	"approximate_number":           "only approximate evidence for a specific number or date",
	"coherence_unverifiable":       "an unverifiable verdict keeps its confidence low",
	"model_confidence":             "the model's own confidence was lower",
}

// CapRuleText says what a cap rule means (the rule itself when unknown).
func CapRuleText(rule string) string {
	if t, ok := capRules[rule]; ok {
		return t
	}
	return rule
}

// CapLine says what a cap did: lowered the confidence, or bounds it where
// it already was.
func CapLine(c serving.VerdictCap) string {
	if c.Before > c.Cap {
		return fmt.Sprintf("Lowered from %d to %d: %s", c.Before, c.Cap, CapRuleText(c.Rule))
	}
	return fmt.Sprintf("At most %d: %s (confidence %d, unchanged)", c.Cap, CapRuleText(c.Rule), c.Before)
}

// Stances of a source in the coverage matrix.
const (
	StanceSupports = "supports"
	StanceRefutes  = "refutes"
	StanceNeutral  = "neutral"
)

// Stance is the source's stance: the most probable of entailment,
// contradiction and neutrality (ties go to the first).
func Stance(entail, contradict, neutral float64) string {
	switch {
	case entail >= contradict && entail >= neutral:
		return StanceSupports
	case contradict >= neutral:
		return StanceRefutes
	}
	return StanceNeutral
}

// Matrix is the claims × sources coverage: one column per source domain
// (in order of first appearance, with its best tier), one row per claim;
// a cell is the stance of the claim's strongest passage from the domain,
// empty when the claim has none.
type Matrix struct {
	Domains []MatrixDomain
	Rows    []MatrixRow
}

// MatrixDomain is a column.
type MatrixDomain struct {
	Domain string
	Tier   int
}

// MatrixRow is a claim's row.
type MatrixRow struct {
	Index int
	Text  string
	Cells []MatrixCell
}

// MatrixCell is a claim's stance from one domain.
type MatrixCell struct {
	Stance   string // "" when no passage
	Strength float64
	Passages int
}

// CoverageMatrix builds the matrix of claims.
func CoverageMatrix(claims []serving.AnalysisClaim) Matrix {
	var m Matrix
	col := map[string]int{}
	for _, c := range claims {
		for _, s := range c.Sources {
			i, ok := col[s.Domain]
			if !ok {
				i = len(m.Domains)
				col[s.Domain] = i
				m.Domains = append(m.Domains, MatrixDomain{Domain: s.Domain, Tier: s.Tier})
			}
			if s.Tier < m.Domains[i].Tier {
				m.Domains[i].Tier = s.Tier
			}
		}
	}
	for _, c := range claims {
		row := MatrixRow{Index: c.Index, Text: c.Text, Cells: make([]MatrixCell, len(m.Domains))}
		for _, s := range c.Sources {
			cell := &row.Cells[col[s.Domain]]
			cell.Passages++
			if strength := max(s.Entail, s.Contradict); cell.Stance == "" || strength > cell.Strength {
				cell.Stance, cell.Strength = Stance(s.Entail, s.Contradict, s.Neutral), strength
			}
		}
		m.Rows = append(m.Rows, row)
	}
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// clip keeps the first n characters of s, marking a cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
