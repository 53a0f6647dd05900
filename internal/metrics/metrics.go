// Package metrics defines Errata's Prometheus metrics: HTTP requests,
// consumer throughput and lag, model tokens and cost, investigations by
// state. Every constructor registers on the registry it is given; nothing
// here touches Prometheus's global default registry.
package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// namespace prefixes every Errata metric.
const namespace = "errata"

// NewRegistry returns a registry holding the Go runtime and process
// collectors, ready for Errata's own metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// durationBuckets span a fast read (1 ms) to a slow batch or request (60 s).
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// cached runs an expensive read at most once per ttl, bounded by timeout,
// and keeps its last result: scrapes from several Prometheus servers, or
// scrapes faster than the read is worth, share one answer.
type cached[T any] struct {
	ttl, timeout time.Duration
	now          func() time.Time
	read         func(ctx context.Context) (T, error)

	mu   sync.Mutex
	at   time.Time
	val  T
	err  error
	have bool
}

func (c *cached[T]) get() (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if c.have && now.Sub(c.at) < c.ttl {
		return c.val, c.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	c.val, c.err = c.read(ctx)
	c.at, c.have = now, true
	return c.val, c.err
}
