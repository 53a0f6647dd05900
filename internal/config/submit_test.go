package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

// Submissions of verdict analyses have their own, small budget.
func TestSubmitRateSettings(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, []int{30, 5}, []int{c.SubmitRate, c.SubmitBurst})
	c, err = config.Load(env(map[string]string{"ERRATA_SUBMIT_RATE": "600", "ERRATA_SUBMIT_BURST": "20"}))
	require.NoError(t, err)
	require.Equal(t, []int{600, 20}, []int{c.SubmitRate, c.SubmitBurst})
	_, err = config.Load(env(map[string]string{"ERRATA_SUBMIT_RATE": "0", "ERRATA_SUBMIT_BURST": "many"}))
	require.ErrorContains(t, err, "ERRATA_SUBMIT_RATE")
	require.ErrorContains(t, err, "ERRATA_SUBMIT_BURST")
}
