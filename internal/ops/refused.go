package ops

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/valyala/fasthttp"

	"github.com/errata-dev/errata/internal/metrics"
)

// RouteRefused labels requests the HTTP server refused before routing
// them (too slow, too large, malformed): their URL is the client's and may
// be anything, so it is logged, never a label.
const RouteRefused = "refused"

// LogRefused makes the request log and metrics cover the requests the HTTP
// server refuses before any handler runs: a client too slow to send its
// request (408), a body or headers too large (413), a malformed or
// ambiguously framed request (400). fiber answers those through the
// fasthttp server's error handler, which no middleware sees; this wraps
// it. Each gets one "request" line like any other, at info (a client's
// fault is not the server's error), with the reason and the path the
// client asked for (never the query): from the parsed header, or, when
// fasthttp dropped the header it could not finish, from the request line
// RequestLines kept. duration_ms counts from the connection's start (for a
// slow client, its whole wait).
func LogRefused(app *fiber.App, m *metrics.HTTP, log *slog.Logger) {
	srv := app.Server()
	next := srv.ErrorHandler
	srv.ErrorHandler = func(ctx *fasthttp.RequestCtx, err error) {
		id := string(ctx.Request.Header.Peek(HeaderRequestID))
		if !validRequestID(id) {
			id = uuid.NewString()
		}
		method, path, received := refusedTarget(ctx)
		next(ctx, err)
		ctx.Response.Header.Set(HeaderRequestID, id)
		status := ctx.Response.StatusCode()
		took := time.Since(ctx.ConnTime())
		if m != nil {
			m.Observe(RouteRefused, method, status, took)
		}
		attrs := []slog.Attr{slog.String("route", RouteRefused), slog.String("method", method), slog.Int("status", status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000), slog.String("request_id", id)}
		if received {
			attrs = append(attrs, slog.String("path", path))
		}
		attrs = append(attrs, slog.String("reason", refusalReason(err, received)))
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelError
		}
		log.LogAttrs(context.Background(), level, "request", attrs...)
	}
	// A request that reaches the handlers was read whole: what the
	// connection reads next belongs to the next request.
	handler := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		if c, ok := ctx.Conn().(*lineConn); ok {
			c.nextRequest()
		}
		handler(ctx)
	}
}

// refusedTarget is the method label and path of a refused request, and
// whether its request line arrived at all. fasthttp resets a header it
// could not finish (its RequestURI is then "/"): the line the connection
// kept is put back first, so the error envelope names the real procedure
// too.
func refusedTarget(ctx *fasthttp.RequestCtx) (method, path string, received bool) {
	h := &ctx.Request.Header
	if c, ok := ctx.Conn().(*lineConn); ok {
		if m := requestLine.FindSubmatch(c.line); m != nil {
			h.SetMethodBytes(m[1])
			h.SetRequestURIBytes(m[2])
			received = true
		}
	}
	if !received && len(h.RawHeaders()) == 0 {
		return "-", "", false
	}
	return methodLabel(h.Method()), loggablePath(ctx.URI().PathOriginal()), true
}

// requestLine is an HTTP/1 request line: method, target, version.
var requestLine = regexp.MustCompile(`^([A-Za-z]+) (\S+) HTTP/[0-9]\.[0-9]\r?$`)

// methodLabel bounds the method label to the standard methods.
func methodLabel(method []byte) string {
	switch m := string(method); m {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPut, fiber.MethodPatch,
		fiber.MethodDelete, fiber.MethodOptions, fiber.MethodConnect, fiber.MethodTrace:
		return m
	}
	return "OTHER"
}

// maxLoggedPath bounds the path of a refused request in its log line.
const maxLoggedPath = 256

// loggablePath is a refused request's raw path, valid UTF-8 and bounded.
func loggablePath(p []byte) string {
	s := strings.ToValidUTF8(string(p), "\uFFFD")
	if len(s) > maxLoggedPath {
		s = strings.ToValidUTF8(s[:maxLoggedPath], "") + "…"
	}
	return s
}

// refusalReason says in a few words why a request was refused, from the
// HTTP server's error (whose text never quotes the request: the API sets
// fasthttp's SecureErrorLogMessage).
func refusalReason(err error, received bool) string {
	var opErr *net.OpError
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &small):
		return "request line and headers too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "body too large"
	case errors.As(err, &opErr) && opErr.Timeout(), err != nil && strings.Contains(err.Error(), "timeout"):
		if !received {
			return "no request line in time"
		}
		return "request not received in time"
	case err == nil:
		return "refused"
	}
	msg := err.Error()
	if len(msg) > 200 {
		msg = strings.ToValidUTF8(msg[:200], "") + "…"
	}
	return msg
}

// RequestLines wraps ln so that each connection keeps the request line of
// the request it is reading. fasthttp forgets a request's line when its
// headers fail (too slow, too large, malformed); LogRefused then logs the
// path from here. Only the line is kept, at most maxRequestLine bytes.
func RequestLines(ln net.Listener) net.Listener { return lineListener{ln} }

// maxRequestLine bounds what a connection keeps of a request line.
const maxRequestLine = 2048

type lineListener struct{ net.Listener }

func (l lineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &lineConn{Conn: c}, nil
}

// lineConn keeps the bytes of the current request up to its first line
// end. Its fields are used by the connection's serving goroutine alone
// (reads, the handler, the error handler), so they need no lock.
type lineConn struct {
	net.Conn
	line     []byte
	complete bool
}

func (c *lineConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.complete || n <= 0 {
		return n, err
	}
	b := p[:n]
	if len(c.line) == 0 {
		// Empty lines before a request line are allowed (RFC 9112 2.2).
		b = bytes.TrimLeft(b, "\r\n")
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b, c.complete = b[:i], true
	}
	if room := maxRequestLine - len(c.line); len(b) >= room {
		b, c.complete = b[:room], true
	}
	c.line = append(c.line, b...)
	return n, err
}

// nextRequest forgets the line of a request that was read whole. Bytes of
// a pipelined next request read ahead are missed; the line kept is then
// not a request line and is not used.
func (c *lineConn) nextRequest() {
	c.line, c.complete = c.line[:0], false
}
