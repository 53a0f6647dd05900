package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/pprof/profile"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/postgres"
)

// ViewPathResult is the view path (recordViewAndGetStatus on one
// registered version) at a fixed concurrency beside its true limit, a bare
// handler doing one acks=all idempotent produce and one primary-key select
// per request, and fiber echo; plus what the access log costs.
type ViewPathResult struct {
	Concurrency int         `json:"concurrency"`
	API         FixedLoad   `json:"api"`
	Baseline    FixedLoad   `json:"produce_select_baseline"`
	Echo        FixedLoad   `json:"echo_baseline"`
	AccessLog   []FixedLoad `json:"access_log"`
}

// FixedLoad is one load run of a single request repeated.
type FixedLoad struct {
	Target         string  `json:"target"`
	Requests       int     `json:"requests"`
	Errors         int     `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	Seconds        float64 `json:"seconds"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	Latency        Latency `json:"latency"`
	// PeakRSSMB is the largest resident set of the measured process seen
	// during the run (sampled every 100 ms).
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// ServerCPUShare is the share of the process's CPU samples outside the
	// load generator; Top its three largest costs by function (flat).
	ServerCPUShare float64 `json:"server_cpu_share,omitempty"`
	Top            []Cost  `json:"top_costs,omitempty"`
}

// Cost is a function's share of the server side's CPU samples.
type Cost struct {
	Function string  `json:"function"`
	Share    float64 `json:"share"`
}

// FixedRequest is the one request a fixed load repeats.
type FixedRequest struct {
	Method string
	URL    string
	Body   []byte
	// Check validates an answer's body (nil: any 200).
	Check func(body []byte) error
}

// labelClient marks the load generator's goroutines in CPU profiles, so
// the summary counts the server side only.
const labelClient = "bench-side"

// Profiling says whether a load run profiles this process's CPU.
type Profiling struct {
	On bool
	// SaveTo, when set, also keeps the raw profile there (go tool pprof).
	SaveTo string
}

// RunFixed sends req from concurrency keep-alive clients for d. With
// prof.On, the process's CPU is profiled over the run and summarised;
// rssPID names the process whose RSS is sampled (0: this one, -1: none).
func RunFixed(ctx context.Context, name string, req FixedRequest, concurrency int, d time.Duration, prof Profiling, rssPID int) (FixedLoad, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: concurrency, MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency,
		IdleConnTimeout: 90 * time.Second, DisableCompression: true,
	}}
	defer client.CloseIdleConnections()
	mac := hmac.New(sha256.New, []byte(attestationKey))
	mac.Write(req.Body)
	signature := hex.EncodeToString(mac.Sum(nil))

	var raw bytes.Buffer
	profileCPU := prof.On
	if profileCPU {
		if err := pprof.StartCPUProfile(&raw); err != nil {
			profileCPU = false // another profile runs (go test -cpuprofile): no summary
		}
	}
	stopRSS := sampleRSS(rssPID)
	type result struct {
		lat      []time.Duration
		errs     int
		firstErr error
	}
	results := make([]result, concurrency)
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range concurrency {
		wg.Add(1)
		go pprof.Do(ctx, pprof.Labels(labelClient, "load generator"), func(ctx context.Context) {
			defer wg.Done()
			r := &results[w]
			ua := "errata-bench/view/" + strconv.Itoa(w)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := fixedCall(ctx, client, req, ua, signature)
				r.lat = append(r.lat, time.Since(t0))
				if err != nil {
					r.errs++
					if r.firstErr == nil {
						r.firstErr = err
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	out := FixedLoad{Target: name, Seconds: elapsed.Seconds(), PeakRSSMB: stopRSS()}
	if profileCPU {
		pprof.StopCPUProfile()
		out.ServerCPUShare, out.Top = summarizeProfile(raw.Bytes(), 3)
		if prof.SaveTo != "" {
			if err := os.WriteFile(prof.SaveTo, raw.Bytes(), 0o600); err != nil {
				return out, fmt.Errorf("save profile: %w", err)
			}
		}
	}
	var all []time.Duration
	for _, r := range results {
		all = append(all, r.lat...)
		out.Errors += r.errs
		if r.firstErr != nil && out.FirstError == "" {
			out.FirstError = r.firstErr.Error()
		}
	}
	out.Requests = len(all)
	out.RequestsPerSec = float64(out.Requests) / elapsed.Seconds()
	out.Latency = Summarize(all)
	return out, ctx.Err()
}

func fixedCall(ctx context.Context, client *http.Client, fr FixedRequest, userAgent, signature string) error {
	var body io.Reader
	if fr.Body != nil {
		body = bytes.NewReader(fr.Body)
	}
	req, err := http.NewRequestWithContext(ctx, fr.Method, fr.URL, body)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("x-openerrata-extension-version", extensionVersion)
	if fr.Body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-openerrata-signature", signature)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, answer)
	}
	if fr.Check != nil {
		return fr.Check(answer)
	}
	return nil
}

// summarizeProfile returns the share of CPU samples outside the load
// generator and, among them, the n functions with the most flat samples.
func summarizeProfile(raw []byte, n int) (float64, []Cost) {
	p, err := profile.ParseData(raw)
	if err != nil || len(p.SampleType) == 0 {
		return 0, nil
	}
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	var total, server int64
	flat := map[string]int64{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		if len(s.Label[labelClient]) > 0 || len(s.Location) == 0 {
			continue
		}
		server += v
		if lines := s.Location[0].Line; len(lines) > 0 && lines[0].Function != nil {
			flat[lines[0].Function.Name] += v
		}
	}
	if total == 0 || server == 0 {
		return 0, nil
	}
	costs := make([]Cost, 0, len(flat))
	for fn, v := range flat {
		costs = append(costs, Cost{Function: fn, Share: float64(v) / float64(server)})
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i].Share > costs[j].Share })
	return float64(server) / float64(total), costs[:min(n, len(costs))]
}

// sampleRSS samples the resident set of pid (0: this process, -1: none)
// every 100 ms until the returned function is called, which returns the
// largest in MB.
func sampleRSS(pid int) func() float64 {
	if pid < 0 {
		return func() float64 { return 0 }
	}
	path := "/proc/self/status"
	if pid > 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/status"
	}
	var peak atomic.Int64
	read := func() {
		if kb := rssKB(path); kb > peak.Load() {
			peak.Store(kb)
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		<-stopped
		read()
		return float64(peak.Load()) / 1024
	}
}

// rssKB reads VmRSS from a /proc status file (0 when unreadable: not Linux).
func rssKB(path string) int64 {
	raw, err := os.ReadFile(path) //nolint:gosec // a /proc path built from a pid
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// profiling profiles a view-path run, kept in ProfileDir when set.
func (o Options) profiling(name string) Profiling {
	p := Profiling{On: true}
	if o.ProfileDir != "" {
		p.SaveTo = filepath.Join(o.ProfileDir, name+".cpu.pprof")
	}
	return p
}

// viewRequest is recordViewAndGetStatus of p, answered NOT_INVESTIGATED.
func viewRequest(baseURL string, p Post) FixedRequest {
	body := p.ViewBody()
	return FixedRequest{Method: http.MethodPost, URL: baseURL + "/trpc/post.recordViewAndGetStatus", Body: body,
		Check: func(answer []byte) error { return checkView(LoadTarget{}, body, answer) }}
}

// runViewPath measures the view path on a stack of its own (topics and
// schema "view"), then its baselines, at opt.ViewConcurrency.
func runViewPath(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) error {
	topics, err := rs.Topics(ctx, "view", opt.Partitions)
	if err != nil {
		return err
	}
	progress("view path: a stack of its own, one registered version")
	stack, err := StartStack(ctx, opt.apiStack(rs, "view", topics))
	if err != nil {
		return fmt.Errorf("start view-path API: %w", err)
	}
	defer func() { _ = stack.Close() }()
	post, err := NewPost(1_000_000, 0, opt.Words)
	if err != nil {
		return err
	}
	if _, err := stack.register(ctx, post, time.Minute); err != nil {
		return fmt.Errorf("view path registration: %w", err)
	}
	vp := ViewPathResult{Concurrency: opt.ViewConcurrency}
	c, d := opt.ViewConcurrency, opt.APIDuration
	progress("view path: recordViewAndGetStatus, %d clients, %s (CPU profiled)", c, d)
	if vp.API, err = RunFixed(ctx, "recordViewAndGetStatus", viewRequest(stack.URL, post), c, d, opt.profiling("view"), 0); err != nil {
		return err
	}
	served, _ := stack.Served("/trpc/post.recordViewAndGetStatus")
	res.check("view path without errors", vp.API.Errors == 0, "%d errors of %d requests %s", vp.API.Errors, vp.API.Requests, vp.API.FirstError)
	res.check("server answered every view of the view path", served == vp.API.Requests, "server %d, load generator %d", served, vp.API.Requests)

	baseTopic, err := rs.Topic(ctx, "viewbase", opt.Partitions)
	if err != nil {
		return err
	}
	baseURL, stopBase, err := StartProduceSelect(ctx, opt.Brokers, baseTopic, rs.DatabaseURL, "view")
	if err != nil {
		return err
	}
	progress("view path baseline: bare fiber handler, one acks=all idempotent produce + one pgx primary-key select")
	vp.Baseline, err = RunFixed(ctx, "produce+select", FixedRequest{Method: http.MethodPost, URL: baseURL + "/view/" + post.PostVersionID,
		Body: post.ViewBody()}, c, d, opt.profiling("produce-select"), 0)
	if err = errors.Join(err, stopBase()); err != nil {
		return err
	}
	res.check("produce+select baseline without errors", vp.Baseline.Errors == 0, "%d errors of %d %s", vp.Baseline.Errors, vp.Baseline.Requests, vp.Baseline.FirstError)

	progress("view path baselines: fiber echo, and echo with the access log every request / sampled / off")
	for _, policy := range []struct {
		name  string
		mount bool
		al    ops.AccessLog
	}{{"echo", false, ops.AccessLog{}}, {"echo + access log every request", true, ops.AccessLog{Every: 1}},
		{"echo + access log 1 in 100", true, ops.AccessLog{Every: 100, Slow: time.Second}}} {
		url, stop, err := startLoggedEcho(policy.mount, policy.al)
		if err != nil {
			return err
		}
		load, err := RunFixed(ctx, policy.name, FixedRequest{Method: http.MethodPost, URL: url + "/echo/view", Body: post.ViewBody()}, c, d, Profiling{On: !policy.mount}, 0)
		if err = errors.Join(err, stop()); err != nil {
			return err
		}
		res.check(policy.name+" without errors", load.Errors == 0, "%d errors of %d %s", load.Errors, load.Requests, load.FirstError)
		if !policy.mount {
			vp.Echo = load
		} else {
			vp.AccessLog = append(vp.AccessLog, load)
		}
	}
	res.ViewPath = &vp
	return nil
}

// StartProduceSelect serves the view path's true limit: POST /view/:id
// appends one record (the body, keyed by the id) with acks=all and an
// idempotent producer, then selects the post version by primary key.
func StartProduceSelect(ctx context.Context, brokers []string, topic, databaseURL, schema string) (url string, stop func() error, err error) {
	cl, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	if err != nil {
		return "", nil, err
	}
	pool, err := postgres.Connect(ctx, databaseURL, schema)
	if err != nil {
		cl.Close()
		return "", nil, err
	}
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: api.MaxBodyBytes, ReadBufferSize: api.MaxHeaderBytes})
	app.Post("/view/:id", func(c *fiber.Ctx) error {
		id := strings.Clone(c.Params("id"))
		rec := &kgo.Record{Topic: topic, Key: []byte(id), Value: bytes.Clone(c.BodyRaw())}
		if err := cl.ProduceSync(c.UserContext(), rec).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		var got string
		if err := pool.QueryRow(c.UserContext(), `SELECT id::text FROM post_versions WHERE id = $1`, id).Scan(&got); err != nil {
			return fmt.Errorf("select: %w", err)
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.SendString(`{"result":{"data":{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":null}}}`)
	})
	url, stopApp, err := listen(app)
	if err != nil {
		pool.Close()
		cl.Close()
		return "", nil, err
	}
	return url, func() error {
		err := stopApp()
		pool.Close()
		cl.Close()
		return err
	}, nil
}

// startLoggedEcho is StartEcho, with the request middleware of errata
// serve (metrics and an INFO access log into a temporary file) when mount.
func startLoggedEcho(mount bool, al ops.AccessLog) (string, func() error, error) {
	if !mount {
		return StartEcho()
	}
	f, err := os.CreateTemp("", "errata-bench-access-*.log")
	if err != nil {
		return "", nil, err
	}
	log := slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo}))
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: api.MaxBodyBytes, ReadBufferSize: api.MaxHeaderBytes})
	app.Use(ops.Middleware(metrics.NewHTTP(metrics.NewRegistry()), log, ops.WithAccessLog(al)))
	app.Post("/echo/:step", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(c.Body())
	})
	url, stop, err := listen(app)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return "", nil, err
	}
	return url, func() error { return errors.Join(stop(), f.Close(), os.Remove(f.Name())) }, nil
}

func listen(app *fiber.App) (string, func() error, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	return "http://" + ln.Addr().String(), func() error {
		return errors.Join(app.ShutdownWithTimeout(10*time.Second), <-errc)
	}, nil
}

// ExternalResult is the black-box check against a running errata serve.
type ExternalResult struct {
	URL    string    `json:"url"`
	View   FixedLoad `json:"view"`
	Health FixedLoad `json:"health"`
}

// RunExternal registers one post on the server at baseURL, then loads
// recordViewAndGetStatus of it and /health, each with concurrency clients
// for d, sampling the RSS of pid when pid > 0. The server must run with
// ERRATA_RATE_LIMIT=off.
func RunExternal(ctx context.Context, baseURL string, pid, concurrency int, d time.Duration, words int, progress io.Writer) (ExternalResult, error) {
	out := ExternalResult{URL: baseURL}
	post, err := NewPost(int(time.Now().UnixNano()%1_000_000_000), 0, words)
	if err != nil {
		return out, err
	}
	body, err := call(ctx, http.DefaultClient, baseURL+"/trpc/post.registerObservedVersion", post.Body, "errata-bench/external")
	if err == nil {
		err = checkRegister(LoadTarget{}, post, body)
	}
	if err != nil {
		return out, fmt.Errorf("register on %s: %w", baseURL, err)
	}
	if pid == 0 {
		pid = -1
	}
	fmt.Fprintf(progress, "bench: external %s: recordViewAndGetStatus, %d clients, %s\n", baseURL, concurrency, d)
	if out.View, err = RunFixed(ctx, "recordViewAndGetStatus", viewRequest(baseURL, post), concurrency, d, Profiling{}, pid); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "bench: external %s: GET /health, %d clients, %s\n", baseURL, concurrency, d)
	out.Health, err = RunFixed(ctx, "/health", FixedRequest{Method: http.MethodGet, URL: baseURL + "/health"}, concurrency, d, Profiling{}, pid)
	return out, err
}

// WriteMarkdown prints the black-box table.
func (r ExternalResult) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| measure | figure | baseline (same run, same server) | ratio |\n|---|---|---|---|\n")
	q := ratio(r.View.RequestsPerSec, r.Health.RequestsPerSec)
	fmt.Fprintf(&b, "| recordViewAndGetStatus throughput (%s, one registered version) | %.0f req/s (%d requests, %d errors) | %.0f req/s GET /health (%d errors) | %s |\n",
		r.URL, r.View.RequestsPerSec, r.View.Requests, r.View.Errors, r.Health.RequestsPerSec, r.Health.Errors, fmtRatio(q))
	fmt.Fprintf(&b, "| recordViewAndGetStatus p50 / p99 | %.2f / %.2f ms | %.2f / %.2f ms /health | %s |\n",
		r.View.Latency.P50, r.View.Latency.P99, r.Health.Latency.P50, r.Health.Latency.P99, fmtRatio(ratio(r.View.Latency.P99, r.Health.Latency.P99)))
	if r.View.PeakRSSMB > 0 {
		fmt.Fprintf(&b, "\npeak RSS of the server: %.0f MB under the view load, %.0f MB under /health\n", r.View.PeakRSSMB, r.Health.PeakRSSMB)
	}
	for _, l := range []FixedLoad{r.View, r.Health} {
		if l.Errors > 0 {
			fmt.Fprintf(&b, "FAILED: %s: %d errors, first: %s\n", l.Target, l.Errors, l.FirstError)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtRatio(q *float64) string {
	if q == nil {
		return "-"
	}
	return fmt.Sprintf("%.3g", *q)
}
