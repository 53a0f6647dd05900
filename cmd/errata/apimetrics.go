package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errata-dev/errata/internal/ops"
)

// serveAPIMetrics serves the API's /metrics on ERRATA_API_METRICS_ADDR, an
// operator's listener apart from the public one (the metrics name consumer
// groups, routes and store errors: nothing the public needs). Off: nothing
// is served. The address is bound before `errata serve` answers anything,
// so a taken port fails the start-up; stop shuts the listener down.
func serveAPIMetrics(e *env, reg *prometheus.Registry) (stop func(), err error) {
	if e.cfg.APIMetricsAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", e.cfg.APIMetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("api metrics listener: %w", err)
	}
	srv := &http.Server{Handler: ops.MetricsMux(reg, e.log), ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, IdleTimeout: time.Minute, ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("api metrics listener stopped", "err", err)
		}
	}()
	e.log.Info("api metrics listening", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
