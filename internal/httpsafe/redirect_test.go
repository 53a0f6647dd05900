package httpsafe

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chainServer redirects /hop/N to /hop/N+1 until N reaches end, then answers.
func chainServer(t *testing.T, end int) *countingServer {
	return newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n < end {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n+1), http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "arrived")
	})
}

func TestRedirectLimit(t *testing.T) {
	tests := []struct {
		name      string
		opts      []Option
		redirects int
		wantErr   error
	}{
		{"default follows 5", nil, 5, nil},
		{"default refuses a 6th", nil, 6, ErrTooManyRedirects},
		{"limit 0 refuses any", []Option{WithMaxRedirects(0)}, 1, ErrTooManyRedirects},
		{"limit 0 without redirect", []Option{WithMaxRedirects(0)}, 0, nil},
		{"limit 2 follows 2", []Option{WithMaxRedirects(2)}, 2, nil},
		{"limit 2 refuses 3", []Option{WithMaxRedirects(2)}, 3, ErrTooManyRedirects},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := chainServer(t, tc.redirects)
			c := newClient(t, append([]Option{AllowLoopbackForTests()}, tc.opts...)...)
			resp, err := c.Get(context.Background(), srv.URL+"/hop/0")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "arrived", string(resp.Body))
			require.Equal(t, "/hop/"+strconv.Itoa(tc.redirects), resp.URL.Path)
		})
	}
}

// TestRedirectHopsRevalidated: each hop is checked again, so an allowed
// server cannot bounce the client to an internal address.
func TestRedirectHopsRevalidated(t *testing.T) {
	internal := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "secret") })
	tests := []struct {
		name     string
		location string
		want     error
	}{
		{"other loopback port", internal.URL + "/admin", ErrBlockedAddress},
		{"loopback by IPv6", "http://[::1]:" + itoa(internal.addrPort().Port()) + "/", ErrBlockedAddress},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/iam/", ErrBlockedAddress},
		{"private network", "https://10.0.0.5/", ErrBlockedAddress},
		{"mapped loopback", "http://[::ffff:127.0.0.1]:" + itoa(internal.addrPort().Port()) + "/", ErrBlockedAddress},
		{"file scheme", "file:///etc/passwd", ErrBlockedScheme},
		{"ftp scheme", "ftp://example.com/", ErrBlockedScheme},
		{"credentials", "http://user:pw@example.com/", ErrInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				front := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, tc.location, code)
				})
				// Only the front server's own endpoint is reachable on loopback.
				c := newClient(t, AllowLoopbackAddrsForTests(front.addrPort()))
				_, err := c.Get(context.Background(), front.URL)
				require.ErrorIs(t, err, tc.want, "status %d", code)
				require.Contains(t, err.Error(), "GET "+front.URL+": redirect to ")
				require.EqualValues(t, 1, front.hits.Load())
			}
		})
	}
	require.Zero(t, internal.hits.Load(), "the internal server was never reached")
}

// TestRedirectKeepsBodyOn307: a 307 resends the POST body to the next hop.
func TestRedirectKeepsBodyOn307(t *testing.T) {
	var got string
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/end", http.StatusTemporaryRedirect)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got = r.Method + " " + string(b)
	})
	_, err := newClient(t, AllowLoopbackForTests()).Do(context.Background(), Request{Method: http.MethodPost, URL: srv.URL + "/start", Body: []byte("payload")})
	require.NoError(t, err)
	require.Equal(t, "POST payload", got)
}
