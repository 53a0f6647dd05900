package stance

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/llm/schema"
)

// Schema is the strict answer schema of a stance request:
// {"judgements": [{"index", "entail", "contradict", "neutral"}]}, every
// property required, nothing else allowed. The count, the indices and the
// probabilities are checked after decoding (decodeAnswer): strict mode
// cannot express them.
func Schema() *schema.Schema {
	prob := func(description string) *schema.Schema {
		return &schema.Schema{Type: schema.Number, Description: description}
	}
	return schema.Obj("One judgement for every passage of the request, in passage order.",
		schema.Prop("judgements", schema.Arr("The judgements, one per passage, in passage order.",
			schema.Obj("How one passage bears on the claim. The three probabilities sum to 1.",
				schema.Prop("index", schema.Int("The number in the passage's heading (1 for \"### Passage 1\").")),
				schema.Prop("entail", prob("The probability that the passage shows the claim to be true, from 0 to 1.")),
				schema.Prop("contradict", prob("The probability that the passage shows the claim to be false, from 0 to 1.")),
				schema.Prop("neutral", prob("The probability that the passage does neither, from 0 to 1.")),
			), 0)),
	)
}

// wireAnswer is the answer as sent. Numbers stay json.Number so that an
// out-of-range value (1e400) is one bad entry, not an undecodable answer.
type wireAnswer struct {
	Judgements []struct {
		Index      json.Number `json:"index"`
		Entail     json.Number `json:"entail"`
		Contradict json.Number `json:"contradict"`
		Neutral    json.Number `json:"neutral"`
	} `json:"judgements"`
}

// decodeAnswer reads an answer about n passages. A broken whole (not the
// schema, a wrong count, an index out of range or given twice) is err: the
// mapping of judgements to passages cannot be trusted, so no passage is
// judged. Otherwise stances[k] is passage k+1's stance when problems[k] is
// empty, and problems[k] says what is wrong with its entry.
func decodeAnswer(raw []byte, n int) (stances []evidence.Stance, problems []string, err error) {
	if err := Schema().ValidateJSON(raw); err != nil {
		return nil, nil, err
	}
	var a wireAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, nil, err
	}
	if len(a.Judgements) != n {
		return nil, nil, fmt.Errorf("%d judgements for %d passages", len(a.Judgements), n)
	}
	stances, problems = make([]evidence.Stance, n), make([]string, n)
	seen := make([]bool, n)
	for i, j := range a.Judgements {
		k, ok := index(j.Index, n)
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("judgements[%d]: index %s is not a passage number from 1 to %d", i, j.Index, n)
		case seen[k]:
			return nil, nil, fmt.Errorf("judgements[%d]: passage %d is judged twice", i, k+1)
		}
		seen[k] = true
		var s evidence.Stance
		var bad []string
		for _, f := range []struct {
			name string
			raw  json.Number
			dst  *float64
		}{{"entail", j.Entail, &s.Entail}, {"contradict", j.Contradict, &s.Contradict}, {"neutral", j.Neutral, &s.Neutral}} {
			v, err := strconv.ParseFloat(string(f.raw), 64)
			switch {
			case err != nil:
				bad = append(bad, fmt.Sprintf("%s %s is not a finite number", f.name, f.raw))
			case v < 0 || v > 1:
				// Checked here, in field order, so the note names the
				// first bad field every time.
				bad = append(bad, fmt.Sprintf("stance %s %v is not a probability", f.name, v))
			}
			*f.dst = v
		}
		if len(bad) == 0 {
			if err := s.Validate(); err != nil {
				bad = append(bad, err.Error())
			}
		}
		if len(bad) > 0 {
			problems[k] = bad[0]
			continue
		}
		stances[k] = s
	}
	return stances, problems, nil
}

// index is the 0-based passage of a 1-based index (1.0 counts as 1).
func index(raw json.Number, n int) (int, bool) {
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > float64(n) {
		return 0, false
	}
	return int(f) - 1, true
}
