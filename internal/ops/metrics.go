package ops

import (
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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

// Mount adds the middleware, /metrics, /livez and /readyz to a fiber app.
func Mount(app *fiber.App, mw fiber.Handler, reg *prometheus.Registry, ready *Readiness, log *slog.Logger) {
	app.Use(mw)
	app.Get("/metrics", adaptor.HTTPHandler(MetricsHandler(reg, log)))
	app.Get("/livez", Livez)
	app.Get("/readyz", ready.Readyz)
}

// Mux serves /metrics, /livez, /readyz and /health on net/http (workers).
func Mux(reg *prometheus.Registry, ready *Readiness, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler(reg, log))
	mux.HandleFunc("GET /livez", LivezHTTP)
	mux.HandleFunc("GET /health", LivezHTTP)
	mux.Handle("GET /readyz", ready)
	return mux
}
