package httpsafe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoopbackOptionsPanicOutsideTests builds a non-test binary that asks for
// loopback access and checks that it panics: production code cannot enable
// it, whatever its configuration.
func TestLoopbackOptionsPanicOutsideTests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	bin := filepath.Join(t.TempDir(), "loopbackguard")
	out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/loopbackguard").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, which := range []string{"any", "addrs"} {
		out, err := exec.Command(bin, which).CombinedOutput()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%s: %v %s", which, err, out)
		require.Equal(t, 3, exit.ExitCode(), "%s", out)
		require.Contains(t, string(out), "only available in tests")
	}
}

// TestControlHookChecksSocketAddress: the last check, on the raw socket
// address right before connect, refuses what the policy refuses.
func TestControlHookChecksSocketAddress(t *testing.T) {
	d := newDialer(&policy{ports: map[uint16]bool{80: true, 443: true}}, nil)
	require.NoError(t, d.control("tcp4", "93.184.216.34:443", nil))
	require.ErrorIs(t, d.control("tcp4", "127.0.0.1:443", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp6", "[::ffff:10.0.0.1]:80", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp6", "[fe80::1%eth0]:80", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp4", "93.184.216.34:25", nil), ErrBlockedPort)
	require.ErrorIs(t, d.control("tcp4", "not-an-address", nil), ErrBlockedAddress)
}

// rebindingResolver answers a name with the allowed address first and an
// internal one afterwards, as a DNS rebinding attacker's server would.
type rebindingResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

// TestDNSRebindingBlockedAtDial: every new connection resolves and checks
// again, so a name that turns internal after a first good answer is refused.
func TestDNSRebindingBlockedAtDial(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close") // every request dials anew
		_, _ = io.WriteString(w, "ok")
	})
	resolver := &rebindingResolver{answers: [][]netip.Addr{addrs("127.0.0.1"), addrs("10.0.0.7")}}
	c := newClient(t, WithResolver(resolver), AllowLoopbackAddrsForTests(srv.addrPort()))
	target := "http://rebind.example:" + itoa(srv.addrPort().Port()) + "/"

	resp, err := c.Get(context.Background(), target)
	require.NoError(t, err)
	require.Equal(t, "ok", string(resp.Body))

	_, err = c.Get(context.Background(), target)
	require.ErrorIs(t, err, ErrBlockedAddress)
	require.Contains(t, err.Error(), "10.0.0.7")
	require.Equal(t, 2, resolver.calls)
	require.EqualValues(t, 1, srv.hits.Load())
}
