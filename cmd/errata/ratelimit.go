package main

import (
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/ratelimit"
)

// The per-client rate limits of `errata serve` (ERRATA_RATE_LIMIT*); nil
// when ERRATA_RATE_LIMIT=off. Each process keeps its own buckets: behind a
// load balancer a client's budget is per replica.

// graphQLRateLimit rations /graphql in cost points.
func graphQLRateLimit(cfg config.Config) (*ratelimit.Limiter, error) {
	if !cfg.RateLimit {
		return nil, nil
	}
	return ratelimit.New(ratelimit.Limit{PerSecond: float64(cfg.GraphQLRate), Burst: cfg.GraphQLBurst}, cfg.RateLimitClients, nil)
}

// tRPCRateLimit rations the extension's tRPC procedures in calls.
func tRPCRateLimit(cfg config.Config) (*ratelimit.Limiter, error) {
	if !cfg.RateLimit {
		return nil, nil
	}
	return ratelimit.New(ratelimit.Limit{PerSecond: float64(cfg.TRPCRate), Burst: cfg.TRPCBurst}, cfg.RateLimitClients, nil)
}
