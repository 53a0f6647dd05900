package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/errata-dev/errata/projections/serving"
)

// startStatusCache builds the API's status cache over the serving pool
// (api.WithStatusCache) with ERRATA_STATUS_CACHE_ENTRIES entries, keeps
// it listening until stop, and counts its hits, misses, invalidations and
// reconnects on the process's metrics.
func startStatusCache(ctx context.Context, e *env, pool *pgxpool.Pool) (cache *serving.StatusCache, stop func()) {
	cache = serving.NewStatusCache(pool, serving.NewReader(pool), serving.StatusCacheConfig{MaxEntries: e.cfg.StatusCacheEntries}, e.log)
	for _, c := range []struct {
		name, help string
		read       func(serving.StatusCacheStats) uint64
	}{
		{"hits", "recordViewAndGetStatus status reads answered from the API's status cache.", func(s serving.StatusCacheStats) uint64 { return s.Hits }},
		{"misses", "Status reads the status cache sent to the serving projection.", func(s serving.StatusCacheStats) uint64 { return s.Misses }},
		{"invalidations", "Serving projection commits that invalidated cached statuses.", func(s serving.StatusCacheStats) uint64 { return s.Invalidations }},
		{"reconnects", "Times the status cache listened again after losing its connection (it serves nothing meanwhile).", func(s serving.StatusCacheStats) uint64 { return s.Reconnects }},
	} {
		e.metrics.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "errata_status_cache_" + c.name + "_total", Help: c.help},
			func() float64 { return float64(c.read(cache.Stats())) }))
	}
	return cache, cache.Start(ctx)
}
