package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

// The evidence policy is strict unless an operator names another one (the
// command's loadConfig refuses an unknown name: cmd/errata/config_test.go).
func TestEvidencePolicyAndStanceModel(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, "strict-v1", c.EvidencePolicy)
	require.Equal(t, "", c.StanceModel, "empty: the validator's model")

	c, err = config.Load(env(map[string]string{"ERRATA_EVIDENCE_POLICY": "validator-only-v1", "ERRATA_STANCE_MODEL": "gpt-5-mini"}))
	require.NoError(t, err)
	require.Equal(t, "validator-only-v1", c.EvidencePolicy)
	require.Equal(t, "gpt-5-mini", c.StanceModel)
}
