package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/errata-dev/errata/internal/ratelimit"
)

// limitProcedures rations the tRPC procedures per client (Config.RateLimit):
// one token per call. A client over its limit gets TOO_MANY_REQUESTS (429)
// with Retry-After, before anything of the call is read.
func (s *Server) limitProcedures(c *fiber.Ctx) error {
	ok, wait := s.cfg.RateLimit.Allow(ratelimit.ClientKey(s.clientIP(c)), 1)
	if ok {
		return c.Next()
	}
	secs := ratelimit.RetryAfterSeconds(wait)
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	e := newError(CodeTooManyRequests, fmt.Sprintf("too many requests from this network; retry in %d s", secs))
	e.Extra = map[string]any{"retryAfterSeconds": secs}
	return writeError(c, strings.TrimPrefix(c.Path(), "/trpc/"), e)
}

// ClientAddr is the address of a request's client: the last entry of the
// trusted proxy's header (the one the proxy itself appended) when
// trustedHeader is set and that entry parses, else the socket address.
// header reads a request header.
func ClientAddr(trustedHeader string, header func(string) string, socket netip.Addr) netip.Addr {
	if trustedHeader != "" {
		if v := header(trustedHeader); v != "" {
			parts := strings.Split(v, ",")
			if ip, err := netip.ParseAddr(strings.TrimSpace(parts[len(parts)-1])); err == nil {
				return ip
			}
		}
	}
	return socket
}

// ClientKeyOfRequest names the client of a net/http request (the public
// GraphQL handler, served through fiber's adaptor) exactly as the tRPC
// procedures name theirs, for the rate limits.
func ClientKeyOfRequest(trustedHeader string) func(*http.Request) string {
	return func(r *http.Request) string {
		socket := netip.IPv4Unspecified()
		if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
			socket = ap.Addr()
		}
		return ratelimit.ClientKey(ClientAddr(trustedHeader, r.Header.Get, socket))
	}
}
