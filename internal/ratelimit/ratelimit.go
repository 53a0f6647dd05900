// Package ratelimit keeps one token bucket per client (golang.org/x/time/rate)
// for the public HTTP surfaces. The buckets live in a bounded LRU, so an
// attacker rotating addresses costs a fixed amount of memory: the clients
// it pushes out are the least recently seen ones, whose buckets had
// refilled anyway unless they were busy moments ago.
package ratelimit

import (
	"fmt"
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"
)

// Limit is a bucket's refill rate (tokens per second) and size.
type Limit struct {
	PerSecond float64
	Burst     int
}

// Limiter rations tokens per client key.
type Limiter struct {
	limit Limit
	now   func() time.Time

	mu      sync.Mutex
	clients *simplelru.LRU[string, *rate.Limiter]
}

// New keeps at most maxClients buckets of limit l. now is the clock (nil:
// time.Now).
func New(l Limit, maxClients int, now func() time.Time) (*Limiter, error) {
	if l.PerSecond <= 0 || l.Burst <= 0 {
		return nil, fmt.Errorf("rate limit: rate and burst must be positive, got %v/s and %d", l.PerSecond, l.Burst)
	}
	clients, err := simplelru.NewLRU[string, *rate.Limiter](maxClients, nil)
	if err != nil {
		return nil, fmt.Errorf("rate limit: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Limiter{limit: l, now: now, clients: clients}, nil
}

// Limit returns the configured limit.
func (l *Limiter) Limit() Limit { return l.limit }

// Allow takes cost tokens from client's bucket. When the bucket holds too
// few it takes nothing and returns how long until it will hold them. A cost
// above the burst is charged as the whole burst, so every request can pass
// eventually.
func (l *Limiter) Allow(client string, cost int) (ok bool, retryAfter time.Duration) {
	if cost <= 0 {
		return true, 0
	}
	b := l.bucket(client)
	now := l.now()
	r := b.ReserveN(now, min(cost, l.limit.Burst))
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Take charges cost tokens to client whatever the bucket holds: a cost
// known only afterwards (the time a request took) can leave the bucket in
// debt, which the client's next requests wait out.
func (l *Limiter) Take(client string, cost int) {
	if cost <= 0 {
		return
	}
	l.bucket(client).ReserveN(l.now(), min(cost, l.limit.Burst))
}

func (l *Limiter) bucket(client string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, found := l.clients.Get(client)
	if !found {
		b = rate.NewLimiter(rate.Limit(l.limit.PerSecond), l.limit.Burst)
		l.clients.Add(client, b)
	}
	return b
}

// Clients is the number of buckets kept (at most maxClients).
func (l *Limiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.clients.Len()
}

// RetryAfterSeconds renders a wait as a Retry-After value: whole seconds,
// rounded up, at least 1.
func RetryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// ClientKey names the client of an address: an IPv4 address itself, an
// IPv6 address by its /64 (one subscriber's network, which can use any of
// its 2^64 addresses).
func ClientKey(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return a.String()
}
