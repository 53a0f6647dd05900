package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An unknown evidence policy is a configuration error that lists the
// known ones; a known one loads.
func TestLoadConfigEvidencePolicy(t *testing.T) {
	t.Setenv("ERRATA_EVIDENCE_POLICY", "lenient")
	_, err := loadConfig()
	require.EqualError(t, err, `invalid configuration: ERRATA_EVIDENCE_POLICY: evidence policy "lenient" is unknown (known: [strict-v1 validator-only-v1])`)

	t.Setenv("ERRATA_EVIDENCE_POLICY", "validator-only-v1")
	cfg, err := loadConfig()
	require.NoError(t, err)
	require.Equal(t, "validator-only-v1", cfg.EvidencePolicy)
}
