package httpsafe

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBlockedURLs: refused before any connection is attempted, so none of
// these ever leave the machine.
func TestBlockedURLs(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		url  string
		want error
	}{
		{"http://10.0.0.1/", ErrBlockedAddress},
		{"http://172.16.5.4/", ErrBlockedAddress},
		{"http://192.168.0.1/", ErrBlockedAddress},
		{"http://127.0.0.1/", ErrBlockedAddress},
		{"http://127.1.2.3:443/", ErrBlockedAddress},
		{"http://169.254.169.254/latest/meta-data/", ErrBlockedAddress},
		{"http://100.64.0.1/", ErrBlockedAddress},
		{"http://0.0.0.0/", ErrBlockedAddress},
		{"http://224.0.0.1/", ErrBlockedAddress},
		{"http://255.255.255.255/", ErrBlockedAddress},
		{"http://198.18.0.1/", ErrBlockedAddress},
		{"http://203.0.113.1/", ErrBlockedAddress},
		{"http://240.0.0.1/", ErrBlockedAddress},
		{"http://[::1]/", ErrBlockedAddress},
		{"http://[::]/", ErrBlockedAddress},
		{"http://[::ffff:127.0.0.1]/", ErrBlockedAddress},
		{"http://[::ffff:a9fe:a9fe]/", ErrBlockedAddress},
		{"http://[fe80::1%25eth0]/", ErrBlockedAddress},
		{"http://[fc00::1]/", ErrBlockedAddress},
		{"http://[fd00:ec2::254]/", ErrBlockedAddress},
		{"http://[ff02::1]/", ErrBlockedAddress},
		{"http://[2001:db8::1]/", ErrBlockedAddress},
		{"http://[64:ff9b::a9fe:a9fe]/", ErrBlockedAddress},
		{"http://[2002:a9fe:a9fe::1]/", ErrBlockedAddress},
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", ErrBlockedAddress},
		{"https://10.0.0.1:8443/", ErrBlockedAddress},
		// Public addresses on other ports: refused before connecting.
		{"http://93.184.216.34:22/", ErrBlockedPort},
		{"https://[2606:4700:4700::1111]:8443/", ErrBlockedPort},
		// Schemes and URL shapes.
		{"ftp://example.com/file", ErrBlockedScheme},
		{"file:///etc/passwd", ErrBlockedScheme},
		{"gopher://example.com/", ErrBlockedScheme},
		{"//example.com/", ErrBlockedScheme},
		{"http://user:secret@example.com/", ErrInvalidURL},
		{"http:///path-only", ErrInvalidURL},
		{"http://[::1/", ErrInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			resp, err := c.Get(context.Background(), tc.url)
			require.ErrorIs(t, err, tc.want)
			require.True(t, IsPolicyError(err))
			require.Nil(t, resp)
		})
	}
}

// TestResolvedAddressesCheckedAtDial: a hostname is judged by what it
// resolves to when the connection is made, so an innocent-looking name (or a
// rebinding one) that answers with an internal address is refused.
func TestResolvedAddressesCheckedAtDial(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	port := srv.addrPort().Port()
	resolver := fakeResolver{
		"internal.example":    addrs("10.1.2.3"),
		"metadata.example":    addrs("169.254.169.254"),
		"v6-internal.example": addrs("fd00::1"),
		"mapped.example":      addrs("::ffff:192.168.1.1"),
		"mixed.example":       addrs("93.184.216.34", "127.0.0.1"),
		"local.example":       addrs("127.0.0.1"),
	}
	c := newClient(t, WithResolver(resolver), WithAllowedPorts(80, 443, port))
	for _, host := range []string{"internal.example", "metadata.example", "v6-internal.example", "mapped.example", "mixed.example", "local.example"} {
		t.Run(host, func(t *testing.T) {
			_, err := c.Get(context.Background(), "http://"+host+":"+itoa(port)+"/")
			require.ErrorIs(t, err, ErrBlockedAddress)
		})
	}
	require.Zero(t, srv.hits.Load(), "no refused request may reach the server")

	_, err := c.Get(context.Background(), "http://unknown.example/")
	require.Error(t, err)
	require.False(t, IsPolicyError(err), "a resolution failure is not a policy refusal")

	// The same name is reachable once the test option allows loopback: the
	// resolver is used, and its answer is what was checked.
	lc := newClient(t, WithResolver(resolver), AllowLoopbackForTests())
	resp, err := lc.Get(context.Background(), "http://local.example:"+itoa(port)+"/")
	require.NoError(t, err)
	require.Equal(t, "ok", string(resp.Body))
	require.EqualValues(t, 1, srv.hits.Load())
}

func TestLoopbackOnlyWithTestOption(t *testing.T) {
	var gotUA string
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.Header.Get("User-Agent")
		w.Header().Set("X-Test", "yes")
		_, _ = io.WriteString(w, "hello")
	})

	_, err := newClient(t).Get(context.Background(), srv.URL)
	require.ErrorIs(t, err, ErrBlockedAddress, "loopback is refused by default, whatever the port")
	_, err = newClient(t, WithAllowedPorts(srv.addrPort().Port())).Get(context.Background(), srv.URL)
	require.ErrorIs(t, err, ErrBlockedAddress, "allowing the port does not allow loopback")
	require.Zero(t, srv.hits.Load())

	for name, opt := range map[string]Option{
		"any loopback":  AllowLoopbackForTests(),
		"this endpoint": AllowLoopbackAddrsForTests(srv.addrPort()),
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := newClient(t, opt).Get(context.Background(), srv.URL+"/path")
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "hello", string(resp.Body))
			require.Equal(t, "yes", resp.Header.Get("X-Test"))
			require.Equal(t, "/path", resp.URL.Path)
			require.Equal(t, DefaultUserAgent, gotUA)
			require.Contains(t, gotUA, "Errata")
		})
	}
}

func TestRequestMethodHeadersAndBody(t *testing.T) {
	var method, ctype, ua string
	var body []byte
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		method, ctype, ua = r.Method, r.Header.Get("Content-Type"), r.Header.Get("User-Agent")
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTeapot)
	})
	c := newClient(t, AllowLoopbackForTests(), WithUserAgent("Errata-test/0"))
	resp, err := c.Do(context.Background(), Request{
		Method: http.MethodPost, URL: srv.URL, Body: []byte(`{"q":1}`),
		Header: http.Header{"Content-Type": {"application/json"}},
	})
	require.NoError(t, err, "a non-2xx status is a response, not an error")
	require.Equal(t, http.StatusTeapot, resp.StatusCode)
	require.Equal(t, http.MethodPost, method)
	require.Equal(t, "application/json", ctype)
	require.Equal(t, "Errata-test/0", ua)
	require.Equal(t, `{"q":1}`, string(body))
}

// TestEnvironmentProxyIgnored: a proxy in the environment would dial on our
// behalf, outside the dial check; the client never uses one.
func TestEnvironmentProxyIgnored(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("NO_PROXY", "")
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "direct") })
	resp, err := newClient(t, AllowLoopbackForTests()).Get(context.Background(), srv.URL)
	require.NoError(t, err)
	require.Equal(t, "direct", string(resp.Body))
}

func TestOptionsValidated(t *testing.T) {
	for name, opt := range map[string]Option{
		"zero timeout":       WithTimeout(0),
		"negative redirects": WithMaxRedirects(-1),
		"zero size":          WithMaxResponseBytes(0),
		"empty user agent":   WithUserAgent(""),
		"no ports":           WithAllowedPorts(),
		"port zero":          WithAllowedPorts(0, 443),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(opt)
			require.Error(t, err)
		})
	}
	c := newClient(t)
	require.Equal(t, DefaultTimeout, c.cfg.timeout)
	require.Equal(t, DefaultMaxRedirects, c.cfg.maxRedirects)
	require.EqualValues(t, DefaultMaxResponseBytes, c.cfg.maxBytes)
	require.Equal(t, map[uint16]bool{80: true, 443: true}, c.cfg.ports)
	require.False(t, c.cfg.loopbackAny)
	require.Empty(t, c.cfg.loopbackAddrs)
	require.Equal(t, 10*time.Second, c.hc.Timeout)
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }
