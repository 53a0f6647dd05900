package ops

import (
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/errata-dev/errata/internal/metrics"
)

// MetricsHandler serves reg in the Prometheus text format.
func MetricsHandler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          reg,
		EnableOpenMetrics: false,
	})
}

// Mount adds the request log and metrics (Middleware, and LogRefused for
// the requests the HTTP server refuses itself), /livez and /readyz to a
// public fiber app. /metrics is not among them: it is served on an
// operator's listener (MetricsMux), never to the public.
func Mount(app *fiber.App, m *metrics.HTTP, ready *Readiness, log *slog.Logger, opts ...Option) {
	LogRefused(app, m, log)
	app.Use(Middleware(m, log, opts...))
	app.Get("/livez", Livez)
	app.Get("/readyz", ready.Readyz)
}

// MetricsMux serves /metrics alone, for the API's operator listener
// (ERRATA_API_METRICS_ADDR).
func MetricsMux(reg *prometheus.Registry, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler(reg, log))
	return mux
}

// Mux serves /metrics, /livez, /readyz and /health on net/http: the
// worker's health port, an operator's port (never exposed to the public).
func Mux(reg *prometheus.Registry, ready *Readiness, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler(reg, log))
	mux.HandleFunc("GET /livez", LivezHTTP)
	mux.HandleFunc("GET /health", LivezHTTP)
	mux.Handle("GET /readyz", ready)
	return mux
}
