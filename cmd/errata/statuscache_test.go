package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// TestServeStatusCacheSetting: with ERRATA_STATUS_CACHE_ENTRIES=0 errata
// serve answers every status from Postgres (and says so once), with the
// default it keeps its cache current by listening to the serving
// projection's notifications; the extension's answers are the same either
// way, before and after an investigation.
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
			extra := []string{"OPENAI_API_KEY=sk-instance-test-0123456789"}
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

			// The cache's listener is the only LISTEN on the stack's own
			// database.
			conn, err := pgx.Connect(ctx, s.dbURL)
			require.NoError(t, err)
			defer conn.Close(context.WithoutCancel(ctx))
			var listeners int
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND query LIKE 'LISTEN %'`).Scan(&listeners))
			serveLog, err := os.ReadFile(filepath.Join(s.logDir, "serve.log"))
			require.NoError(t, err)
			if tc.cached {
				require.Equal(t, 1, listeners)
				require.NotContains(t, string(serveLog), "status cache off")
				return
			}
			require.Zero(t, listeners)
			require.Contains(t, string(serveLog), "status cache off (ERRATA_STATUS_CACHE_ENTRIES=0)")
		})
	}
}
