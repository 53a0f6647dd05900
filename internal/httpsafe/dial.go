package httpsafe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// policy decides which endpoints may be connected to.
type policy struct {
	ports         map[uint16]bool
	loopbackAny   bool
	loopbackAddrs map[netip.AddrPort]bool
	operatorAddrs map[netip.AddrPort]bool
}

// check returns nil if ap may be dialled, else an error wrapping
// ErrBlockedAddress or ErrBlockedPort.
func (p *policy) check(ap netip.AddrPort) error {
	a := ap.Addr().WithZone("").Unmap()
	if p.operatorAddrs[netip.AddrPortFrom(a, ap.Port())] {
		return nil
	}
	if a.IsLoopback() && (p.loopbackAny || p.loopbackAddrs[netip.AddrPortFrom(a, ap.Port())]) {
		return nil
	}
	if IsBlockedAddr(a) {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, a)
	}
	if !p.ports[ap.Port()] {
		return fmt.Errorf("%w: %d", ErrBlockedPort, ap.Port())
	}
	return nil
}

// dialer resolves a host itself, refuses the whole host if any of its
// addresses is blocked, and then connects to the checked address literals
// only. The net.Dialer's Control hook re-checks the socket address right
// before connect, so no path (a future change, a resolver surprise) can
// connect to an address that was not checked: the check happens at dial
// time, which is what defeats DNS rebinding.
type dialer struct {
	policy   *policy
	resolver Resolver
	net      *net.Dialer
}

func newDialer(p *policy, r Resolver) *dialer {
	if r == nil {
		r = net.DefaultResolver
	}
	d := &dialer{policy: p, resolver: r}
	d.net = &net.Dialer{
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   d.control,
	}
	return d
}

// control runs on the raw socket just before connect(2).
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable socket address %q", ErrBlockedAddress, address)
	}
	return d.policy.check(ap)
}

// DialContext is the http.Transport dial hook. With proxies disabled,
// address is the URL's host:port.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("%w: port %q", ErrBlockedPort, portText)
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	endpoints := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		// One bad answer refuses the host: a name with mixed public and
		// internal answers is a rebinding setup, not a real service.
		if err := d.policy.check(ap); err != nil {
			return nil, fmt.Errorf("dial %s: %w", host, err)
		}
		endpoints = append(endpoints, ap)
	}
	var errs []error
	for _, ap := range endpoints {
		conn, err := d.net.DialContext(ctx, network, ap.String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve returns host's addresses, unmapped; a literal address resolves to
// itself without a lookup.
func (d *dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out, nil
}
