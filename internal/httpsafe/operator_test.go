package httpsafe

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// An operator's configured endpoint (a self-hosted search server on
// loopback) is reachable; every other loopback port, and a redirect from
// it to one, is still refused.
func TestAllowOperatorEndpoint(t *testing.T) {
	other := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("internal")) })
	search := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, other.URL, http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("results"))
	})
	c := newClient(t, AllowOperatorEndpoint(search.addrPort()))
	resp, err := c.Get(context.Background(), search.URL+"/search")
	require.NoError(t, err)
	require.Equal(t, "results", string(resp.Body))

	_, err = c.Get(context.Background(), other.URL)
	require.ErrorIs(t, err, ErrBlockedAddress)
	_, err = c.Get(context.Background(), search.URL+"/hop")
	require.ErrorIs(t, err, ErrBlockedAddress)
	require.Zero(t, other.hits.Load(), "the other loopback server was never reached")
	require.EqualValues(t, 2, search.hits.Load())
}
