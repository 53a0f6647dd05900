package ops

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/internal/metrics"
)

// HeaderRequestID carries a request's id in and out. A valid incoming id is
// kept (the API also uses it as the events' correlation id); otherwise one
// is made.
const HeaderRequestID = "X-Request-Id"

// RouteUnmatched labels requests no route answered, so unknown URLs cannot
// create new series.
const RouteUnmatched = "unmatched"

// quietRoutes are polled by probes and Prometheus: logged at debug only.
var quietRoutes = map[string]bool{"/livez": true, "/readyz": true, "/metrics": true, "/health": true}

// AccessLog chooses which answered requests get a log line. Every request
// is measured (metrics) whatever it says; errors (5xx) and slow requests
// are always logged.
type AccessLog struct {
	// Every logs one request in Every (1: each request, the default of
	// Middleware; 0: only errors and slow requests).
	Every int
	// Slow: a request that took at least this long is always logged (0: no
	// threshold).
	Slow time.Duration
}

// Option adjusts Middleware and Mount.
type Option func(*AccessLog)

// WithAccessLog replaces the default access log (a line per request).
func WithAccessLog(a AccessLog) Option {
	return func(dst *AccessLog) { *dst = a }
}

// Middleware measures and logs requests after they are answered (every
// request unless WithAccessLog says otherwise): route template (never the
// raw URL or query), method, status, duration and request id. Headers are
// never logged, so API keys (x-api-key, x-openai-api-key, Authorization)
// cannot reach a log line. Mount it first.
func Middleware(m *metrics.HTTP, log *slog.Logger, opts ...Option) fiber.Handler {
	policy := AccessLog{Every: 1}
	for _, o := range opts {
		o(&policy)
	}
	// seen counts the requests the sampling applies to.
	var seen atomic.Uint64
	return func(c *fiber.Ctx) error {
		start := time.Now()
		self := c.Route()
		// fiber's strings point into reused buffers: copy what outlives the call.
		id := strings.Clone(c.Get(HeaderRequestID))
		if !validRequestID(id) {
			id = uuid.NewString()
			c.Request().Header.Set(HeaderRequestID, id)
		}
		c.Set(HeaderRequestID, id)
		err := c.Next()
		if err != nil {
			// Render the error now, as fiber would after the chain, so the
			// status measured is the status sent.
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		route := RouteUnmatched
		if r := c.Route(); r != self && r.Path != "" {
			route = r.Path
		}
		status := c.Response().StatusCode()
		took := time.Since(start)
		method := strings.Clone(c.Method())
		if m != nil {
			m.Observe(route, method, status, took)
		}
		level := slog.LevelInfo
		switch {
		case status >= 500:
			level = slog.LevelError
		case policy.Slow > 0 && took >= policy.Slow:
		case quietRoutes[route]:
			level = slog.LevelDebug
		case policy.Every == 1:
		case policy.Every < 1 || seen.Add(1)%uint64(policy.Every) != 0:
			return nil
		}
		log.LogAttrs(c.UserContext(), level, "request",
			slog.String("route", route), slog.String("method", method), slog.Int("status", status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.String("request_id", id))
		return nil
	}
}

// validRequestID accepts short printable ASCII ids without spaces.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' })
}
