package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// StackConfig shapes an in-process API stack.
type StackConfig struct {
	Brokers               []string
	DatabaseURL           string
	Schema                string
	Topics                events.Topics
	IPRangeDailyCap       int
	ReadYourWritesTimeout time.Duration
	HashSecret            string
	Log                   *slog.Logger
	// Observer, when set, is told of every batch the projector made durable.
	Observer kafka.BatchObserver
	// APIOptions, when set, adds the surfaces `errata serve` mounts
	// (metrics, request logs, ...) on the serving pool, so the measured API
	// is the one deployed; release runs when the stack closes.
	APIOptions func(ctx context.Context, pool *pgxpool.Pool) (opts []api.Option, release func(), err error)
}

// apiStack is the configuration of a stack whose API mounts the surfaces
// `errata serve` mounts (Options.APIOptions), on schema and topics.
func (o Options) apiStack(rs *Resources, schema string, topics events.Topics) StackConfig {
	return StackConfig{
		Brokers: o.Brokers, DatabaseURL: rs.DatabaseURL, Schema: schema, Topics: topics,
		IPRangeDailyCap: o.IPRangeDailyCap, ReadYourWritesTimeout: o.ReadYourWritesTimeout,
		HashSecret: o.HashSecret, Log: o.Log,
		APIOptions: func(ctx context.Context, pool *pgxpool.Pool) ([]api.Option, func(), error) {
			if o.APIOptions == nil {
				return nil, func() {}, nil
			}
			return o.APIOptions(ctx, topics, rs.DatabaseURL, pool)
		},
	}
}

// Stack is the API as `errata serve` runs it (real fiber server on a free
// loopback port, real idempotent Kafka producer, serving reads) plus the
// serving projector as `errata worker` runs it, all in this process.
// Server verification is off: a bench reaches nothing beyond this machine.
type Stack struct {
	URL         string
	Pool        *pgxpool.Pool
	Topics      events.Topics
	Ingest      *ingest.Service
	Requests    *investigations.Service
	Watermark   *pgproj.Watermark
	Hasher      *ingest.Hasher
	ServingTops []string

	counter  *requestCounter
	producer *kgo.Client
	// projPool is the projector's own pool, as errata worker has.
	projPool *pgxpool.Pool
	app      *fiber.App
	serveErr chan error
	cancel   context.CancelFunc
	runDone  chan error
	release  func()
	// stopCache ends the status cache's listener.
	stopCache func()
}

// StartStack migrates the serving schema, starts the projector and the API,
// and returns once the projector has joined its group and applied a first
// event (so the measured phase does not include start-up).
func StartStack(ctx context.Context, cfg StackConfig) (*Stack, error) {
	s := &Stack{Topics: cfg.Topics, counter: &requestCounter{byPath: map[string]int{}}, serveErr: make(chan error, 1), runDone: make(chan error, 1)}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	var err error
	if s.Pool, err = postgres.Connect(ctx, cfg.DatabaseURL, cfg.Schema); err != nil {
		return nil, err
	}
	if err := pgproj.Migrate(ctx, s.Pool, cfg.Schema, serving.Migrations(), cfg.Log); err != nil {
		return nil, err
	}
	if s.projPool, err = postgres.ConnectDerived(ctx, cfg.DatabaseURL, cfg.Schema); err != nil {
		return nil, err
	}
	if s.producer, err = kafka.NewClient(cfg.Brokers, kafka.ProducerOpts()...); err != nil {
		return nil, err
	}
	reg := events.NewCatalogRegistry()
	for _, tp := range reg.Topics() {
		s.ServingTops = append(s.ServingTops, cfg.Topics.Name(tp))
	}
	appender := producers.NewAppender(s.producer, reg, cfg.Topics, nil)
	s.Ingest = ingest.NewService(appender)
	s.Requests = investigations.New(appender, nil, nil)
	s.Watermark = pgproj.NewWatermark(s.Pool, serving.ProjectorName)
	s.Hasher = ingest.NewHasher(cfg.HashSecret)

	group := cfg.Topics.Prefix + "projector." + serving.ProjectorName
	dl := kafka.NewDeadLetter(s.producer, cfg.Topics.Name(events.TopicDeadLetter), group, cfg.Log)
	proj := pgproj.NewProjector(serving.ProjectorName, s.projPool, reg, serving.NewApplier(cfg.IPRangeDailyCap), dl, cfg.Log)
	runner, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: cfg.Brokers, Group: group, Topics: s.ServingTops, Positions: proj, Observer: cfg.Observer}, proj, cfg.Log)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	go func() { s.runDone <- runner.Run(rctx) }()

	reader := serving.NewReader(s.Pool)
	// The status cache, as `errata serve` runs it (cmd/errata startStatusCache).
	cache := serving.NewStatusCache(s.Pool, reader, serving.StatusCacheConfig{}, cfg.Log)
	s.stopCache = cache.Start(context.WithoutCancel(ctx))
	opts := []api.Option{api.WithInvestigations(s.Requests, reader), api.WithStatusCache(cache),
		api.WithRoutes(func(app *fiber.App) { app.Use(s.counter.middleware) })}
	if cfg.APIOptions != nil {
		extra, release, err := cfg.APIOptions(ctx, s.Pool)
		if err != nil {
			return nil, fmt.Errorf("api options: %w", err)
		}
		s.release = release
		opts = append(opts, extra...)
	}
	srv, err := api.New(api.Config{
		MinExtensionVersion:   "0.2.0",
		ReadYourWritesTimeout: cfg.ReadYourWritesTimeout,
		// Never used by the bench (validateSettings is not called); loopback
		// so nothing could ever leave the machine.
		OpenAIBaseURL: "http://127.0.0.1:9/v1",
	}, s.Ingest, reader, s.Watermark, s.Hasher, cfg.Log, opts...)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.app = srv.App()
	s.URL = "http://" + ln.Addr().String()
	go func() { s.serveErr <- s.app.Listener(ln) }()

	// Warm up through the producer, not HTTP, so the server's request
	// counts hold the load generator's requests only.
	warm, err := NewPost(0, 0, 20)
	if err != nil {
		return nil, err
	}
	if _, err := s.register(ctx, warm, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("warm-up registration: %w", err)
	}
	ok = true
	return s, nil
}

// register appends a registration through the ingest service (what the
// API handler does) and waits until the serving projection has applied it.
func (s *Stack) register(ctx context.Context, p Post, timeout time.Duration) (producers.Position, error) {
	in, err := ingest.ParseRegisterInput(p.Body)
	if err != nil {
		return producers.Position{}, err
	}
	reg, err := s.Ingest.Register(ctx, in, ingest.Caller{ViewerKey: s.Hasher.AccountViewerKey("bench"), IPRangeKey: s.Hasher.IPRangeKey(loopback), CorrelationID: "bench"})
	if err != nil {
		return producers.Position{}, err
	}
	if reg.PostVersionID != p.PostVersionID {
		return producers.Position{}, fmt.Errorf("registered %s, want %s", reg.PostVersionID, p.PostVersionID)
	}
	pos := reg.Position
	return pos, s.Watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, timeout)
}

// Served counts the requests the server answered for path since start,
// and how many of all answers had an error status.
func (s *Stack) Served(path string) (answered, errors int) {
	return s.counter.get(path)
}

// Close stops the API and the projector and releases everything.
func (s *Stack) Close() error {
	var errs []error
	if s.app != nil {
		if err := s.app.ShutdownWithTimeout(10 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("api shutdown: %w", err))
		}
		if err := <-s.serveErr; err != nil {
			errs = append(errs, fmt.Errorf("api: %w", err))
		}
	}
	if s.cancel != nil {
		s.cancel()
		if err := <-s.runDone; err != nil {
			errs = append(errs, fmt.Errorf("serving projector: %w", err))
		}
	}
	if s.stopCache != nil {
		s.stopCache()
	}
	if s.release != nil {
		s.release()
	}
	if s.producer != nil {
		s.producer.Close()
	}
	if s.projPool != nil {
		s.projPool.Close()
	}
	if s.Pool != nil {
		s.Pool.Close()
	}
	return errors.Join(errs...)
}

// requestCounter counts answered requests by path on the server side, so
// the load generator's own count can be checked against it.
type requestCounter struct {
	mu     sync.Mutex
	byPath map[string]int
	errors int
}

func (r *requestCounter) middleware(c *fiber.Ctx) error {
	err := c.Next()
	path := strings.Clone(c.Path())
	status := c.Response().StatusCode()
	r.mu.Lock()
	r.byPath[path]++
	if err != nil || status >= 400 {
		r.errors++
	}
	r.mu.Unlock()
	return err
}

func (r *requestCounter) get(path string) (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byPath[path], r.errors
}

// StartEcho serves the baseline: a trivial fiber handler answering every
// POST /echo/<step> with its body, on a free loopback port.
func StartEcho() (url string, stop func() error, err error) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: api.MaxBodyBytes, ReadBufferSize: api.MaxHeaderBytes})
	app.Post("/echo/:step", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(c.Body())
	})
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
