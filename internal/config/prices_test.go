package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

func TestParseLLMPrices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want config.LLMPrices
		err  string
	}{
		{in: "", want: config.LLMPrices{}},
		{in: "m=1:2", want: config.LLMPrices{"m": {Input: 1, Output: 2, CachedInput: 1}}},
		{in: " a = 1.5 : 10 : 0.1 , b=0:0", want: config.LLMPrices{"a": {Input: 1.5, Output: 10, CachedInput: 0.1}, "b": {}}},
		{in: "m", err: "want model=input:output[:cached]"},
		{in: "=1:2", err: "want model=input:output[:cached]"},
		{in: "m=1", err: "want model=input:output[:cached]"},
		{in: "m=1:2:3:4", err: "want model=input:output[:cached]"},
		{in: "m=1:x", err: "not a non-negative number"},
		{in: "m=-1:2", err: "not a non-negative number"},
		{in: "m=NaN:2", err: "not a non-negative number"},
		{in: "m=1:Inf", err: "not a non-negative number"},
		{in: "m=1:2,m=3:4", err: "priced twice"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := config.ParseLLMPrices(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDefaultLLMPricesCoverDefaultModels(t *testing.T) {
	t.Parallel()
	c, err := config.Load(func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	for _, m := range []string{c.InvestigatorModel, c.ValidatorModel} {
		p, ok := c.LLMPrices.Lookup(m)
		require.True(t, ok, m)
		require.Positive(t, p.Output)
	}
}

func TestLLMPriceLookupMatchesDatedSnapshots(t *testing.T) {
	t.Parallel()
	p, err := config.ParseLLMPrices(config.DefaultLLMPrices)
	require.NoError(t, err)
	mini, _ := p.Lookup("gpt-5-mini")
	got, ok := p.Lookup("gpt-5-mini-2025-08-07")
	require.True(t, ok)
	require.Equal(t, mini, got, "a snapshot of gpt-5-mini is not priced as gpt-5")
	_, ok = p.Lookup("gpt-5-turbo")
	require.False(t, ok)
	_, ok = p.Lookup("gpt-4o")
	require.False(t, ok)
}

func TestLoadRejectsBadLLMPrices(t *testing.T) {
	t.Parallel()
	_, err := config.Load(func(k string) (string, bool) {
		if k == "ERRATA_LLM_PRICES" {
			return "gpt-5=cheap", true
		}
		return "", false
	})
	require.ErrorContains(t, err, "ERRATA_LLM_PRICES")
}
