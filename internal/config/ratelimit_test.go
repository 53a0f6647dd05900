package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

// Rate limits are on by default with documented budgets; off turns them
// off; nonsense is refused at start-up.
func TestRateLimitSettings(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.True(t, c.RateLimit)
	require.Equal(t, []int{200, 4000, 20, 600, 50000}, []int{c.GraphQLRate, c.GraphQLBurst, c.TRPCRate, c.TRPCBurst, c.RateLimitClients})

	for _, off := range []string{"off", "OFF", "false"} {
		c, err = config.Load(env(map[string]string{"ERRATA_RATE_LIMIT": off}))
		require.NoError(t, err)
		require.False(t, c.RateLimit, off)
	}
	c, err = config.Load(env(map[string]string{"ERRATA_RATE_LIMIT_GRAPHQL_RATE": "50", "ERRATA_RATE_LIMIT_TRPC_BURST": "5"}))
	require.NoError(t, err)
	require.Equal(t, 50, c.GraphQLRate)
	require.Equal(t, 5, c.TRPCBurst)

	_, err = config.Load(env(map[string]string{"ERRATA_RATE_LIMIT": "sometimes", "ERRATA_RATE_LIMIT_GRAPHQL_BURST": "0", "ERRATA_RATE_LIMIT_CLIENTS": "-1"}))
	require.ErrorContains(t, err, "ERRATA_RATE_LIMIT:")
	require.ErrorContains(t, err, "ERRATA_RATE_LIMIT_GRAPHQL_BURST")
	require.ErrorContains(t, err, "ERRATA_RATE_LIMIT_CLIENTS")
}
