// Package api is Errata's HTTP surface on fiber: the extension-facing tRPC
// procedures (wire-compatible with OpenErrata's extension, see
// ../shared/CONTRACT.md) and health. Handlers validate input and append
// events through producers; they read only from projections and never
// write a read model.
package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// MaxBodyBytes is the request body limit; larger bodies get HTTP 413.
const MaxBodyBytes = 512 << 10

// MaxHeaderBytes bounds the request line and headers. Queries carry their
// input in the URL: 100 batchStatus posts url-encoded are about 20 KiB.
const MaxHeaderBytes = 64 << 10

// requestTimeout bounds one procedure call.
const requestTimeout = 20 * time.Second

// Ingest appends post events (producers/ingest.Service).
type Ingest interface {
	Register(ctx context.Context, in *ingest.RegisterInput, caller ingest.Caller) (ingest.Registered, error)
	RecordView(ctx context.Context, postID, postVersionID, platform, externalID string, caller ingest.Caller) (producers.Position, error)
}

// Reader answers the API's queries from the serving projection
// (projections/serving.Reader). The API reads nothing else.
type Reader interface {
	// VersionStatusByID returns a registered version with its own
	// investigation's state, or serving.ErrNotFound.
	VersionStatusByID(ctx context.Context, id string) (serving.VersionStatus, error)
	// ActiveAPIKey reports whether a non-revoked instance API key has this sha256.
	ActiveAPIKey(ctx context.Context, keySHA256 string) (bool, error)
	// BatchStatuses answers composite version keys in order, in one query.
	BatchStatuses(ctx context.Context, keys []serving.BatchKey) ([]serving.BatchStatus, error)
}

// Watermark waits until the serving projection has applied a log position.
type Watermark interface {
	WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error
}

// Config holds the API's settings.
type Config struct {
	MinExtensionVersion   string
	TrustedProxyHeader    string
	ReadYourWritesTimeout time.Duration
	// OpenAIBaseURL is the provider validateSettings checks user keys
	// against ({OpenAIBaseURL}/models); empty means config.DefaultOpenAIBaseURL.
	OpenAIBaseURL string
	// OpenAIKeyCheckTimeout bounds that check; zero means 5 s.
	OpenAIKeyCheckTimeout time.Duration
	// RateLimit rations the tRPC procedures per client, one token a call
	// (nil: no limit).
	RateLimit *ratelimit.Limiter
	// ReadTimeout bounds reading one request, line, headers and body: a
	// client that trickles them gets 408 and is disconnected. Zero means
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next
	// request for this long. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Defaults of Config's HTTP timeouts.
const (
	DefaultReadTimeout = 30 * time.Second
	DefaultIdleTimeout = 120 * time.Second
)

// Server is the HTTP API.
type Server struct {
	cfg        Config
	minVersion extensionVersion
	ingest     Ingest
	reader     Reader
	watermark  Watermark
	hasher     *ingest.Hasher
	openai     *openAIChecker
	requester  Requester
	invReader  InvestigationReader
	assigner   Assigner // nil: the default configuration
	backlog    Backlog
	known      KnownVersions
	statuses   StatusCache // nil: the view path reads the reader
	log        *slog.Logger
	app        *fiber.App
	// mounts add middleware and routes before the built-in ones (WithRoutes).
	mounts []func(app *fiber.App)
	// listenerWraps wrap the listener of Listen and Serve (WithListener).
	listenerWraps []func(net.Listener) net.Listener
	// analyses enables the workbench API and the verdict namespace
	// (WithAnalyses); streams bounds their event streams, which end when
	// streamCtx does (at shutdown).
	analyses    *Analyses
	streams     *streamSlots
	streamCtx   context.Context
	stopStreams context.CancelFunc
	// appeals enables the appeal namespace (WithAppeals).
	appeals *appealAPI
}

// WithListener wraps the listener Listen and Serve accept connections on
// (the request log keeps each connection's request line: ops.RequestLines).
func WithListener(wrap func(net.Listener) net.Listener) Option {
	return func(s *Server) { s.listenerWraps = append(s.listenerWraps, wrap) }
}

// WithRoutes lets another surface (public GraphQL, metrics) register its
// middleware and routes on the app before the built-in routes.
func WithRoutes(mount func(app *fiber.App)) Option {
	return func(s *Server) { s.mounts = append(s.mounts, mount) }
}

// New builds the API with its dependencies.
func New(cfg Config, in Ingest, reader Reader, wm Watermark, hasher *ingest.Hasher, log *slog.Logger, opts ...Option) (*Server, error) {
	minVersion, err := parseExtensionVersion(cfg.MinExtensionVersion)
	if err != nil {
		return nil, fmt.Errorf("minimum extension version: %w", err)
	}
	openai, err := newOpenAIChecker(cfg.OpenAIBaseURL, cfg.OpenAIKeyCheckTimeout)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, minVersion: minVersion, ingest: in, reader: reader, watermark: wm, hasher: hasher,
		openai: openai, log: log}
	s.streamCtx, s.stopStreams = context.WithCancel(context.Background())
	for _, o := range opts {
		o(s)
	}
	readTimeout, idleTimeout := cfg.ReadTimeout, cfg.IdleTimeout
	if readTimeout <= 0 {
		readTimeout = DefaultReadTimeout
	}
	if idleTimeout <= 0 {
		idleTimeout = DefaultIdleTimeout
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "errata",
		BodyLimit:             MaxBodyBytes,
		ReadBufferSize:        MaxHeaderBytes,
		DisableStartupMessage: true,
		ReadTimeout:           readTimeout,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           idleTimeout,
		ErrorHandler:          s.handleFiberError,
	})
	hardenServer(s.app.Server())
	s.routes()
	return s, nil
}

// App exposes the fiber app (tests use app.Test).
func (s *Server) App() *fiber.App { return s.app }

// Listen serves on addr until ctx is done, then shuts down gracefully.
func (s *Server) Listen(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve answers the connections of ln (through the WithListener wrappers)
// until ctx is done, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	for _, wrap := range s.listenerWraps {
		ln = wrap(ln)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.app.Listener(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		s.stopStreams() // open event streams would hold their connections
		return s.app.ShutdownWithTimeout(15 * time.Second)
	}
}

func (s *Server) routes() {
	for _, m := range s.mounts {
		m(s.app)
	}
	if s.cfg.RateLimit != nil {
		s.app.Use("/trpc", s.limitProcedures)
	}
	s.app.Get("/health", s.health)
	s.app.Post("/trpc/post.registerObservedVersion", s.procedure("post.registerObservedVersion", s.registerObservedVersion))
	s.app.Post("/trpc/post.recordViewAndGetStatus", s.procedure("post.recordViewAndGetStatus", s.recordViewAndGetStatus))
	s.app.Post("/trpc/post.investigateNow", s.procedure("post.investigateNow", s.investigateNow))
	s.app.Get("/trpc/post.getInvestigation", s.procedure("post.getInvestigation", s.getInvestigation))
	// Queries: GET with ?input=<url-encoded JSON>, no body, no signature.
	s.app.Get("/trpc/post.validateSettings", s.procedure("post.validateSettings", s.validateSettings))
	s.app.Get("/trpc/post.batchStatus", s.procedure("post.batchStatus", s.batchStatus))
	if s.analyses != nil {
		s.analysisRoutes()
	}
	if s.appeals != nil {
		s.appealRoutes()
	}
	s.app.All("/trpc/:path", func(c *fiber.Ctx) error {
		return writeError(c, c.Params("path"), newError(CodeNotFound, fmt.Sprintf("no procedure %q for %s", c.Params("path"), c.Method())))
	})
}

func (s *Server) health(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok", "minimumSupportedExtensionVersion": s.cfg.MinExtensionVersion})
}

// handler is a procedure body: it returns the output or an error.
type handler func(c *fiber.Ctx, path string) (any, error)

// procedure applies what every post.* call shares: the version gate, the
// error envelope, and logging of unexpected failures.
func (s *Server) procedure(path string, h handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if e := checkExtensionVersion(c.Get(HeaderExtensionVersion), s.minVersion, s.cfg.MinExtensionVersion); e != nil {
			return writeError(c, path, e)
		}
		// Bound every procedure: appends wait for all in-sync replicas and
		// must not hang a client while the broker is unreachable.
		ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
		defer cancel()
		c.SetUserContext(ctx)
		out, err := h(c, path)
		if err != nil {
			return writeError(c, path, s.classify(c, path, err))
		}
		return writeResult(c, out)
	}
}

// classify maps an error to its tRPC code; unexpected ones are logged and
// answered without internals.
func (s *Server) classify(c *fiber.Ctx, path string, err error) *Error {
	var te *Error
	var ie *ingest.InputError
	var se *ingest.SyntaxError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &se):
		return newError(CodeParseError, se.Error())
	case errors.As(err, &ie):
		return newError(CodeBadRequest, ie.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		s.log.Warn("request timed out", "path", path, "err", err)
		return newError(CodeInternalServerError, "the request could not be completed in time")
	default:
		s.log.Error("request failed", "path", path, "err", err)
		return newError(CodeInternalServerError, "internal error")
	}
}

// handleFiberError renders errors raised before a handler runs as tRPC
// envelopes with their real status: the HTTP server's own (request too
// slow, body or headers too large, malformed or ambiguously framed; fiber
// maps them to *fiber.Error) and the router's (unknown route). They are
// the client's doing and logged by the request log (internal/ops), not
// here; only what no case covers is logged as an error.
func (s *Server) handleFiberError(c *fiber.Ctx, err error) error {
	if strings.HasPrefix(c.Path(), apiPrefix) {
		return s.handleRESTError(c, err)
	}
	path := strings.TrimPrefix(c.Path(), "/trpc/")
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch {
		case fe.Code == fiber.StatusRequestEntityTooLarge:
			return writeError(c, path, newError(CodePayloadTooLarge, fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes)))
		case fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
			return writeError(c, path, newError(CodePayloadTooLarge, fmt.Sprintf("request line and headers exceed %d bytes", MaxHeaderBytes)))
		case fe.Code == fiber.StatusNotFound, fe.Code == fiber.StatusMethodNotAllowed:
			return writeError(c, path, newError(CodeNotFound, "not found"))
		case fe.Code == fiber.StatusRequestTimeout:
			return writeError(c, path, newError(CodeTimeout, "the request was not received in time"))
		case fe.Code == fiber.StatusBadGateway:
			// fiber's status for a network error while reading the request:
			// the client's connection failed, nothing upstream did.
			return writeError(c, path, newError(CodeBadRequest, "the request could not be read"))
		case fe.Code >= 400 && fe.Code < 500:
			// Malformed or ambiguous requests, and client errors raised by
			// middleware, under the code of their status (BAD_REQUEST when
			// tRPC has none). The server's error texts never quote the
			// request (SecureErrorLogMessage).
			return writeError(c, path, newError(codeOfStatus(fe.Code), fe.Message))
		}
	}
	s.log.Error("unhandled error", "path", c.Path(), "err", err)
	return writeError(c, path, newError(CodeInternalServerError, "internal error"))
}

// caller derives the hashed identity of the requester: the account of a
// valid instance API key (x-api-key), else the anonymous session. An
// invalid or revoked key is not an error; it just does not authenticate.
func (s *Server) caller(c *fiber.Ctx) (ingest.Caller, error) {
	ip := s.clientIP(c)
	corr := c.Get("x-request-id")
	// The correlation id is stored with every event: short printable ASCII
	// only (as internal/ops accepts request ids), else a fresh one.
	if corr == "" || len(corr) > 128 || strings.ContainsFunc(corr, func(r rune) bool { return r <= ' ' || r > '~' }) {
		corr = uuid.NewString()
	}
	caller := ingest.Caller{
		ViewerKey:     s.hasher.AnonymousViewerKey(ip, c.Get(fiber.HeaderUserAgent)),
		IPRangeKey:    s.hasher.IPRangeKey(ip),
		CorrelationID: corr,
	}
	sha, ok, err := s.authenticate(c)
	if err != nil {
		return ingest.Caller{}, err
	}
	if ok {
		caller.ViewerKey = s.hasher.AccountViewerKey(sha)
		caller.Authenticated = true
	}
	return caller, nil
}

// clientIP is the address reported by the trusted proxy header (its last
// entry: the one the proxy itself appended) or else the socket address.
func (s *Server) clientIP(c *fiber.Ctx) netip.Addr {
	socket, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		socket = netip.IPv4Unspecified()
	}
	return ClientAddr(s.cfg.TrustedProxyHeader, func(h string) string { return c.Get(h) }, socket)
}
