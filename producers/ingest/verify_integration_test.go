package ingest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/producers/ingest/canonical"
	"github.com/errata-dev/errata/projections/serving"
)

// TestRegisterVerifiesAgainstThePlatform runs registerObservedVersion's
// service against a recorded LessWrong GraphQL answer: the registration is
// SERVER_VERIFIED with the platform's text, the projection latches
// server_verified_at, and the client's differing HTML is recorded as a
// content anomaly, not served.
func TestRegisterVerifiesAgainstThePlatform(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	recorded, err := os.ReadFile(filepath.Join("canonical", "testdata", "lesswrong-graphql-ioZxrP7BhS5ArK59w.json"))
	require.NoError(t, err)
	fail := false
	platform := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(recorded)
	}))
	defer platform.Close()
	client, err := httpsafe.New(httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(platform.Listener.Addr().String())))
	require.NoError(t, err)
	fetcher, err := canonical.NewFetcher(client, canonical.Endpoints{LessWrongGraphQL: platform.URL + "/graphql"}, logging.Discard(),
		canonical.WithRetryPolicy(canonical.RetryPolicy{Attempts: 1}))
	require.NoError(t, err)
	svc := ingest.NewService(s.Appender, ingest.WithVerifier(fetcher, 5*time.Second))

	body, err := json.Marshal(map[string]any{
		"platform": "LESSWRONG", "externalId": "ioZxrP7BhS5ArK59w",
		"url": "https://www.lesswrong.com/posts/ioZxrP7BhS5ArK59w/did-claude-3-opus-align-itself-via-gradient-hacking",
		"metadata": map[string]any{"slug": "did-claude-3-opus-align-itself-via-gradient-hacking", "tags": []string{},
			"htmlContent": "<p>A client that saw something else entirely.</p>"},
	})
	require.NoError(t, err)
	in, err := ingest.ParseRegisterInput(body)
	require.NoError(t, err)
	ctx := context.Background()
	reg, err := svc.Register(ctx, in, ingest.Caller{CorrelationID: "test"})
	require.NoError(t, err)
	require.Equal(t, events.ProvenanceServerVerified, reg.Provenance)
	// golden.json's versionHash for this page: the server's text, not the client's.
	require.Equal(t, "381418fc592d521a9d28f314d75b3dcd12567dc7d95e0b43c87f35ab924cbf4e", reg.VersionHash)
	require.NoError(t, s.Watermark.WaitFor(ctx, reg.Position.Topic, reg.Position.Partition, reg.Position.Offset+1, time.Minute))

	v, err := serving.NewReader(s.Pool).VersionByID(ctx, reg.PostVersionID)
	require.NoError(t, err)
	require.NotNil(t, v.ServerVerifiedAt)
	var kind, field string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT kind, field FROM integrity_anomalies WHERE post_version_id = $1`, reg.PostVersionID).Scan(&kind, &field))
	require.Equal(t, events.AnomalyContentMismatch, kind)
	require.Equal(t, "content_hash", field)
	var serverHTML bool
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT server_html_hash IS NOT NULL FROM lesswrong_version_meta WHERE post_version_id = $1`, reg.PostVersionID).Scan(&serverHTML))
	require.True(t, serverHTML)

	// The platform goes down: another post falls back to the client's text,
	// with the reason, and the latch of the verified version stays.
	fail = true
	in2, err := ingest.ParseRegisterInput([]byte(`{"platform":"LESSWRONG","externalId":"other1","url":"https://www.lesswrong.com/posts/other1/x",
		"metadata":{"slug":"x","tags":[],"htmlContent":"<p>Only the client saw this.</p>"}}`))
	require.NoError(t, err)
	reg2, err := svc.Register(ctx, in2, ingest.Caller{CorrelationID: "test"})
	require.NoError(t, err)
	require.Equal(t, events.ProvenanceClientFallback, reg2.Provenance)
	require.NoError(t, s.Watermark.WaitFor(ctx, reg2.Position.Topic, reg2.Position.Partition, reg2.Position.Offset, time.Minute))
	v2, err := serving.NewReader(s.Pool).VersionByID(ctx, reg2.PostVersionID)
	require.NoError(t, err)
	require.Nil(t, v2.ServerVerifiedAt)
}
