package ratelimit

import (
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestLimiter(t *testing.T, l Limit, maxClients int) (*Limiter, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	lim, err := New(l, maxClients, c.now)
	require.NoError(t, err)
	return lim, c
}

// A bucket lets its burst through, then refuses with the exact wait, and
// refills at its rate; clients do not share buckets.
func TestAllow(t *testing.T) {
	lim, c := newTestLimiter(t, Limit{PerSecond: 2, Burst: 5}, 100)
	for i := range 5 {
		ok, wait := lim.Allow("a", 1)
		require.True(t, ok, "request %d", i)
		require.Zero(t, wait)
	}
	ok, wait := lim.Allow("a", 1)
	require.False(t, ok)
	require.Equal(t, 500*time.Millisecond, wait, "one token at 2/s")
	ok, wait = lim.Allow("a", 3)
	require.False(t, ok)
	require.Equal(t, 1500*time.Millisecond, wait, "a refused request takes nothing")

	ok, _ = lim.Allow("b", 5)
	require.True(t, ok, "another client has its own bucket")

	c.t = c.t.Add(time.Second)
	ok, _ = lim.Allow("a", 2)
	require.True(t, ok, "two tokens after one second")
	ok, _ = lim.Allow("a", 1)
	require.False(t, ok)
}

// A cost above the burst is charged as the whole burst: it passes on a full
// bucket and then waits for a full refill.
func TestAllowCostAboveBurst(t *testing.T) {
	lim, c := newTestLimiter(t, Limit{PerSecond: 10, Burst: 100}, 10)
	ok, _ := lim.Allow("a", 1000)
	require.True(t, ok)
	ok, wait := lim.Allow("a", 1000)
	require.False(t, ok)
	require.Equal(t, 10*time.Second, wait)
	c.t = c.t.Add(10 * time.Second)
	ok, _ = lim.Allow("a", 1000)
	require.True(t, ok)
	ok, _ = lim.Allow("a", 0)
	require.True(t, ok, "nothing to charge")
}

// Take charges even an empty bucket: the debt delays the next request.
func TestTakeLeavesDebt(t *testing.T) {
	lim, c := newTestLimiter(t, Limit{PerSecond: 10, Burst: 20}, 10)
	ok, _ := lim.Allow("a", 15)
	require.True(t, ok)
	lim.Take("a", 15) // 5 left, 15 taken: 10 in debt
	ok, wait := lim.Allow("a", 1)
	require.False(t, ok)
	require.Equal(t, 1100*time.Millisecond, wait, "the debt of 10 and the token asked for, at 10/s")
	c.t = c.t.Add(1100 * time.Millisecond)
	ok, _ = lim.Allow("a", 1)
	require.True(t, ok)
	lim.Take("a", 0)
	lim.Take("b", 100) // charged as the whole burst
	ok, wait = lim.Allow("b", 1)
	require.False(t, ok)
	require.Equal(t, 100*time.Millisecond, wait)
}

// However many addresses an attacker rotates through, the limiter keeps at
// most maxClients buckets; the busiest recent client keeps its own.
func TestBoundedClients(t *testing.T) {
	lim, _ := newTestLimiter(t, Limit{PerSecond: 1, Burst: 2}, 1000)
	require.True(t, mustAllow(lim, "victim"))
	require.True(t, mustAllow(lim, "victim"))
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 200_000 {
		lim.Allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), 1)
		if i%100 == 0 {
			require.False(t, mustAllow(lim, "victim"), "the victim's empty bucket survives the rotation")
		}
	}
	require.Equal(t, 1000, lim.Clients())
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(1<<20), "1,000 buckets take well under 1 MiB")
}

func mustAllow(l *Limiter, key string) bool {
	ok, _ := l.Allow(key, 1)
	return ok
}

func TestClientKey(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, ClientKey(netip.MustParseAddr(tc.addr)), tc.addr)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	require.Equal(t, 1, RetryAfterSeconds(time.Millisecond))
	require.Equal(t, 1, RetryAfterSeconds(time.Second))
	require.Equal(t, 2, RetryAfterSeconds(1001*time.Millisecond))
	require.Equal(t, 1, RetryAfterSeconds(0))
}

func TestNewRefusesNonsense(t *testing.T) {
	_, err := New(Limit{PerSecond: 0, Burst: 1}, 10, nil)
	require.Error(t, err)
	_, err = New(Limit{PerSecond: 1, Burst: 0}, 10, nil)
	require.Error(t, err)
	_, err = New(Limit{PerSecond: 1, Burst: 1}, 0, nil)
	require.Error(t, err)
}
