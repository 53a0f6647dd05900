package eval

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Counts are the numbers every rate of a Report is computed from.
type Counts struct {
	// TP: incorrect and flagged; FP: not false and flagged; FN: incorrect
	// and not flagged; TN: not false and not flagged.
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
	TN int `json:"tn"`
	// Positives are the incorrect claims evaluated, Negatives the others.
	Positives int `json:"positives"`
	Negatives int `json:"negatives"`
	Flagged   int `json:"flagged"`
	// Definite claims got SUPPORTED or REFUTED (coverage's numerator).
	Definite int `json:"definite"`
	// RefutedPositives are the incorrect claims the engine found REFUTED,
	// flagged or not: what recall could reach if no publish rule withheld.
	RefutedPositives int `json:"refuted_positives"`
}

// Disputed is how the claims that should come out Contested did.
type Disputed struct {
	// Label is the dataset's disputed label ("" when it has none).
	Label    string         `json:"label"`
	Claims   int            `json:"claims"`
	Verdicts map[string]int `json:"verdicts"`
	Flagged  int            `json:"flagged"`
}

// RuleCost is what one publish rule costs in recall: the incorrect claims
// the engine found REFUTED that it withheld alone or among other rules.
type RuleCost struct {
	Rule       string `json:"rule"`
	Alone      int    `json:"alone"`
	WithOthers int    `json:"with_others"`
	// RecallIfDropped is the recall had this rule alone been dropped.
	RecallIfDropped float64 `json:"recall_if_dropped"`
}

// Tokens the provider reported, summed over every call.
type Tokens struct {
	Calls       int   `json:"calls"`
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	Output      int64 `json:"output"`
	Reasoning   int64 `json:"reasoning"`
	Total       int64 `json:"total"`
}

// Price is what the run's tokens were priced at, in US dollars per
// million tokens, and where that price came from.
type Price struct {
	Model       string  `json:"model"`
	Input       float64 `json:"input_per_million"`
	CachedInput float64 `json:"cached_input_per_million"`
	Output      float64 `json:"output_per_million"`
	Source      string  `json:"source"`
}

// Report is the outcome of a run: errata eval prints it as a table, or as
// this JSON object (--json, --out) so runs can be compared across prompt
// and policy versions.
type Report struct {
	Dataset      string `json:"dataset"`
	Lane         string `json:"lane"`
	File         string `json:"file"`
	EvidenceFile string `json:"evidence_file,omitempty"`
	Lines        int    `json:"lines"`
	// Records are the claims read (after --limit); Evaluated those in the
	// metrics; NotCovered had no evidence, StanceErrors could not be judged
	// by the provider.
	Records      int            `json:"records"`
	Evaluated    int            `json:"evaluated"`
	NotCovered   int            `json:"not_covered"`
	NotCoveredBy map[string]int `json:"not_covered_by_label"`
	StanceErrors int            `json:"stance_errors"`
	// StanceNotes counts passages the provider answered unusably, counted
	// neutral.
	StanceNotes int `json:"stance_notes"`
	// Labels are the dataset's claim labels in table order.
	Labels        []string `json:"labels"`
	PositiveLabel string   `json:"positive_label"`
	Counts        Counts   `json:"counts"`

	Precision         float64 `json:"precision"`
	Recall            float64 `json:"recall"`
	F1                float64 `json:"f1"`
	FalsePositiveRate float64 `json:"false_positive_rate"`
	Coverage          float64 `json:"coverage"`
	// RecallCeiling is the recall the verdicts allow before the publish
	// rule withholds anything.
	RecallCeiling float64 `json:"recall_ceiling"`

	PolicyName      string `json:"policy"`
	PolicyVersion   string `json:"policy_version"`
	RegistryVersion string `json:"registry_version,omitempty"`
	AssumedTier     int    `json:"assumed_tier"`
	Model           string `json:"model,omitempty"`
	PromptVersion   string `json:"prompt_version,omitempty"`

	// Confusion: gold label → engine verdict → claims.
	Confusion map[string]map[string]int `json:"confusion"`
	// FlaggedByLabel: gold label → claims that would be flagged inline.
	FlaggedByLabel map[string]int `json:"flagged_by_label"`
	Disputed       Disputed       `json:"disputed"`
	// FalsePositives are the ids of the claims flagged that are not false
	// (the dataset's claim id, or "line N").
	FalsePositives []string   `json:"false_positives"`
	RuleCosts      []RuleCost `json:"rule_costs"`
	// WithheldByRules: the failing rules, joined by "+", of each incorrect
	// claim the engine found REFUTED but withheld → claims. Rules that
	// always fail together show here as one row.
	WithheldByRules map[string]int `json:"withheld_by_rules"`

	Tokens Tokens `json:"tokens"`
	// CostUSD is null when the model has no price.
	CostUSD *float64 `json:"cost_usd"`
	Price   *Price   `json:"price,omitempty"`

	Assumptions []string `json:"assumptions"`
}

// Cost prices tokens: input (cached input at its own price), output and
// reasoning (billed as output, and already part of output) per million.
func Cost(t Tokens, p Price) float64 {
	uncached := t.Input - t.CachedInput
	return (float64(uncached)*p.Input + float64(t.CachedInput)*p.CachedInput + float64(t.Output)*p.Output) / 1e6
}

var laneNames = map[string]string{LaneGold: "gold-evidence lane (no LLM)", LaneProvider: "provider lane"}

// WriteText prints the report as the table errata eval shows.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	c := r.Counts
	fmt.Fprintf(&b, "errata eval: %s, %s\n", r.Dataset, laneNames[r.Lane])
	if r.EvidenceFile == "" {
		fmt.Fprintf(&b, "file      %s (%d lines)\n", r.File, r.Lines)
	} else {
		fmt.Fprintf(&b, "file      %s\nevidence  %s (%d lines in both)\n", r.File, r.EvidenceFile, r.Lines)
	}
	fmt.Fprintf(&b, "policy    %s\n", r.PolicyVersion)
	if r.RegistryVersion != "" {
		fmt.Fprintf(&b, "registry  %s\n", r.RegistryVersion)
	}
	if r.Model != "" {
		fmt.Fprintf(&b, "model     %s", r.Model)
		if r.PromptVersion != "" {
			fmt.Fprintf(&b, " (stance prompt %s)", r.PromptVersion)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "claims    %d read, %d evaluated", r.Records, r.Evaluated)
	if r.NotCovered > 0 {
		fmt.Fprintf(&b, ", %d not covered (no evidence: %s)", r.NotCovered, labelCounts(r.NotCoveredBy))
	}
	if r.StanceErrors > 0 {
		fmt.Fprintf(&b, ", %d not judged (provider errors)", r.StanceErrors)
	}
	b.WriteString("\n")
	if r.StanceNotes > 0 {
		fmt.Fprintf(&b, "          %d passages answered unusably by the provider counted neutral\n", r.StanceNotes)
	}
	b.WriteString("assumptions\n")
	for _, a := range r.Assumptions {
		fmt.Fprintf(&b, "  - %s\n", a)
	}

	fmt.Fprintf(&b, "\nincorrect = %s: %d claims; not false: %d\n", r.PositiveLabel, c.Positives, c.Negatives)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tflagged\tnot flagged\t\n")
	fmt.Fprintf(tw, "incorrect\t%d\t%d\t\n", c.TP, c.FN)
	fmt.Fprintf(tw, "not false\t%d\t%d\t\n", c.FP, c.TN)
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "precision            %.4f  (%d of %d flagged claims are incorrect)\n", r.Precision, c.TP, c.Flagged)
	fmt.Fprintf(&b, "recall               %.4f  (%d of %d incorrect claims flagged)\n", r.Recall, c.TP, c.Positives)
	fmt.Fprintf(&b, "F1                   %.4f\n", r.F1)
	fmt.Fprintf(&b, "false-positive rate  %.4f  (%d of %d not-false claims flagged; target ≤ 0.02)\n", r.FalsePositiveRate, c.FP, c.Negatives)
	fmt.Fprintf(&b, "coverage             %.4f  (%d of %d claims SUPPORTED or REFUTED)\n", r.Coverage, c.Definite, r.Evaluated)
	if n := len(r.FalsePositives); n > 0 {
		shown := r.FalsePositives[:min(n, 10)]
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(" and %d more (--json)", n-len(shown))
		}
		fmt.Fprintf(&b, "false positives      %s%s\n", strings.Join(shown, ", "), more)
	}

	b.WriteString("\nconfusion (gold label → engine verdict)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "gold label\t%s\tflagged\t\n", strings.Join(verdicts, "\t"))
	for _, l := range r.Labels {
		fmt.Fprintf(tw, "%s", l)
		for _, v := range verdicts {
			fmt.Fprintf(tw, "\t%d", r.Confusion[l][v])
		}
		fmt.Fprintf(tw, "\t%d\t\n", r.FlaggedByLabel[l])
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if r.Disputed.Label == "" {
		b.WriteString("\ndisputed claims: this dataset has no disputed label\n")
	} else {
		d := r.Disputed
		fmt.Fprintf(&b, "\n%s claims (should come out CONTESTED, never flagged): %d;", d.Label, d.Claims)
		for _, v := range verdicts {
			fmt.Fprintf(&b, " %s %d,", v, d.Verdicts[v])
		}
		fmt.Fprintf(&b, " flagged %d\n", d.Flagged)
	}

	fmt.Fprintf(&b, "\nwhat each publish rule costs in recall: %d of %d incorrect claims were found REFUTED (recall ceiling %.4f); %d flagged, %d withheld\n",
		c.RefutedPositives, c.Positives, r.RecallCeiling, c.TP, c.RefutedPositives-c.TP)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "rule\twithheld alone\twith others\trecall if dropped\t\n")
	for _, rc := range r.RuleCosts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t\n", rc.Rule, rc.Alone, rc.WithOthers, rc.RecallIfDropped)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.WithheldByRules) > 0 {
		fmt.Fprintf(&b, "withheld by exactly these rules: %s\n", labelCounts(r.WithheldByRules))
	}

	t := r.Tokens
	fmt.Fprintf(&b, "\ntokens    %d calls, %d input (%d cached), %d output (%d reasoning), %d total\n",
		t.Calls, t.Input, t.CachedInput, t.Output, t.Reasoning, t.Total)
	switch {
	case r.CostUSD == nil:
		fmt.Fprintf(&b, "cost      unknown: model %q has no price (ERRATA_LLM_PRICES, or --price-in and --price-out)\n", r.Model)
	case r.Price != nil:
		fmt.Fprintf(&b, "cost      $%.4f (%s: $%g input, $%g cached input, $%g output per million tokens)\n",
			*r.CostUSD, r.Price.Source, r.Price.Input, r.Price.CachedInput, r.Price.Output)
	default:
		fmt.Fprintf(&b, "cost      $%.4f\n", *r.CostUSD)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// labelCounts renders "true 3, false 1" in the report's label order.
func labelCounts(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
