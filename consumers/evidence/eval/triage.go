package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/retry"
)

// Check-worthiness subtasks of Factcheck-Bench: the file's records say
// which one it is ("sentence" or "claim" records).
const (
	SubtaskSentence = "sentence" // subtask 1: sentences of a model's answer
	SubtaskClaim    = "claim"    // subtask 2: claims decomposed from them
)

// Labels of each subtask, read from the development files (the dataset's
// README says yes/no for subtask 1; its development file has yes, other,
// opinion and not_a_claim, and "no" is kept for the other splits).
var (
	fcbClaimWorthLabels    = []string{"factual", "opinion", "not_a_claim"}
	fcbSentenceWorthLabels = []string{"yes", "no", "other", "opinion", "not_a_claim"}
	// triageKindOf maps a gold label to the triage kind that agrees with
	// it; "no" and "other" have none (they are only "not check-worthy").
	triageKindOf = map[string]string{"factual": events.TriageFactual, "yes": events.TriageFactual,
		"opinion": events.TriageOpinion, "not_a_claim": events.TriageNotAClaim}
)

// NoClaims is the confusion column of a text the triage found no claim in.
const NoClaims = "none"

// triageColumns are the confusion matrix's columns.
var triageColumns = []string{events.TriageFactual, events.TriageOpinion, events.TriagePrediction, events.TriageNotAClaim, NoClaims}

// TriageItem is one labelled text of a check-worthiness file.
type TriageItem struct {
	ID    string
	Line  int
	Text  string
	Label string
}

// TriageSet is a loaded check-worthiness file.
type TriageSet struct {
	File    string
	Subtask string
	Lines   int
	Items   []TriageItem
	// Labels in table order; Positive is the check-worthy label.
	Labels   []string
	Positive string
}

type fcbWorthRecord struct {
	Claim       *string `json:"claim"`
	Sentence    *string `json:"sentence"`
	Checkworthy string  `json:"checkworthy"`
}

// LoadTriage reads a Factcheck-Bench check-worthiness file (subtask 1 or
// 2, told apart by its first record). Like Load, a line that is not a
// valid record (bad JSON, the other subtask's shape, an unknown label, an
// empty text or a NUL, longer than MaxLineBytes) is an error naming the
// file and line. limit keeps the first N records (0: all).
func LoadTriage(file string, limit int) (*TriageSet, error) {
	if limit < 0 {
		return nil, fmt.Errorf("limit %d is negative", limit)
	}
	f, err := os.Open(file) //nolint:gosec // G304: the operator names the dataset (errata eval --file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return loadTriage(f, file, limit)
}

func loadTriage(r io.Reader, name string, limit int) (*TriageSet, error) {
	set := &TriageSet{File: name}
	lines, err := eachLine(r, name, func(n int, line []byte) error {
		if limit > 0 && len(set.Items) == limit {
			return errStop
		}
		var rec fcbWorthRecord
		if err := decodeLine(line, &rec); err != nil {
			return err
		}
		subtask, field, body := SubtaskClaim, "claim", rec.Claim
		if rec.Claim == nil {
			subtask, field, body = SubtaskSentence, "sentence", rec.Sentence
		}
		switch {
		case rec.Claim != nil && rec.Sentence != nil:
			return errors.New("a record has either claim or sentence, not both")
		case body == nil:
			return errors.New("claim or sentence is missing")
		case set.Subtask == "":
			set.Subtask, set.Labels, set.Positive = subtask, fcbClaimWorthLabels, "factual"
			if subtask == SubtaskSentence {
				set.Labels, set.Positive = fcbSentenceWorthLabels, "yes"
			}
		case set.Subtask != subtask:
			return fmt.Errorf("a %s record in a file of %s records", subtask, set.Subtask)
		}
		if err := errors.Join(text(field, *body), knownLabel("checkworthy", rec.Checkworthy, set.Labels)); err != nil {
			return err
		}
		set.Items = append(set.Items, TriageItem{ID: fmt.Sprintf("line %d", n), Line: n, Text: *body, Label: rec.Checkworthy})
		return nil
	})
	set.Lines = lines
	if err != nil {
		return nil, err
	}
	if len(set.Items) == 0 {
		return nil, fmt.Errorf("%s: no records", name)
	}
	return set, nil
}

// Triager triages one text: the claims it finds, each with its Gate-1
// triage. An error means this text could not be triaged now.
type Triager interface {
	Triage(ctx context.Context, text string) ([]verdict.Extracted, error)
}

// HeuristicTriager is the rule-based baseline (verdict.HeuristicTriage):
// the whole text as one claim. It never fails.
type HeuristicTriager struct{}

// Triage implements Triager.
func (HeuristicTriager) Triage(_ context.Context, text string) ([]verdict.Extracted, error) {
	return []verdict.Extracted{verdict.HeuristicTriage(text)}, nil
}

// ProviderTriager triages with the configured provider: the verdict
// analysis's extraction call (prompt verdict-extract, the text fenced as
// untrusted), exactly as an analysis makes it. An answer DecodeExtraction
// refuses (or the provider finds off-schema) is asked again, up to
// MaxTries calls in all; provider failures are the caller's to retry.
type ProviderTriager struct {
	LLM             llm.Provider
	Cred            llm.Credentials
	Model           string
	ReasoningEffort string
	// MaxTries bounds the calls per text (0: 2).
	MaxTries int
	// Now dates the prompt (nil: time.Now).
	Now func() time.Time
}

// Triage implements Triager.
func (p ProviderTriager) Triage(ctx context.Context, text string) ([]verdict.Extracted, error) {
	tries := p.MaxTries
	if tries <= 0 {
		tries = 2
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	var last error
	for range tries {
		r, err := verdict.ExtractionRequest(nil, text, now(), nil)
		if err != nil {
			return nil, err
		}
		res, err := p.LLM.Create(ctx, p.Cred, r.LLM(p.Model, p.ReasoningEffort, nil))
		if err != nil {
			if le, ok := llm.AsError(err); ok && (le.Kind == llm.KindInvalidOutput || le.Kind == llm.KindRefusal) {
				last = err
				continue
			}
			return nil, err
		}
		claims, err := verdict.DecodeExtraction(res.OutputJSON, verdict.MaxClaims)
		if err == nil {
			return claims, nil
		}
		last = err
	}
	return nil, fmt.Errorf("no usable extraction after %d tries: %w", tries, last)
}

// TriageOptions of a check-worthiness run.
type TriageOptions struct {
	Lane    string
	Triager Triager
	Rubric  verdict.Rubric
	// Parallel, Attempts, Backoff and Progress as in Options.
	Parallel int
	Attempts int
	Backoff  time.Duration
	Progress func(done, total int)
}

// Binary is a two-class measurement: check-worthy (the positive class)
// against not.
type Binary struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
	TN int `json:"tn"`
	// Precision, Recall and F1 of the positive class; NegPrecision and
	// NegRecall of the negative one; Accuracy of both.
	Precision    float64 `json:"precision"`
	Recall       float64 `json:"recall"`
	F1           float64 `json:"f1"`
	NegPrecision float64 `json:"neg_precision"`
	NegRecall    float64 `json:"neg_recall"`
	Accuracy     float64 `json:"accuracy"`
}

func (b *Binary) add(gold, predicted bool) {
	switch {
	case gold && predicted:
		b.TP++
	case gold:
		b.FN++
	case predicted:
		b.FP++
	default:
		b.TN++
	}
}

func (b *Binary) rates() {
	b.Precision = ratio(b.TP, b.TP+b.FP)
	b.Recall = ratio(b.TP, b.TP+b.FN)
	b.F1 = ratio(2*b.TP, 2*b.TP+b.FP+b.FN)
	b.NegPrecision = ratio(b.TN, b.TN+b.FN)
	b.NegRecall = ratio(b.TN, b.TN+b.FP)
	b.Accuracy = ratio(b.TP+b.TN, b.TP+b.TN+b.FP+b.FN)
}

// Class is one gold label measured against the triage kind that agrees
// with it (Kind "" when none does: only its gold count is meaningful).
type Class struct {
	Label     string  `json:"label"`
	Kind      string  `json:"kind"`
	Gold      int     `json:"gold"`
	Predicted int     `json:"predicted"`
	Correct   int     `json:"correct"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// TriageReport is the outcome of a check-worthiness run.
type TriageReport struct {
	Dataset string `json:"dataset"`
	Lane    string `json:"lane"`
	File    string `json:"file"`
	Subtask string `json:"subtask"`
	Lines   int    `json:"lines"`
	// Records read, Evaluated in the metrics, Errors the texts the
	// provider could not triage (left out).
	Records   int `json:"records"`
	Evaluated int `json:"evaluated"`
	Errors    int `json:"errors"`

	Labels   []string `json:"labels"`
	Positive string   `json:"positive_label"`
	// Triage names what was measured: the baseline or the prompt.
	Triage         string  `json:"triage"`
	RubricVersion  string  `json:"rubric_version"`
	MinSpecificity float64 `json:"min_specificity"`
	Model          string  `json:"model,omitempty"`
	PromptVersion  string  `json:"prompt_version,omitempty"`

	// CheckWorthy: predicted check-worthy when Gate 1 passes for a claim
	// of the text (FACTUAL, specificity ≥ the rubric's minimum);
	// FactualKind: when any claim is FACTUAL, whatever its specificity.
	CheckWorthy Binary  `json:"check_worthy"`
	FactualKind Binary  `json:"factual_kind"`
	Classes     []Class `json:"classes"`
	// Confusion: gold label → the text's triage kind (the most factual
	// of its claims' kinds, or NoClaims) → texts.
	Confusion map[string]map[string]int `json:"confusion"`
	// NoClaims and Split count the texts in which no claim, or several,
	// were found.
	NoClaims int `json:"no_claims"`
	Split    int `json:"split"`

	Tokens  Tokens   `json:"tokens"`
	CostUSD *float64 `json:"cost_usd"`
	Price   *Price   `json:"price,omitempty"`

	Assumptions []string `json:"assumptions"`
}

// kindRank orders kinds from the most factual: a text's kind is its most
// factual claim's.
var kindRank = map[string]int{events.TriageFactual: 0, events.TriagePrediction: 1, events.TriageOpinion: 2, events.TriageNotAClaim: 3}

// triageOutcome is the triage of one text.
type triageOutcome struct {
	done        bool
	kind        string
	claims      int
	checkWorthy bool
	factual     bool
}

// EvaluateTriage triages every text of set and measures it against the
// gold labels.
func EvaluateTriage(ctx context.Context, set *TriageSet, opts TriageOptions) (*TriageReport, error) {
	if err := opts.Rubric.Validate(); err != nil {
		return nil, fmt.Errorf("rubric: %w", err)
	}
	if opts.Lane != LaneGold && opts.Lane != LaneProvider {
		return nil, fmt.Errorf("lane %q is unknown (known: %s, %s)", opts.Lane, LaneGold, LaneProvider)
	}
	if opts.Triager == nil {
		return nil, errors.New("no triager")
	}
	outcomes := make([]triageOutcome, len(set.Items))
	parallel := opts.Parallel
	switch {
	case opts.Lane == LaneGold:
		parallel = 1 // the baseline is instant
	case parallel <= 0:
		parallel = 4
	}
	attempts := max(opts.Attempts, 0)
	if attempts == 0 {
		attempts = 2
	}
	backoff := opts.Backoff
	if backoff <= 0 {
		backoff = 2 * time.Second
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	var done int
	var lastErr error
	work := make(chan int)
	var wg sync.WaitGroup
	for range parallel {
		wg.Go(func() {
			for i := range work {
				claims, err := triageText(ctx, opts.Triager, set.Items[i].Text, attempts, backoff)
				mu.Lock()
				if err != nil {
					lastErr = err
					var le *llm.Error
					if errors.As(err, &le) && !le.Retryable() {
						cancel(fmt.Errorf("provider lane: %s: %w", set.Items[i].ID, err))
					}
				} else {
					outcomes[i] = judgeTriage(opts.Rubric, claims)
				}
				done++
				if opts.Progress != nil {
					opts.Progress(done, len(set.Items))
				}
				mu.Unlock()
			}
		})
	}
feed:
	for i := range set.Items {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	rep := summarizeTriage(set, opts, outcomes)
	if rep.Evaluated == 0 {
		return nil, fmt.Errorf("no text could be triaged: %w", lastErr)
	}
	return rep, nil
}

// triageText asks the triager, retrying failures the provider calls
// transient with growing waits (see pause).
func triageText(ctx context.Context, tr Triager, text string, attempts int, backoff time.Duration) ([]verdict.Extracted, error) {
	for n := 1; ; n++ {
		claims, err := tr.Triage(ctx, text)
		if err == nil {
			return claims, nil
		}
		var le *llm.Error
		if n >= attempts || ctx.Err() != nil || (errors.As(err, &le) && !le.Retryable()) {
			return nil, err
		}
		if retry.Sleep(ctx, pause(backoff, n, le)) != nil {
			return nil, err
		}
	}
}

// judgeTriage reduces a text's claims to its outcome: check-worthy when
// Gate 1 passes for any claim, its kind the most factual of theirs.
func judgeTriage(r verdict.Rubric, claims []verdict.Extracted) triageOutcome {
	o := triageOutcome{done: true, kind: NoClaims, claims: len(claims)}
	for _, c := range claims {
		if ok, _ := r.Researched(c); ok {
			o.checkWorthy = true
		}
		if c.Kind == events.TriageFactual {
			o.factual = true
		}
		if rank, known := kindRank[c.Kind]; known && (o.kind == NoClaims || rank < kindRank[o.kind]) {
			o.kind = c.Kind
		}
	}
	return o
}

func summarizeTriage(set *TriageSet, opts TriageOptions, outcomes []triageOutcome) *TriageReport {
	r := &TriageReport{Dataset: FCBCheckworthiness, Lane: opts.Lane, File: set.File, Subtask: set.Subtask, Lines: set.Lines,
		Records: len(set.Items), Labels: set.Labels, Positive: set.Positive, RubricVersion: opts.Rubric.Version(),
		MinSpecificity: opts.Rubric.MinSpecificity, Confusion: map[string]map[string]int{}}
	var zero float64
	r.CostUSD = &zero
	for _, l := range set.Labels {
		r.Confusion[l] = map[string]int{}
		for _, k := range triageColumns {
			r.Confusion[l][k] = 0
		}
	}
	classes := map[string]*Class{}
	for _, l := range set.Labels {
		classes[l] = &Class{Label: l, Kind: triageKindOf[l]}
	}
	for i, o := range outcomes {
		if !o.done {
			r.Errors++
			continue
		}
		r.Evaluated++
		label := set.Items[i].Label
		gold := label == set.Positive
		r.CheckWorthy.add(gold, o.checkWorthy)
		r.FactualKind.add(gold, o.factual)
		r.Confusion[label][o.kind]++
		switch {
		case o.claims == 0:
			r.NoClaims++
		case o.claims > 1:
			r.Split++
		}
		c := classes[label]
		c.Gold++
		for _, other := range classes {
			if other.Kind != "" && other.Kind == o.kind {
				other.Predicted++
				if other == c {
					c.Correct++
				}
			}
		}
	}
	r.CheckWorthy.rates()
	r.FactualKind.rates()
	for _, l := range set.Labels {
		c := classes[l]
		if c.Kind != "" {
			c.Precision, c.Recall = ratio(c.Correct, c.Predicted), ratio(c.Correct, c.Gold)
			c.F1 = ratio(2*c.Correct, c.Predicted+c.Gold)
		}
		r.Classes = append(r.Classes, *c)
	}
	r.Assumptions = triageAssumptions(set, opts)
	return r
}

func triageAssumptions(set *TriageSet, opts TriageOptions) []string {
	var out []string
	switch opts.Lane {
	case LaneGold:
		out = append(out, "gold lane: no LLM is called; this measures verdict.HeuristicTriage, the rule-based Gate-1 baseline an analysis "+
			"falls back on, NOT the model's triage (run --lane provider for that); the gold labels are only compared against")
	case LaneProvider:
		out = append(out, "provider lane: each text is sent alone through the verdict analysis's extraction and triage call "+
			"(prompt verdict-extract, the text fenced as untrusted data), as an analysis would send a whole post")
	}
	positive := "factual"
	negatives := "opinion, not_a_claim"
	if set.Subtask == SubtaskSentence {
		positive, negatives = "yes", "no, other, opinion, not_a_claim"
	}
	out = append(out,
		fmt.Sprintf("check-worthy = gold %s; not check-worthy = %s (labels as found in the file: the README lists yes/no for subtask 1, "+
			"whose development file has yes, other, opinion and not_a_claim)", positive, negatives),
		fmt.Sprintf("predicted check-worthy = Gate 1 passes for some claim of the text: kind FACTUAL and specificity ≥ %.2f (%s); "+
			"\"kind FACTUAL\" ignores the specificity", opts.Rubric.MinSpecificity, opts.Rubric.Version()),
		"a text split into several claims takes the most factual kind among them (FACTUAL, PREDICTION, OPINION, NOT_A_CLAIM); "+
			"one with no claim is \"none\", counted as not check-worthy and as no kind",
		"per class: factual/yes ↔ FACTUAL, opinion ↔ OPINION, not_a_claim ↔ NOT_A_CLAIM; other, no and PREDICTION have no counterpart "+
			"(they count only as wrong predictions or misses)",
	)
	return out
}

// WriteText prints the report as errata eval shows it.
func (r *TriageReport) WriteText(w io.Writer) error {
	var b strings.Builder
	lane := "gold lane: the rule-based baseline verdict.HeuristicTriage (no LLM)"
	if r.Lane == LaneProvider {
		lane = "provider lane: the verdict-extract prompt"
	}
	fmt.Fprintf(&b, "errata eval: %s, %s\n", r.Dataset, lane)
	fmt.Fprintf(&b, "file      %s (%d lines, %s records)\n", r.File, r.Lines, r.Subtask)
	fmt.Fprintf(&b, "rubric    %s (Gate 1: FACTUAL and specificity ≥ %.2f)\n", r.RubricVersion, r.MinSpecificity)
	if r.Model != "" {
		fmt.Fprintf(&b, "model     %s (prompt %s)\n", r.Model, r.PromptVersion)
	}
	fmt.Fprintf(&b, "texts     %d read, %d evaluated", r.Records, r.Evaluated)
	if r.Errors > 0 {
		fmt.Fprintf(&b, ", %d not triaged (provider errors)", r.Errors)
	}
	fmt.Fprintf(&b, "; %d split into several claims, %d with no claim\n", r.Split, r.NoClaims)
	b.WriteString("assumptions\n")
	for _, a := range r.Assumptions {
		fmt.Fprintf(&b, "  - %s\n", a)
	}

	c := r.CheckWorthy
	fmt.Fprintf(&b, "\ncheck-worthy = %s: %d texts; not: %d\n", r.Positive, c.TP+c.FN, c.FP+c.TN)
	tw := newTable(&b)
	fmt.Fprintf(tw, "\tpredicted check-worthy\tnot\t\n")
	fmt.Fprintf(tw, "check-worthy\t%d\t%d\t\n", c.TP, c.FN)
	fmt.Fprintf(tw, "not\t%d\t%d\t\n", c.FP, c.TN)
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n")
	tw = newTable(&b)
	fmt.Fprintf(tw, "\tprecision\trecall\tF1\t\n")
	fmt.Fprintf(tw, "check-worthy (Gate 1 passes)\t%.4f\t%.4f\t%.4f\t\n", c.Precision, c.Recall, c.F1)
	fmt.Fprintf(tw, "not check-worthy\t%.4f\t%.4f\t%.4f\t\n", c.NegPrecision, c.NegRecall, ratio(2*c.TN, 2*c.TN+c.FN+c.FP))
	f := r.FactualKind
	fmt.Fprintf(tw, "kind FACTUAL (any specificity)\t%.4f\t%.4f\t%.4f\t\n", f.Precision, f.Recall, f.F1)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "accuracy  %.4f (Gate 1), %.4f (kind FACTUAL)\n", c.Accuracy, f.Accuracy)

	b.WriteString("\nper class (gold label ↔ triage kind)\n")
	tw = newTable(&b)
	fmt.Fprintf(tw, "gold label\tkind\tgold\tpredicted\tcorrect\tprecision\trecall\tF1\t\n")
	for _, cl := range r.Classes {
		if cl.Kind == "" {
			fmt.Fprintf(tw, "%s\t-\t%d\t-\t-\t-\t-\t-\t\n", cl.Label, cl.Gold)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t\n", cl.Label, cl.Kind, cl.Gold, cl.Predicted, cl.Correct, cl.Precision, cl.Recall, cl.F1)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	b.WriteString("\nconfusion (gold label → triage kind)\n")
	tw = newTable(&b)
	fmt.Fprintf(tw, "gold label\t%s\t\n", strings.Join(triageColumns, "\t"))
	for _, l := range r.Labels {
		fmt.Fprintf(tw, "%s", l)
		for _, k := range triageColumns {
			fmt.Fprintf(tw, "\t%d", r.Confusion[l][k])
		}
		fmt.Fprintf(tw, "\t\n")
	}
	if err := tw.Flush(); err != nil {
		return err
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

func newTable(b *strings.Builder) *tabwriter.Writer {
	return tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
}
