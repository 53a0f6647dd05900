package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// TestServeStatusCacheSetting: with ERRATA_STATUS_CACHE_ENTRIES=0 errata
// serve answers every status from Postgres (and says so once), with the
// default it answers from the cache and counts it; the extension's answers
// are the same either way, before and after an investigation.
func TestServeStatusCacheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		entries string
		cached  bool
	}{{"off", "0", false}, {"default", "", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			metricsAddr := freeAddr(t)
			extra := []string{"OPENAI_API_KEY=sk-instance-test-0123456789", "ERRATA_API_METRICS_ADDR=" + metricsAddr}
			if tc.entries != "" {
				extra = append(extra, "ERRATA_STATUS_CACHE_ENTRIES="+tc.entries)
			}
			s := newStack(t, ctx, extra...)
			s.fake.RequireAPIKey("sk-instance-test-0123456789")
			s.start(t)
			key := addInstanceKey(t, s.env)

			versionID := s.registerTweet(t)
			require.Equal(t, "NOT_INVESTIGATED", s.viewStatus(t, versionID).State)
			status, data := s.call(t, http.MethodPost, "investigateNow", map[string]string{"postVersionId": versionID},
				map[string]string{"x-api-key": key})
			require.Equal(t, http.StatusOK, status, string(data))
			s.waitInvestigated(t, events.InvestigationID(versionID), time.Minute)
			v := s.viewStatusOnce(t, versionID, func(v extensionView) bool { return v.State == "INVESTIGATED" })
			require.Len(t, v.Claims, 1)
			require.Equal(t, tweetClaim, v.Claims[0].Text)

			metrics := ask(t, http.MethodGet, "http://"+metricsAddr+"/metrics", "127.0.0.1", "")
			require.Equal(t, http.StatusOK, metrics.status)
			serveLog, err := os.ReadFile(filepath.Join(s.logDir, "serve.log"))
			require.NoError(t, err)
			if tc.cached {
				require.Contains(t, metrics.body, "errata_status_cache_hits_total")
				require.NotContains(t, string(serveLog), "status cache off")
				return
			}
			require.NotContains(t, metrics.body, "errata_status_cache_")
			require.Contains(t, string(serveLog), "status cache off (ERRATA_STATUS_CACHE_ENTRIES=0)")
		})
	}
}
