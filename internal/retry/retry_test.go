package retry_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/retry"
)

const ms = time.Millisecond

func TestDelayWithoutJitter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{"first retry is the base", 10 * time.Second, time.Hour, 1, 10 * time.Second},
		{"doubles", 10 * time.Second, time.Hour, 2, 20 * time.Second},
		{"doubles again", 10 * time.Second, time.Hour, 3, 40 * time.Second},
		{"doubles thrice", 10 * time.Second, time.Hour, 4, 80 * time.Second},
		{"n below 1 is the first retry", time.Second, time.Hour, 0, time.Second},
		{"negative n is the first retry", time.Second, time.Hour, -5, time.Second},
		{"capped", 100 * ms, time.Second, 5, time.Second},
		{"stays capped", 100 * ms, time.Second, 60, time.Second},
		{"huge n does not overflow", 100 * ms, time.Second, 1 << 30, time.Second},
		{"largest n", 100 * ms, time.Second, math.MaxInt, time.Second},
		{"base above max is capped", 5 * time.Second, time.Second, 1, time.Second},
		{"cap not a power of two", 3 * ms, 10 * ms, 3, 10 * ms},
		{"exactly at the cap", 5 * ms, 20 * ms, 3, 20 * ms},
		{"one past the cap", 5 * ms, 19 * ms, 3, 19 * ms},
		{"zero base", 0, time.Second, 3, 0},
		{"negative base", -time.Second, time.Second, 3, 0},
		{"no cap: 2^30 s", time.Second, 0, 31, time.Second << 30},
		{"no cap saturates, never wraps", time.Second, 0, 40, math.MaxInt64},
		{"no cap, shift of 63", 1, -1, 64, math.MaxInt64},
		{"no cap, largest exact shift", 1, 0, 63, 1 << 62},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := retry.Exponential{Base: tc.base, Max: tc.max}
			require.Equal(t, tc.want, e.Delay(tc.n))
			require.Equal(t, tc.want, e.Delay(tc.n), "without jitter a delay is exact")
		})
	}
}

// The jitter spreads the capped delay d over [d·(1−j), d·(1+j)], with the
// random source's lowest and highest draws at the ends.
func TestDelayJitterBounds(t *testing.T) {
	t.Parallel()
	lowest := func(int64) int64 { return 0 }
	highest := func(n int64) int64 { return n - 1 }
	var asked int64
	record := func(n int64) int64 { asked = n; return n / 2 }
	for _, tc := range []struct {
		name      string
		e         retry.Exponential
		n         int
		low, high time.Duration
	}{
		{"±10% of the base", retry.Exponential{Base: 100 * ms, Max: time.Second, Jitter: 0.1}, 1, 90 * ms, 110 * ms},
		{"±10% of a doubled delay", retry.Exponential{Base: 100 * ms, Max: time.Second, Jitter: 0.1}, 3, 360 * ms, 440 * ms},
		{"±10% of the cap", retry.Exponential{Base: 100 * ms, Max: time.Second, Jitter: 0.1}, 9, 900 * ms, 1100 * ms},
		{"full jitter", retry.Exponential{Base: time.Second, Max: time.Minute, Jitter: 1}, 1, 0, 2 * time.Second},
		{"jitter above 1 is 1", retry.Exponential{Base: time.Second, Max: time.Minute, Jitter: 7}, 1, 0, 2 * time.Second},
		{"negative jitter is none", retry.Exponential{Base: time.Second, Max: time.Minute, Jitter: -1}, 1, time.Second, time.Second},
		{"NaN jitter is none", retry.Exponential{Base: time.Second, Max: time.Minute, Jitter: math.NaN()}, 1, time.Second, time.Second},
		{"zero delay stays zero", retry.Exponential{Jitter: 0.5}, 4, 0, 0},
		{"a spread below 1ns is none", retry.Exponential{Base: 3, Max: 3, Jitter: 0.1}, 1, 3, 3},
		{"saturated delay never wraps", retry.Exponential{Base: time.Second, Jitter: 0.5}, 80, math.MaxInt64, math.MaxInt64},
		{"near saturation the spread shrinks", retry.Exponential{Base: math.MaxInt64 - 10, Jitter: 0.5}, 1, math.MaxInt64 - 20, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lo, hi := tc.e, tc.e
			lo.Rand, hi.Rand = lowest, highest
			require.Equal(t, tc.low, lo.Delay(tc.n), "lowest draw")
			require.Equal(t, tc.high, hi.Delay(tc.n), "highest draw")
		})
	}
	// The draw is asked for 2·spread+1 values: both ends are reachable.
	e := retry.Exponential{Base: 100 * ms, Max: time.Second, Jitter: 0.1, Rand: record}
	require.Equal(t, 100*ms, e.Delay(1))
	require.Equal(t, int64(20*ms+1), asked)
}

// With the real random source delays stay in bounds and differ. (The
// Kafka runner pins its own ±10% choice in internal/kafka.)
func TestDelayJitterWithRealRandom(t *testing.T) {
	t.Parallel()
	for _, e := range []retry.Exponential{
		{Base: 100 * ms, Max: time.Second, Jitter: 0.1},
		{Base: time.Second, Max: time.Minute, Jitter: 1},
	} {
		d0 := e.Base
		lo, hi := d0-time.Duration(float64(d0)*e.Jitter), d0+time.Duration(float64(d0)*e.Jitter)
		seen := map[time.Duration]bool{}
		for range 500 {
			d := e.Delay(1)
			require.GreaterOrEqual(t, d, lo)
			require.LessOrEqual(t, d, hi)
			seen[d] = true
		}
		require.Greater(t, len(seen), 1, "delays are jittered")
	}
}

func TestWaitHonoursRetryAfterUpToMax(t *testing.T) {
	t.Parallel()
	e := retry.Exponential{Base: time.Second, Max: 30 * time.Second}
	for _, tc := range []struct {
		n          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, time.Second},
		{3, 0, 4 * time.Second},
		{6, 0, 30 * time.Second},
		{1, 500 * ms, time.Second},            // shorter than the backoff: the backoff
		{1, 7 * time.Second, 7 * time.Second}, // longer: the server's
		{2, time.Hour, 30 * time.Second},      // longer than Max: Max
		{1, -time.Hour, time.Second},          // negative: ignored
		{1, math.MaxInt64, 30 * time.Second},
	} {
		require.Equal(t, tc.want, e.Wait(tc.n, tc.retryAfter), "n=%d retry-after=%s", tc.n, tc.retryAfter)
	}
	// Without a cap the server's wait is taken as it is.
	require.Equal(t, time.Hour, retry.Exponential{Base: time.Second}.Wait(1, time.Hour))
	// The jitter applies to the backoff, not to the server's wait.
	j := retry.Exponential{Base: time.Second, Max: time.Minute, Jitter: 0.5, Rand: func(int64) int64 { return 0 }}
	require.Equal(t, 10*time.Second, j.Wait(1, 10*time.Second))
	require.Equal(t, 500*ms, j.Wait(1, 0))
}

func TestSleep(t *testing.T) {
	t.Parallel()
	require.NoError(t, retry.Sleep(context.Background(), 0))
	require.NoError(t, retry.Sleep(context.Background(), -time.Second))
	require.NoError(t, retry.Sleep(context.Background(), time.Millisecond))

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, retry.Sleep(canceled, 0), context.Canceled)
	require.ErrorIs(t, retry.Sleep(canceled, time.Hour), context.Canceled)

	short, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer stop()
	require.ErrorIs(t, retry.Sleep(short, time.Hour), context.DeadlineExceeded)
}
