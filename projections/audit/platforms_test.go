package audit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/producers/ingest/canonical"
	"github.com/errata-dev/errata/projections/audit"
)

// TestPublicSourceFetchErrorsOfBlueskyAndThreads: why a Bluesky or Threads
// version is CLIENT_FALLBACK shows publicly as a category, never with the
// AppView's address; the real fetcher's errors are classified.
func TestPublicSourceFetchErrorsOfBlueskyAndThreads(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		status int
		body   string
	}{
		"3kaaaaaaaaaaa": {400, `{"error":"NotFound","message":"Post not found"}`},
		"3kccccccccccc": {200, `{"thread":{"$type":"app.bsky.feed.defs#blockedPost","uri":"x","blocked":true}}`},
		"3kddddddddddd": {200, `{"thread":{"$type":"app.bsky.feed.defs#threadViewPost","post":{"uri":"at://did:plc:aaaaaaaaaaaaaaaaaaaaaaaa/app.bsky.feed.post/3kzzzzzzzzzzz"}}}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri := r.URL.Query().Get("uri")
		a := answers[uri[len(uri)-13:]]
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	client, err := httpsafe.New(httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(srv.Listener.Addr().String())))
	require.NoError(t, err)
	f, err := canonical.NewFetcher(client, canonical.Endpoints{BlueskyThread: srv.URL + "/xrpc/app.bsky.feed.getPostThread"}, nil,
		canonical.WithRetryPolicy(canonical.RetryPolicy{Attempts: 1}))
	require.NoError(t, err)
	for rkey, want := range map[string]string{
		"3kaaaaaaaaaaa": audit.ReasonNotFound,
		"3kccccccccccc": audit.ReasonPaywalled,
		"3kddddddddddd": audit.ReasonBadResponse,
	} {
		_, err := f.Bluesky(context.Background(), canonical.BlueskyRequest{DID: "did:plc:aaaaaaaaaaaaaaaaaaaaaaaa", RKey: rkey, Handle: "a.example"})
		require.Error(t, err)
		require.Equal(t, want, audit.PublicSourceFetchError(err.Error()), err.Error())
	}
	// producers/ingest's fixed reason for Threads.
	require.Equal(t, audit.ReasonNotVerifiable,
		audit.PublicSourceFetchError("Threads has no public API to read a post from: platform content cannot be verified server-side"))
}
