package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/projections/audit"
)

func TestParseIDs(t *testing.T) {
	t.Parallel()
	const a, b = "0193a0f0-1111-7000-8000-000000000001", "0193a0f0-1111-7000-8000-000000000002"
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{name: "ids, comments, blanks, duplicates and case", in: a + "\n\n# a comment\n  " + strings.ToUpper(b) + "  # trailing\n" + a + "\n",
			want: []string{a, b}},
		{name: "empty", in: "# nothing\n", want: nil},
		{name: "not an id", in: a + "\n../../etc/passwd\n", err: `--ids line 2: "../../etc/passwd" is not an id`},
		{name: "SQL", in: "'; DROP TABLE investigations; --\n", err: "line 1"},
		{name: "terminal escape", in: "\x1b[2J\n", err: `"\x1b[2j" is not an id`},
		{name: "an id with braces", in: "{" + a + "}\n", err: "is not an id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseIDs(strings.NewReader(tc.in))
			if tc.err != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestEstimateCost(t *testing.T) {
	t.Parallel()
	sample := audit.UsageSample{Investigations: 4, Stages: []audit.StageUsage{
		{Stage: events.StageInvestigator, Input: 10000, CachedInput: 2000, Output: 1000},
		{Stage: events.StageValidator, Input: 2000, Output: 500},
	}}
	models := map[string]string{events.StageInvestigator: "gpt-5"}
	prices := config.LLMPrices{"gpt-5": {Input: 1.25, CachedInput: 0.125, Output: 10}, "gpt-5-mini": {Input: 0.25, CachedInput: 0.025, Output: 2}}

	cost, source, ok := estimateCost(sample, models, "gpt-5-mini", prices, reinvestigateFlags{})
	require.True(t, ok)
	require.Equal(t, "ERRATA_LLM_PRICES", source)
	// gpt-5: 8000*1.25 + 2000*0.125 + 1000*10 = 20250; gpt-5-mini: 2000*0.25 + 500*2 = 1500 (per million).
	require.InDelta(t, 0.02175, cost, 1e-12)

	cost, source, ok = estimateCost(sample, models, "gpt-5-mini", prices, reinvestigateFlags{priceIn: 1, priceOut: 2})
	require.True(t, ok)
	require.Equal(t, "--price-in/--price-out", source)
	require.InDelta(t, (12000*1.0+1500*2.0)/1e6, cost, 1e-12)

	_, source, ok = estimateCost(sample, models, "local-llama", prices, reinvestigateFlags{})
	require.False(t, ok, "a model without a price makes the estimate unknown, never zero")
	require.Contains(t, source, `"local-llama" has no price`)
}

func TestSharePercent(t *testing.T) {
	t.Parallel()
	for bp, want := range map[int]string{2000: "20%", 1250: "12.5%", 1: "0.01%", 9999: "99.99%", 5000: "50%"} {
		require.Equal(t, want, sharePercent(bp))
	}
}
