package verdict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/events"
)

// SummarySchemaName names SummarySchema in structured-output requests.
const SummarySchemaName = prompts.VerdictSummarySchemaName

// Bounds of a summary answer.
const (
	MaxSummaryRunes = 2000
	MaxCaveats      = 10
	MaxCaveatRunes  = 500
	// MaxCitedURLs bounds the sources a summary answer may cite; Post
	// keeps at most Rubric.Aggregate.MaxCited of them.
	MaxCitedURLs = 20
	MaxURLBytes  = 2048
)

// Summary is the model's summary answer, after DecodeSummary's checks.
type Summary struct {
	Summary string   `json:"summary"`
	Caveats []string `json:"caveats"`
	// Sources are the URLs the model cites, as written; Post keeps those
	// that were among the search results.
	Sources []string `json:"sources"`
	// ModelConfidence and ModelLabel are the model's own reading of the
	// whole text. The label never decides anything (labels are
	// mechanical); the confidence may lower the post's, never raise it.
	ModelConfidence int    `json:"confidence"`
	ModelLabel      string `json:"label"`
}

// SummaryOutputSchema is the strict answer schema of the summary call (for
// llm.OutputSchema): {"summary", "caveats", "sources", "confidence",
// "label"}, every property required, nothing else allowed. Each call
// returns a fresh copy.
func SummaryOutputSchema() *schema.Schema {
	return schema.Obj("The verdict's summary, caveats, cited sources and the model's own reading.",
		schema.Prop("summary", schema.Str("Two or three plain sentences on the text as a whole.")),
		schema.Prop("caveats", schema.Arr("What could not be verified or may be read differently; empty when nothing.",
			schema.Str("One caveat."), 0)),
		schema.Prop("sources", schema.Arr("URLs of the search results the summary relies on, copied exactly; empty when nothing was researched.",
			schema.Str("A URL from the search results."), 0)),
		schema.Prop("confidence", schema.Int("Calibrated confidence in the label, 0 to 100.")),
		schema.Prop("label", schema.Enum("The model's reading of the whole text.", events.Labels...)),
	)
}

// SummarySchema is SummaryOutputSchema as a JSON Schema map.
func SummarySchema() map[string]any { return SummaryOutputSchema().Map() }

// DecodeSummary reads a summary answer. It refuses (ErrAnswer, naming the
// problem) an answer that breaks the schema, an empty summary, a
// confidence outside 0..100, an unknown label, more than MaxCaveats
// caveats or MaxCitedURLs sources, a NUL, or a field over its bound.
// Blank caveats and sources are dropped; the rest are trimmed. Caveats
// and Sources are never nil.
func DecodeSummary(raw []byte) (Summary, error) {
	v, err := decodeAnswer(raw)
	if err != nil {
		return Summary{}, err
	}
	if obj, ok := v.(map[string]any); ok {
		for _, f := range []struct {
			name string
			max  int
		}{{"caveats", MaxCaveats}, {"sources", MaxCitedURLs}} {
			if list, ok := obj[f.name].([]any); ok && len(list) > f.max {
				return Summary{}, fmt.Errorf("%w: %d %s, at most %d", ErrAnswer, len(list), f.name, f.max)
			}
		}
	}
	if err := SummaryOutputSchema().Validate(v); err != nil {
		return Summary{}, fmt.Errorf("%w: %v", ErrAnswer, err)
	}
	m := v.(map[string]any)
	s := Summary{
		Summary:    strings.TrimSpace(m["summary"].(string)),
		ModelLabel: m["label"].(string),
		Caveats:    []string{},
		Sources:    []string{},
	}
	if s.Summary == "" {
		return Summary{}, fmt.Errorf("%w: summary is empty", ErrAnswer)
	}
	if err := boundedText(s.Summary, MaxSummaryRunes); err != nil {
		return Summary{}, fmt.Errorf("%w: summary %v", ErrAnswer, err)
	}
	conf, err := strconv.ParseFloat(m["confidence"].(interface{ String() string }).String(), 64)
	if err != nil || conf < 0 || conf > 100 {
		return Summary{}, fmt.Errorf("%w: confidence %v is not an integer from 0 to 100", ErrAnswer, m["confidence"])
	}
	s.ModelConfidence = int(conf)
	for i, c := range m["caveats"].([]any) {
		c := strings.TrimSpace(c.(string))
		if err := boundedText(c, MaxCaveatRunes); err != nil {
			return Summary{}, fmt.Errorf("%w: caveats[%d] %v", ErrAnswer, i, err)
		}
		if c != "" {
			s.Caveats = append(s.Caveats, c)
		}
	}
	for i, u := range m["sources"].([]any) {
		u := strings.TrimSpace(u.(string))
		if len(u) > MaxURLBytes || strings.ContainsRune(u, 0) {
			return Summary{}, fmt.Errorf("%w: sources[%d] is longer than %d bytes or contains NUL", ErrAnswer, i, MaxURLBytes)
		}
		if u != "" {
			s.Sources = append(s.Sources, u)
		}
	}
	return s, nil
}
