package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// The readiness checks of the stores pass against the real local
// Elasticsearch and ClickHouse (their health endpoints answer 2xx).
func TestStoreChecksPassOnTheLocalServices(t *testing.T) {
	t.Parallel()
	if !testenv.Integration() {
		t.Skip("ERRATA_INTEGRATION=1 runs this against the local services")
	}
	e := newEnv(testenv.Config(t), logging.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	checks := storeChecks(e, true, true)
	require.Len(t, checks, 2)
	for _, c := range checks {
		require.NoError(t, c.Run(ctx), c.Name)
	}
}
