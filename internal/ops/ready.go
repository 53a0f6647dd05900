package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Check is one dependency a process needs to do its work.
type Check struct {
	Name string
	Run  func(ctx context.Context) error
	// Degrades marks a check whose failure leaves the process serving: it
	// is reported (Report.Degraded) but the process stays ready.
	Degrades bool
}

// CheckResult is a check's outcome as /readyz reports it. Error details stay
// in the log: the body is public and must not describe internal hosts.
type CheckResult struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Degraded: a failed check that leaves the process ready.
	Degraded   bool    `json:"degraded,omitempty"`
	DurationMS float64 `json:"durationMs"`
	// Detail is what a failed check chose to publish (DetailError).
	Detail any `json:"detail,omitempty"`
}

// DetailError is a check failure with a detail safe for the public body:
// names and counts, never hosts or error text.
type DetailError struct {
	Err    error
	Detail any
}

func (e *DetailError) Error() string { return e.Err.Error() }

func (e *DetailError) Unwrap() error { return e.Err }

// Report is the /readyz body.
type Report struct {
	Ready bool `json:"ready"`
	// Degraded names the failed checks that leave the process ready (it
	// serves, but something behind it is wrong).
	Degraded []string      `json:"degraded,omitempty"`
	Checks   []CheckResult `json:"checks"`
}

// HeaderDegraded carries Report.Degraded, comma-separated, on a ready
// answer, for load balancers that look at headers only.
const HeaderDegraded = "X-Errata-Degraded"

// Readiness runs its checks concurrently, each bounded by a timeout.
type Readiness struct {
	checks  []Check
	timeout time.Duration
	log     *slog.Logger
}

// NewReadiness returns a readiness probe over checks; timeout <= 0 means 2 s.
func NewReadiness(checks []Check, timeout time.Duration, log *slog.Logger) *Readiness {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return &Readiness{checks: checks, timeout: timeout, log: log}
}

// Check runs every check and reports; Ready when every check passes except
// degrading ones, which are listed in Degraded when they fail.
func (r *Readiness) Check(ctx context.Context) Report {
	rep := Report{Ready: true, Checks: make([]CheckResult, len(r.checks))}
	var wg sync.WaitGroup
	for i, c := range r.checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, r.timeout)
			defer cancel()
			start := time.Now()
			err := c.Run(cctx)
			rep.Checks[i] = CheckResult{Name: c.Name, OK: err == nil, Degraded: err != nil && c.Degrades,
				DurationMS: float64(time.Since(start).Microseconds()) / 1000}
			if de := (*DetailError)(nil); errors.As(err, &de) {
				rep.Checks[i].Detail = de.Detail
			}
			if err != nil {
				r.log.Warn("readiness check failed", "check", c.Name, "degrades", c.Degrades, "err", err)
			}
		})
	}
	wg.Wait()
	for _, c := range rep.Checks {
		if c.Degraded {
			rep.Degraded = append(rep.Degraded, c.Name)
			continue
		}
		rep.Ready = rep.Ready && c.OK
	}
	return rep
}

// Livez answers 200 while the process serves.
func Livez(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) }

// Readyz answers the readiness report: 200 when ready (degraded or not;
// HeaderDegraded names the degraded checks), else 503.
func (r *Readiness) Readyz(c *fiber.Ctx) error {
	rep := r.Check(c.UserContext())
	if !rep.Ready {
		c.Status(fiber.StatusServiceUnavailable)
	} else if len(rep.Degraded) > 0 {
		c.Set(HeaderDegraded, strings.Join(rep.Degraded, ","))
	}
	return c.JSON(rep)
}

// ServeHTTP is Readyz for net/http servers (the worker's).
func (r *Readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rep := r.Check(req.Context())
	w.Header().Set("Content-Type", "application/json")
	if rep.Ready && len(rep.Degraded) > 0 {
		w.Header().Set(HeaderDegraded, strings.Join(rep.Degraded, ","))
	}
	if !rep.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(rep)
}

// LivezHTTP is Livez for net/http servers.
func LivezHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"status":"ok"}`))
}

// KafkaCheck asks a broker for metadata.
func KafkaCheck(cl *kgo.Client) Check {
	return Check{Name: "kafka", Run: func(ctx context.Context) error {
		if err := cl.Ping(ctx); err != nil {
			return fmt.Errorf("kafka metadata: %w", err)
		}
		return nil
	}}
}

// PostgresCheck pings the pool.
func PostgresCheck(pool *pgxpool.Pool) Check {
	return Check{Name: "postgres", Run: func(ctx context.Context) error {
		if err := pool.Ping(ctx); err != nil {
			return fmt.Errorf("postgres ping: %w", err)
		}
		return nil
	}}
}

// HTTPCheck GETs path on the service at rawURL and wants a 2xx answer.
// Credentials in the URL are sent as basic auth. A non-HTTP URL (ClickHouse's
// native clickhouse://) is checked by opening a TCP connection.
func HTTPCheck(name, rawURL, path string) Check {
	return Check{Name: name, Run: func(ctx context.Context) error {
		u, err := url.Parse(rawURL)
		if err != nil {
			return fmt.Errorf("%s URL: %w", name, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", u.Host)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return conn.Close()
		}
		user := u.User
		u.User = nil
		u.Path = strings.TrimRight(u.Path, "/") + path
		u.RawQuery = ""
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			return err
		}
		if user != nil {
			pw, _ := user.Password()
			req.SetBasicAuth(user.Username(), pw)
		}
		resp, err := checkClient.Do(req)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return fmt.Errorf("%s answered %d", name, resp.StatusCode)
		}
		return nil
	}}
}

// checkClient follows no redirects: a readiness check talks to one service.
var checkClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return errNoRedirect }}

var errNoRedirect = errors.New("readiness checks follow no redirects")
