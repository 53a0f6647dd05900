package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestServeMetricsOnlyOnTheOperatorAddress: `errata serve` answers
// /metrics on ERRATA_API_METRICS_ADDR and not on its public listener, where
// /metrics is an unknown route like any other; with the setting off
// (the default) nothing serves it.
func TestServeMetricsOnlyOnTheOperatorAddress(t *testing.T) {
	t.Parallel()
	if !testenv.Integration() {
		t.Skip("ERRATA_INTEGRATION=1 runs errata serve against the local services")
	}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rig := newWorkerRig(t, ctx, 10)
	for _, metricsAddr := range []string{freeAddr(t), "off"} {
		t.Run(metricsAddr, func(t *testing.T) {
			public := freeAddr(t)
			api := startErrata(t, append(rig.env, "ERRATA_HTTP_ADDR="+public, "ERRATA_API_METRICS_ADDR="+metricsAddr),
				filepath.Join(t.TempDir(), "serve.log"), "serve")
			defer api.stop(t)
			testenv.Eventually(t, 20*time.Second, func() (bool, string) {
				resp, err := http.Get("http://" + public + "/health")
				if err != nil {
					return false, err.Error()
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK, resp.Status
			})
			status, body := get("http://" + public + "/metrics")
			require.Equal(t, http.StatusNotFound, status, body)
			require.NotContains(t, body, "errata_")
			if metricsAddr == "off" {
				return
			}
			status, body = get("http://" + metricsAddr + "/metrics")
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, body, `errata_http_requests_total{code="200",method="GET",route="/health"}`)
			require.Contains(t, body, `errata_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
				"the public /metrics probe is an unknown route")
			require.True(t, strings.Contains(body, "go_goroutines"))
			status, _ = get("http://" + metricsAddr + "/health")
			require.Equal(t, http.StatusNotFound, status, "the operator's address serves /metrics alone")
		})
	}
}
