package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

func TestStatusCacheEntries(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, 50_000, c.StatusCacheEntries)
	for _, tc := range []struct {
		value string
		want  int
		err   string
	}{
		{"0", 0, ""},
		{"1", 1, ""},
		{"10000000", 10_000_000, ""},
		{"10000001", 0, `invalid configuration: ERRATA_STATUS_CACHE_ENTRIES: "10000001" is not an integer between 0 and 10000000`},
		{"-1", 0, `invalid configuration: ERRATA_STATUS_CACHE_ENTRIES: "-1" is not an integer between 0 and 10000000`},
		{"1e6", 0, `invalid configuration: ERRATA_STATUS_CACHE_ENTRIES: "1e6" is not an integer between 0 and 10000000`},
		{"99999999999999999999", 0, `invalid configuration: ERRATA_STATUS_CACHE_ENTRIES: "99999999999999999999" is not an integer between 0 and 10000000`},
	} {
		c, err := config.Load(env(map[string]string{"ERRATA_STATUS_CACHE_ENTRIES": tc.value}))
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.value)
			continue
		}
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.want, c.StatusCacheEntries, tc.value)
	}
}
