// Package retry is the one way Errata waits between tries: a capped
// exponential backoff (Exponential), the one reader of a server's
// Retry-After (After), and a wait that ends with its context (Sleep).
//
// It is plumbing: it imports only the standard library. Callers keep their
// own policy (how many tries, which failures are worth another one); this
// package only says how long to wait.
//
// Why not github.com/cenkalti/backoff: its ExponentialBackOff is a stateful
// iterator (NextBackOff) with a global random source, while our callers
// need the delay of attempt n as a pure function (the investigator records
// it in its events as RetryAt; the Kafka runner keeps failure streaks per
// partition), exact delays where there is no jitter, an injectable random
// source in tests, and a Retry-After reader, which it does not have.
package retry

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Exponential is a capped exponential backoff: Base before the first retry,
// doubling with each retry, never above Max, then spread by Jitter.
//
// The zero Jitter gives exact delays (a caller whose delays are recorded or
// asserted wants that). Jitter j draws each delay d uniformly from
// [d·(1−j), d·(1+j)], so many clients failing together do not retry in
// step; Max caps d before the spread.
type Exponential struct {
	// Base is the delay before the first retry; zero or negative: no wait.
	Base time.Duration
	// Max caps the delay before jitter. Zero or negative: no cap below the
	// largest time.Duration (delays saturate there, never wrap around).
	Max time.Duration
	// Jitter is the spread as a fraction of the delay, in [0, 1] (values
	// outside are clamped).
	Jitter float64
	// Rand returns a uniform integer in [0, n) for n > 0; nil uses
	// math/rand/v2. Tests inject a fixed one.
	Rand func(n int64) int64
}

// Delay is the wait before retry n (1-based: the wait after the n-th
// failure); n below 1 counts as 1.
func (e Exponential) Delay(n int) time.Duration {
	d := e.capped(n)
	j := min(e.Jitter, 1)
	if d <= 0 || !(j > 0) { // !(j > 0) also refuses NaN
		return d
	}
	// spread ≤ d, and ≤ MaxInt64-d, so d+spread and 2·spread+1 never
	// overflow.
	spread := min(time.Duration(float64(d)*j), math.MaxInt64-d)
	if spread == 0 {
		return d
	}
	draw := rand.Int64N
	if e.Rand != nil {
		draw = e.Rand
	}
	return d - spread + time.Duration(draw(int64(2*spread)+1))
}

// Wait is the wait before retry n when the server asked for retryAfter (0
// when it did not): the longer of Delay(n) and retryAfter, a server's wish
// honoured up to Max and no further.
func (e Exponential) Wait(n int, retryAfter time.Duration) time.Duration {
	return max(e.Delay(n), min(retryAfter, e.limit()))
}

// capped is Base·2^(n-1), at most the cap, computed without overflow.
func (e Exponential) capped(n int) time.Duration {
	limit := e.limit()
	if e.Base <= 0 {
		return 0
	}
	shift := max(n, 1) - 1
	if shift >= 63 || e.Base > limit>>shift {
		return limit
	}
	return e.Base << shift
}

func (e Exponential) limit() time.Duration {
	if e.Max <= 0 {
		return math.MaxInt64
	}
	return e.Max
}

// Sleep waits for d, or until ctx ends (its error then). A d of zero or
// less returns at once with ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
