package ops_test

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/ops"
)

// BenchmarkMiddleware prints the cost of the request middleware (metrics
// and a JSON log line per request) next to the same route without it,
// measured in the same run: overhead_ratio = with / without.
func BenchmarkMiddleware(b *testing.B) {
	newApp := func(withOps bool) *fiber.App {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		if withOps {
			log, err := logging.New(io.Discard, "json", "info")
			if err != nil {
				b.Fatal(err)
			}
			app.Use(ops.Middleware(metrics.NewHTTP(metrics.NewRegistry()), log))
		}
		app.Get("/trpc/post.batchStatus", func(c *fiber.Ctx) error { return c.SendString(`{"result":{"data":{}}}`) })
		return app
	}
	measure := func(app *fiber.App) time.Duration {
		start := time.Now()
		for range b.N {
			resp, err := app.Test(httptest.NewRequest("GET", "/trpc/post.batchStatus", nil), -1)
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
		return time.Since(start) / time.Duration(max(b.N, 1))
	}
	b.ResetTimer()
	raw := measure(newApp(false))
	with := measure(newApp(true))
	b.ReportMetric(float64(raw.Nanoseconds()), "raw_ns/req")
	b.ReportMetric(float64(with.Nanoseconds()), "ops_ns/req")
	b.ReportMetric(float64(with)/float64(raw), "overhead_ratio")
}
