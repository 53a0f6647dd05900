package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// DefaultLLMPrices are OpenAI's list prices in US dollars per million tokens
// for the default models (input:output:cached input). They only feed cost
// estimates in metrics; set ERRATA_LLM_PRICES when prices or models change.
const DefaultLLMPrices = "gpt-5=1.25:10:0.125,gpt-5-mini=0.25:2:0.025,gpt-5-nano=0.05:0.4:0.005"

// LLMPrice is a model's price in US dollars per million tokens. Cached input
// tokens are part of the input tokens and cost CachedInput instead of Input;
// reasoning tokens are billed as output.
type LLMPrice struct {
	Input, Output, CachedInput float64
}

// LLMPrices maps a model name to its price.
type LLMPrices map[string]LLMPrice

// datedSnapshot matches the date suffix providers append to a model alias
// ("gpt-5-2025-08-07" is a snapshot of "gpt-5").
var datedSnapshot = regexp.MustCompile(`^-\d{4}-\d{2}-\d{2}$`)

// Lookup finds the price of model: its exact name, or the alias of which it
// is a dated snapshot.
func (p LLMPrices) Lookup(model string) (LLMPrice, bool) {
	if price, ok := p[model]; ok {
		return price, true
	}
	for name, price := range p {
		if rest, ok := strings.CutPrefix(model, name); ok && datedSnapshot.MatchString(rest) {
			return price, true
		}
	}
	return LLMPrice{}, false
}

// ParseLLMPrices reads "model=input:output[:cached],..." (dollars per million
// tokens; cached defaults to the input price). Empty means no prices.
func ParseLLMPrices(v string) (LLMPrices, error) {
	out := LLMPrices{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for _, entry := range strings.Split(v, ",") {
		model, nums, ok := strings.Cut(strings.TrimSpace(entry), "=")
		model = strings.TrimSpace(model)
		if !ok || model == "" {
			return nil, fmt.Errorf("%q: want model=input:output[:cached]", entry)
		}
		if _, dup := out[model]; dup {
			return nil, fmt.Errorf("model %q is priced twice", model)
		}
		parts := strings.Split(nums, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("%q: want model=input:output[:cached]", entry)
		}
		vals := make([]float64, len(parts))
		for i, s := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%q: %q is not a non-negative number", entry, s)
			}
			vals[i] = f
		}
		price := LLMPrice{Input: vals[0], Output: vals[1], CachedInput: vals[0]}
		if len(vals) == 3 {
			price.CachedInput = vals[2]
		}
		out[model] = price
	}
	if len(out) == 0 {
		return nil, errors.New("no prices")
	}
	return out, nil
}
