package httpsafe

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// Defaults of a Client built with no options.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxRedirects     = 5
	DefaultMaxResponseBytes = 5 << 20
	// DefaultUserAgent names Errata so that platform operators can identify
	// and contact us (Wikimedia's API etiquette requires this).
	DefaultUserAgent = "Errata/1.0 (+https://github.com/errata-dev/errata; fact-checking content verification)"
)

// defaultPorts are the only ports reachable unless WithAllowedPorts says
// otherwise: web servers, not the databases and admin consoles that listen
// on other ports of a reachable host.
var defaultPorts = []uint16{80, 443}

// Resolver resolves a hostname to addresses; *net.Resolver implements it.
// Whatever it returns is still checked, so a custom resolver cannot widen
// what the client reaches.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// config is the immutable configuration a Client is built from.
type config struct {
	timeout      time.Duration
	maxRedirects int
	maxBytes     int64
	userAgent    string
	ports        map[uint16]bool
	resolver     Resolver
	// Loopback access, only ever set by the *ForTests options, which only
	// tests call (TestLoopbackOptionsOnlyInTests).
	loopbackAny   bool
	loopbackAddrs map[netip.AddrPort]bool
	// operatorAddrs are endpoints an operator configured (AllowOperatorEndpoint).
	operatorAddrs map[netip.AddrPort]bool
}

func defaultConfig() config {
	ports := make(map[uint16]bool, len(defaultPorts))
	for _, p := range defaultPorts {
		ports[p] = true
	}
	return config{
		timeout:      DefaultTimeout,
		maxRedirects: DefaultMaxRedirects,
		maxBytes:     DefaultMaxResponseBytes,
		userAgent:    DefaultUserAgent,
		ports:        ports,
	}
}

func (c config) validate() error {
	switch {
	case c.timeout <= 0:
		return fmt.Errorf("httpsafe: timeout must be positive, got %v", c.timeout)
	case c.maxRedirects < 0:
		return fmt.Errorf("httpsafe: max redirects must not be negative, got %d", c.maxRedirects)
	case c.maxBytes <= 0:
		return fmt.Errorf("httpsafe: max response bytes must be positive, got %d", c.maxBytes)
	case c.userAgent == "":
		return fmt.Errorf("httpsafe: user agent must not be empty")
	case len(c.ports) == 0:
		return fmt.Errorf("httpsafe: at least one port must be allowed")
	case c.ports[0]:
		return fmt.Errorf("httpsafe: port 0 cannot be allowed")
	}
	return nil
}

// Option configures a Client.
type Option func(*config)

// WithTimeout sets the total time allowed for one Do call: dialling, TLS,
// every redirect and reading the body.
func WithTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// WithMaxRedirects sets how many redirects are followed; 0 follows none (a
// redirect response is then an ErrTooManyRedirects error).
func WithMaxRedirects(n int) Option {
	return func(c *config) { c.maxRedirects = n }
}

// WithMaxResponseBytes sets the default body size limit; Request.MaxBytes
// overrides it per request.
func WithMaxResponseBytes(n int64) Option {
	return func(c *config) { c.maxBytes = n }
}

// WithUserAgent replaces DefaultUserAgent.
func WithUserAgent(ua string) Option {
	return func(c *config) { c.userAgent = ua }
}

// WithAllowedPorts replaces the allowed destination ports (80 and 443).
func WithAllowedPorts(ports ...uint16) Option {
	return func(c *config) {
		c.ports = make(map[uint16]bool, len(ports))
		for _, p := range ports {
			c.ports[p] = true
		}
	}
}

// WithResolver replaces the system resolver. The addresses it returns are
// checked like any other, so this only changes which addresses a name maps
// to, never which addresses are reachable.
func WithResolver(r Resolver) Option {
	return func(c *config) { c.resolver = r }
}

// AllowLoopbackForTests lets the client reach loopback addresses (127/8,
// ::1) on any port, so tests can talk to an httptest server. Every other
// check still applies. It exists only for tests: no file of the module but
// a _test.go file refers to it (TestLoopbackOptionsOnlyInTests proves it),
// and no configuration or environment variable can turn it on.
func AllowLoopbackForTests() Option {
	return func(c *config) { c.loopbackAny = true }
}

// AllowLoopbackAddrsForTests lets the client reach exactly the given
// loopback endpoints (an httptest server's address) and no other loopback
// address or port, so a test can show that a redirect from an allowed test
// server to another loopback port is still refused. Non-loopback endpoints
// in addrs are ignored. Like AllowLoopbackForTests, only tests call it.
func AllowLoopbackAddrsForTests(addrs ...netip.AddrPort) Option {
	return func(c *config) {
		if c.loopbackAddrs == nil {
			c.loopbackAddrs = make(map[netip.AddrPort]bool, len(addrs))
		}
		for _, ap := range addrs {
			a := ap.Addr().Unmap().WithZone("")
			if a.IsLoopback() {
				c.loopbackAddrs[netip.AddrPortFrom(a, ap.Port())] = true
			}
		}
	}
}

// AllowOperatorEndpoint lets the client reach exactly one endpoint that the
// operator configured, such as a self-hosted search server on loopback or
// a private network, and no other address or port of that host. It is for
// endpoints named in the process's own configuration, never for a URL that
// came from a request, a model or a page: those keep every check.
func AllowOperatorEndpoint(ap netip.AddrPort) Option {
	return func(c *config) {
		if c.operatorAddrs == nil {
			c.operatorAddrs = map[netip.AddrPort]bool{}
		}
		c.operatorAddrs[netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())] = true
	}
}
