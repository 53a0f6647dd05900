package eval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/errata-dev/errata/consumers/evidence"
)

// Datasets errata eval reads (../shared/datasets/README.md).
const (
	ClimateFever       = "climate-fever"
	FCBStance          = "fcb-stance"
	FCBFactuality      = "fcb-factuality"
	FCBCheckworthiness = "fcb-checkworthiness"
)

// Datasets lists them in the order the command documents them.
var Datasets = []string{ClimateFever, FCBStance, FCBFactuality, FCBCheckworthiness}

// ErrTriageDataset is Load's answer for the check-worthiness files: they
// measure Gate-1 triage, not the evidence engine (LoadTriage reads them).
var ErrTriageDataset = errors.New("fcb-checkworthiness measures triage, not the evidence engine: read it with LoadTriage")

// MaxLineBytes bounds one dataset line. The largest record of the
// development files is about 4 KB; a longer line is refused, never
// buffered without limit.
const MaxLineBytes = 256 << 10

// DefaultAssumedTier is the tier of a Factcheck-Bench passage, whose
// source is unknown (the passages carry no URL): tier 2, like the
// encyclopedia CLIMATE-FEVER quotes, so the two datasets meet the same
// publish rule.
const DefaultAssumedTier = 2

// Claim labels of each dataset, in table order. Every record's label must
// be one of them: an unknown label is an error naming the line, never a
// silent reclassification.
var (
	climateFeverLabels = []string{"SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO", "DISPUTED"}
	// The factuality file also labels 25 development claims
	// not_enough_evidence, a value the dataset's README does not list; they
	// are not false.
	fcbFactualityLabels = []string{"true", "false", "not_enough_evidence"}
	// fcb-stance has no claim label: it is derived from the passages'
	// stance labels (fcbStanceClaimLabel).
	fcbStanceClaimLabels = []string{labelSupport, labelRefute, labelRefuteSupport, labelIrrelevant}
)

// Derived claim labels of fcb-stance.
const (
	labelSupport       = "support"         // some support (complete or partial), no refute
	labelRefute        = "refute"          // a refute, no complete support
	labelRefuteSupport = "refute+support"  // a refute and a complete support: the contested case
	labelIrrelevant    = "irrelevant-only" // nothing but irrelevant passages
)

// Gold evidence labels as stance inputs.
var (
	climateFeverStance = map[string]evidence.Stance{
		"SUPPORTS":        {Entail: 1},
		"REFUTES":         {Contradict: 1},
		"NOT_ENOUGH_INFO": {Neutral: 1},
	}
	// partially-support is entail 0.6, neutral 0.4: the passage backs part
	// of the claim, so it reaches the agreement threshold (0.6: it counts
	// as a supporting source for agree_dom and Gate 4) and the support that
	// blocks a flag (0.5: doubt withholds), but stays below the 0.7 that
	// Supported and Contested need, because backing part of a claim does
	// not establish the whole of it.
	fcbStance = map[string]evidence.Stance{
		"completely-support": {Entail: 1},
		"partially-support":  {Entail: 0.6, Neutral: 0.4},
		"refute":             {Contradict: 1},
		"irrelevant":         {Neutral: 1},
	}
)

// Gold is one evidence passage of a claim, with its source as this
// evaluation assumes it.
type Gold struct {
	// Text is what a provider's stance judges (provider lane).
	Text string
	// Label is the dataset's stance label; Stance its mapping (gold lane).
	Label  string
	Stance evidence.Stance
	// Domain is the unit of independence, URL the source's address (empty
	// when the dataset has none), Tier and Rule the assumed tier and why.
	Domain string
	URL    string
	Tier   int
	Rule   string
}

// Item is one labelled claim with its evidence.
type Item struct {
	// ID is the dataset's claim id, or "line N" when it has none.
	ID       string
	Line     int
	Text     string
	Label    string
	Evidence []Gold
}

// Set is a loaded dataset: its claims, what counts as incorrect, and every
// assumption the loading made.
type Set struct {
	Dataset      string
	File         string
	EvidenceFile string
	// Lines is the number of lines read (every file of the dataset).
	Lines int
	// Items are the claims with evidence, in file order.
	Items []Item
	// NotCovered counts, by label, the claims that have no evidence to
	// assess (fcb-factuality claims absent from the stance file).
	NotCovered map[string]int
	// Labels are the claim labels in table order; Positive is the label of
	// an incorrect claim; Disputed the label that should come out
	// Contested ("" when the dataset has none).
	Labels   []string
	Positive string
	Disputed string
	// DuplicatePassages counts identical (passage, label) pairs of one
	// claim counted once; NULPassages the passages NUL was removed from.
	DuplicatePassages int
	NULPassages       int
	// AssumedTier is the tier every source of the dataset is given.
	AssumedTier int
	Assumptions []string
}

// LoadOptions tune Load.
type LoadOptions struct {
	// Limit keeps the first N claims (0: all).
	Limit int
	// AssumedTier is the tier of a Factcheck-Bench passage (0:
	// DefaultAssumedTier). CLIMATE-FEVER's sources are always tier 2.
	AssumedTier int
	// EvidenceFile is the stance file fcb-factuality takes its evidence
	// from ("": DefaultEvidenceFile of the factuality file).
	EvidenceFile string
}

// DefaultEvidenceFile is the stance file beside a factuality file: the
// same name with subtask4_claim_factuality replaced by
// subtask3_claim_evidence_stance, or the development file's name in the
// same directory.
func DefaultEvidenceFile(factualityFile string) string {
	dir, base := filepath.Split(factualityFile)
	if strings.Contains(base, "subtask4_claim_factuality") {
		return filepath.Join(dir, strings.Replace(base, "subtask4_claim_factuality", "subtask3_claim_evidence_stance", 1))
	}
	return filepath.Join(dir, "factcheck-bench.subtask3_claim_evidence_stance.dev.jsonl")
}

// Load reads a dataset file. A line that is not a valid record of the
// dataset (bad JSON, an unknown label, no evidence, an empty text, a NUL,
// longer than MaxLineBytes) is an error naming the file and line: a
// measurement never drops records silently, so fix the file or cut it.
// Blank lines are ignored.
func Load(dataset, file string, opts LoadOptions) (*Set, error) {
	if opts.Limit < 0 {
		return nil, fmt.Errorf("limit %d is negative", opts.Limit)
	}
	tier := opts.AssumedTier
	if tier == 0 {
		tier = DefaultAssumedTier
	}
	if tier < 1 || tier > 5 {
		return nil, fmt.Errorf("assumed tier %d is not a tier (1-5)", tier)
	}
	switch dataset {
	case ClimateFever:
		return readFile(file, func(r io.Reader) (*Set, error) { return loadClimateFever(r, file, opts.Limit) })
	case FCBStance:
		return readFile(file, func(r io.Reader) (*Set, error) { return loadFCBStance(r, file, opts.Limit, tier) })
	case FCBFactuality:
		ev := opts.EvidenceFile
		if ev == "" {
			ev = DefaultEvidenceFile(file)
		}
		stance, err := readFile(ev, func(r io.Reader) (*Set, error) { return loadFCBStance(r, ev, 0, tier) })
		if err != nil {
			return nil, fmt.Errorf("fcb-factuality evidence: %w", err)
		}
		return readFile(file, func(r io.Reader) (*Set, error) { return loadFCBFactuality(r, file, opts.Limit, stance) })
	case FCBCheckworthiness:
		return nil, ErrTriageDataset
	default:
		return nil, fmt.Errorf("dataset %q is unknown (known: %s)", dataset, strings.Join(Datasets, ", "))
	}
}

func readFile(name string, load func(io.Reader) (*Set, error)) (*Set, error) {
	f, err := os.Open(name) //nolint:gosec // G304: the operator names the dataset (errata eval --file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return load(f)
}

// errStop ends eachLine early (the limit is reached).
var errStop = errors.New("stop")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// eachLine calls fn with every non-blank line and its 1-based number, and
// returns the number of lines read. An error of fn is returned naming the
// file and line.
func eachLine(r io.Reader, name string, fn func(n int, line []byte) error) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			if errors.Is(err, errStop) {
				return n, nil
			}
			return n, fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return n, fmt.Errorf("%s:%d: line longer than %d bytes", name, n+1, MaxLineBytes)
		}
		return n, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// decodeLine decodes one JSON record, refusing trailing data.
func decodeLine(line []byte, v any) error {
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("not a JSON record: %w", err)
	}
	return nil
}

// passageText removes NUL (U+0000) from a passage: web passages scraped
// from UTF-16 pages carry one between every character (two development
// passages of Factcheck-Bench do), and it means nothing. It reports
// whether any was removed; a claim with a NUL is still refused.
func passageText(s string) (string, bool) {
	if !strings.ContainsRune(s, 0) {
		return s, false
	}
	return strings.ReplaceAll(s, "\x00", ""), true
}

// text checks a required string: present, not blank, no NUL.
func text(field, s string) error {
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("%s is empty", field)
	}
	if strings.ContainsRune(s, 0) {
		return fmt.Errorf("%s contains NUL (U+0000)", field)
	}
	return nil
}

func knownLabel(field, label string, known []string) error {
	if !slices.Contains(known, label) {
		return fmt.Errorf("%s %q is unknown (known: %s)", field, label, strings.Join(known, ", "))
	}
	return nil
}

type climateFeverRecord struct {
	ClaimID   string                 `json:"claim_id"`
	Claim     string                 `json:"claim"`
	Label     string                 `json:"claim_label"`
	Evidences []climateFeverEvidence `json:"evidences"`
}

type climateFeverEvidence struct {
	ID       string `json:"evidence_id"`
	Label    string `json:"evidence_label"`
	Article  string `json:"article"`
	Evidence string `json:"evidence"`
}

// wikipediaURL is the English Wikipedia address of an article title.
func wikipediaURL(article string) string {
	return "https://en.wikipedia.org/wiki/" + url.PathEscape(strings.ReplaceAll(article, " ", "_"))
}

func loadClimateFever(r io.Reader, name string, limit int) (*Set, error) {
	set := &Set{Dataset: ClimateFever, File: name, Labels: climateFeverLabels, Positive: "REFUTES", Disputed: "DISPUTED",
		NotCovered: map[string]int{}, AssumedTier: 2}
	lines, err := eachLine(r, name, func(n int, line []byte) error {
		if limit > 0 && len(set.Items) == limit {
			return errStop
		}
		var rec climateFeverRecord
		if err := decodeLine(line, &rec); err != nil {
			return err
		}
		if err := errors.Join(text("claim_id", rec.ClaimID), text("claim", rec.Claim),
			knownLabel("claim_label", rec.Label, climateFeverLabels)); err != nil {
			return err
		}
		if len(rec.Evidences) == 0 {
			return errors.New("evidences are missing")
		}
		item := Item{ID: rec.ClaimID, Line: n, Text: rec.Claim, Label: rec.Label}
		for i, ev := range rec.Evidences {
			field := fmt.Sprintf("evidences[%d]", i)
			var nul bool
			if ev.Evidence, nul = passageText(ev.Evidence); nul {
				set.NULPassages++
			}
			if err := errors.Join(text(field+".article", ev.Article), text(field+".evidence", ev.Evidence),
				knownLabel(field+".evidence_label", ev.Label, slices.Sorted(maps.Keys(climateFeverStance)))); err != nil {
				return err
			}
			item.Evidence = append(item.Evidence, Gold{
				Text:   ev.Article + ": " + ev.Evidence,
				Label:  ev.Label,
				Stance: climateFeverStance[ev.Label],
				Domain: "wikipedia:" + ev.Article,
				URL:    wikipediaURL(ev.Article),
				Tier:   2,
				Rule:   "eval: each Wikipedia article an independent tier-2 source",
			})
		}
		set.Items = append(set.Items, item)
		return nil
	})
	set.Lines = lines
	if err != nil {
		return nil, err
	}
	set.Assumptions = []string{
		"CLIMATE-FEVER's evidence all comes from one encyclopedia (Wikipedia): each distinct article counts as an independent tier-2 source " +
			"(domain = the article, URL = its en.wikipedia.org address), which overstates the independence of the sources",
		"positive class (incorrect): REFUTES; not false: SUPPORTS, NOT_ENOUGH_INFO, DISPUTED",
	}
	return set, nil
}

type fcbStanceRecord struct {
	Claim    string `json:"claim"`
	Evidence string `json:"evidence"`
	Stance   string `json:"stance"`
}

// passageSource names a Factcheck-Bench passage, which has no URL: each
// distinct passage text is its own source.
func passageSource(passage string) string {
	sum := sha256.Sum256([]byte(passage))
	return "fcb-passage:" + hex.EncodeToString(sum[:8])
}

// fcbStanceClaimLabel derives a claim's label from its passages' labels.
func fcbStanceClaimLabel(ev []Gold) string {
	var refute, complete, partial bool
	for _, g := range ev {
		switch g.Label {
		case "refute":
			refute = true
		case "completely-support":
			complete = true
		case "partially-support":
			partial = true
		}
	}
	switch {
	case refute && complete:
		return labelRefuteSupport
	case refute:
		return labelRefute
	case complete || partial:
		return labelSupport
	default:
		return labelIrrelevant
	}
}

// loadFCBStance groups the (claim, passage, stance) pairs by exact claim
// text, in order of first appearance, and keeps the first limit claims.
func loadFCBStance(r io.Reader, name string, limit, tier int) (*Set, error) {
	set := &Set{Dataset: FCBStance, File: name, Labels: fcbStanceClaimLabels, Positive: labelRefute, Disputed: labelRefuteSupport,
		NotCovered: map[string]int{}, AssumedTier: tier}
	index := map[string]int{}
	seen := map[[2]string]bool{}
	stanceLabels := slices.Sorted(maps.Keys(fcbStance))
	lines, err := eachLine(r, name, func(n int, line []byte) error {
		var rec fcbStanceRecord
		if err := decodeLine(line, &rec); err != nil {
			return err
		}
		var nul bool
		if rec.Evidence, nul = passageText(rec.Evidence); nul {
			set.NULPassages++
		}
		if err := errors.Join(text("claim", rec.Claim), text("evidence", rec.Evidence),
			knownLabel("stance", rec.Stance, stanceLabels)); err != nil {
			return err
		}
		i, ok := index[rec.Claim]
		if !ok {
			i = len(set.Items)
			index[rec.Claim] = i
			set.Items = append(set.Items, Item{ID: fmt.Sprintf("line %d", n), Line: n, Text: rec.Claim})
		}
		key := [2]string{rec.Claim, rec.Evidence + "\x00" + rec.Stance}
		if seen[key] {
			set.DuplicatePassages++
			return nil
		}
		seen[key] = true
		set.Items[i].Evidence = append(set.Items[i].Evidence, Gold{
			Text:   rec.Evidence,
			Label:  rec.Stance,
			Stance: fcbStance[rec.Stance],
			Domain: passageSource(rec.Evidence),
			Tier:   tier,
			Rule:   fmt.Sprintf("eval: each distinct Factcheck-Bench passage an independent source of assumed tier %d", tier),
		})
		return nil
	})
	set.Lines = lines
	if err != nil {
		return nil, err
	}
	for i := range set.Items {
		set.Items[i].Label = fcbStanceClaimLabel(set.Items[i].Evidence)
	}
	if limit > 0 && len(set.Items) > limit {
		set.Items = set.Items[:limit]
	}
	set.Assumptions = []string{
		fmt.Sprintf("Factcheck-Bench passages have no URL: each distinct passage text counts as an independent source of assumed tier %d (--assume-tier)", tier),
		fmt.Sprintf("identical (passage, stance) pairs of one claim count once (%d duplicates dropped); one passage with two different labels counts on both sides", set.DuplicatePassages),
		"claims are grouped by exact text; a claim's label is derived from its passages: refute (a refute, no complete support), " +
			"refute+support (a refute and a complete support: the contested case), support (support, no refute), irrelevant-only",
		"positive class (incorrect): refute; not false: support, refute+support, irrelevant-only",
	}
	return set, nil
}

type fcbFactualityRecord struct {
	Claim string `json:"claim"`
	Label string `json:"label"`
}

// loadFCBFactuality reads labelled claims and takes each one's evidence
// from the stance set by exact claim text.
func loadFCBFactuality(r io.Reader, name string, limit int, stance *Set) (*Set, error) {
	set := &Set{Dataset: FCBFactuality, File: name, EvidenceFile: stance.File, Labels: fcbFactualityLabels, Positive: "false",
		NotCovered: map[string]int{}, AssumedTier: stance.AssumedTier, DuplicatePassages: stance.DuplicatePassages,
		NULPassages: stance.NULPassages}
	evidenceOf := make(map[string][]Gold, len(stance.Items))
	for _, it := range stance.Items {
		evidenceOf[it.Text] = it.Evidence
	}
	claims := 0
	lines, err := eachLine(r, name, func(n int, line []byte) error {
		if limit > 0 && claims == limit {
			return errStop
		}
		var rec fcbFactualityRecord
		if err := decodeLine(line, &rec); err != nil {
			return err
		}
		if err := errors.Join(text("claim", rec.Claim), knownLabel("label", rec.Label, fcbFactualityLabels)); err != nil {
			return err
		}
		claims++
		ev, ok := evidenceOf[rec.Claim]
		if !ok {
			set.NotCovered[rec.Label]++
			return nil
		}
		set.Items = append(set.Items, Item{ID: fmt.Sprintf("line %d", n), Line: n, Text: rec.Claim, Label: rec.Label, Evidence: ev})
		return nil
	})
	set.Lines = lines + stance.Lines
	if err != nil {
		return nil, err
	}
	set.Assumptions = append([]string{
		fmt.Sprintf("evidence: the stance file's passages for the same claim text (exact match, %s); claims without any are not covered and left out of the metrics",
			stance.File),
	}, stance.Assumptions[:2]...)
	set.Assumptions = append(set.Assumptions, "positive class (incorrect): false; not false: true, not_enough_evidence")
	return set, nil
}
