package verdict

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/events"
)

// ExtractionSchemaName names ExtractionSchema in structured-output requests.
const ExtractionSchemaName = prompts.VerdictExtractionSchemaName

// MaxClaims is the most claims the extraction prompt asks for: the
// maxClaims an analysis passes to DecodeExtraction.
const MaxClaims = 20

// Bounds of a model answer. An answer beyond them is refused, never cut:
// a model that writes a 100 KB "claim" is not answering the question.
const (
	MaxAnswerBytes  = 1 << 20
	MaxClaimRunes   = 1000
	MaxContextRunes = 2000
	MaxReasonRunes  = 1000
)

// ErrAnswer wraps every reason a model answer is refused: the caller asks
// again (or fails the attempt) and stores nothing of it.
var ErrAnswer = errors.New("unusable model answer")

// Triage kinds, in the order the schema lists them.
var kinds = []string{events.TriageFactual, events.TriageOpinion, events.TriagePrediction, events.TriageNotAClaim}

// Extracted is one statement of the analysed text with its Gate-1 triage,
// as the model answered it (after DecodeExtraction's checks).
type Extracted struct {
	// Text is the statement, standing on its own; Context the sentence of
	// the analysed text it comes from.
	Text    string `json:"text"`
	Context string `json:"context"`
	// Kind is events.TriageFactual, TriageOpinion, TriagePrediction or
	// TriageNotAClaim.
	Kind string `json:"kind"`
	// Specificity in [0, 1]: how concretely the statement names what would
	// have to be checked.
	Specificity float64 `json:"specificity"`
	// TimeSensitive, CurrentEvents and Numeric feed the confidence caps.
	TimeSensitive bool `json:"time_sensitive"`
	CurrentEvents bool `json:"current_events"`
	Numeric       bool `json:"numeric"`
	// Reason is the model's one-sentence reason for the kind.
	Reason string `json:"reason"`
}

// ExtractionOutputSchema is the strict answer schema of the extraction
// call (for llm.OutputSchema): {"claims": [{text, context, kind,
// specificity, time_sensitive, current_events, numeric, reason}]}, every
// property required, nothing else allowed. Bounds strict mode cannot
// express (specificity in [0, 1], the number of claims, lengths) are
// checked by DecodeExtraction. Each call returns a fresh copy.
func ExtractionOutputSchema() *schema.Schema {
	return schema.Obj("The statements of the text, in order, each with its triage.",
		schema.Prop("claims", schema.Arr(fmt.Sprintf("At most %d statements; empty when the text makes none.", MaxClaims),
			schema.Obj("One statement of the text.",
				schema.Prop("text", schema.Str("The statement, standing on its own, figures and qualifiers as the text gives them.")),
				schema.Prop("context", schema.Str("The sentence of the text the statement comes from, as it appears.")),
				schema.Prop("kind", schema.Enum("What kind of statement it is.", kinds...)),
				schema.Prop("specificity", &schema.Schema{Type: schema.Number,
					Description: "From 0 (vague) to 1 (names who, what, when or where with figures or dates)."}),
				schema.Prop("time_sensitive", schema.Bool("Whether its truth depends on when it is read.")),
				schema.Prop("current_events", schema.Bool("Whether it is about events of roughly the last year.")),
				schema.Prop("numeric", schema.Bool("Whether it turns on a specific number, amount, percentage, date or year.")),
				schema.Prop("reason", schema.Str("One short sentence on why this kind.")),
			), 0)),
	)
}

// ExtractionSchema is ExtractionOutputSchema as a JSON Schema map
// (additionalProperties false and every property required, at every
// level), for APIs that take a map.
func ExtractionSchema() map[string]any { return ExtractionOutputSchema().Map() }

// DecodeExtraction reads an extraction answer. It refuses (ErrAnswer,
// naming the problem) an answer that is not exactly one JSON object of the
// schema, has more than maxClaims claims, an unknown kind, a specificity
// that is not a number in [0, 1], an empty text, a NUL, or a field over
// its bound. Text is trimmed; a statement repeating an earlier one
// (compared case- and space-insensitively) is dropped, keeping the first.
// The result is never nil.
func DecodeExtraction(raw []byte, maxClaims int) ([]Extracted, error) {
	if maxClaims < 1 {
		return nil, fmt.Errorf("verdict: maxClaims %d must be at least 1", maxClaims)
	}
	v, err := decodeAnswer(raw)
	if err != nil {
		return nil, err
	}
	// The count first: a 10,000-claim answer is refused in one line, not
	// with a violation per claim.
	if obj, ok := v.(map[string]any); ok {
		if list, ok := obj["claims"].([]any); ok && len(list) > maxClaims {
			return nil, fmt.Errorf("%w: %d claims, at most %d", ErrAnswer, len(list), maxClaims)
		}
	}
	if err := ExtractionOutputSchema().Validate(v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAnswer, err)
	}
	list := v.(map[string]any)["claims"].([]any)
	out := make([]Extracted, 0, len(list))
	seen := map[string]bool{}
	for i, item := range list {
		m := item.(map[string]any)
		where := fmt.Sprintf("claims[%d]", i)
		e := Extracted{
			Text:          strings.TrimSpace(m["text"].(string)),
			Context:       strings.TrimSpace(m["context"].(string)),
			Kind:          m["kind"].(string),
			TimeSensitive: m["time_sensitive"].(bool),
			CurrentEvents: m["current_events"].(bool),
			Numeric:       m["numeric"].(bool),
			Reason:        strings.TrimSpace(m["reason"].(string)),
		}
		spec, err := probability(m["specificity"])
		if err != nil {
			return nil, fmt.Errorf("%w: %s.specificity %v", ErrAnswer, where, err)
		}
		e.Specificity = spec
		if e.Text == "" {
			return nil, fmt.Errorf("%w: %s.text is empty", ErrAnswer, where)
		}
		for _, f := range []struct {
			name, value string
			max         int
		}{{"text", e.Text, MaxClaimRunes}, {"context", e.Context, MaxContextRunes}, {"reason", e.Reason, MaxReasonRunes}} {
			if err := boundedText(f.value, f.max); err != nil {
				return nil, fmt.Errorf("%w: %s.%s %v", ErrAnswer, where, f.name, err)
			}
		}
		key := strings.ToLower(strings.Join(strings.Fields(e.Text), " "))
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
	}
	return out, nil
}

// decodeAnswer decodes exactly one JSON value of at most MaxAnswerBytes
// (no trailing data, no duplicate keys, numbers kept exact).
func decodeAnswer(raw []byte) (any, error) {
	if len(raw) > MaxAnswerBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrAnswer, len(raw), MaxAnswerBytes)
	}
	v, err := schema.DecodeStrict(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAnswer, err)
	}
	return v, nil
}

// probability reads a schema-valid number that must lie in [0, 1].
func probability(v any) (float64, error) {
	n, _ := v.(interface{ String() string })
	if n == nil {
		return 0, errors.New("is not a number")
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("%s is not a finite number", n.String())
	case f < 0 || f > 1:
		return 0, fmt.Errorf("%s is not in [0, 1]", n.String())
	}
	return f, nil
}

// boundedText checks a decoded string: no NUL, at most limit runes.
func boundedText(s string, limit int) error {
	if strings.ContainsRune(s, 0) {
		return errors.New("contains NUL (U+0000)")
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("has %d characters, at most %d", n, limit)
	}
	return nil
}

// Researched is Gate 1 under the default rubric: whether a claim goes on to
// research, and why (or why not).
func Researched(e Extracted) (bool, string) { return DefaultRubric().Researched(e) }

// Researched is Gate 1: a FACTUAL claim with specificity at least
// MinSpecificity is researched. The reason is always a sentence.
func (r Rubric) Researched(e Extracted) (bool, string) {
	switch e.Kind {
	case events.TriageFactual:
		if e.Specificity >= r.MinSpecificity {
			return true, fmt.Sprintf("factual and specific enough to check (specificity %.2f ≥ %.2f)", e.Specificity, r.MinSpecificity)
		}
		return false, fmt.Sprintf("too vague to check (specificity %.2f < %.2f)", e.Specificity, r.MinSpecificity)
	case events.TriageOpinion:
		return false, "an opinion: a value judgment evidence cannot settle"
	case events.TriagePrediction:
		return false, "a prediction: no evidence available today can settle it"
	case events.TriageNotAClaim:
		return false, "not a claim: a question, instruction, joke or private experience"
	default:
		return false, fmt.Sprintf("unknown kind %q", e.Kind)
	}
}
