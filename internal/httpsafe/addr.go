package httpsafe

import "net/netip"

// blockedIPv4 are IPv4 ranges that are not ordinary public unicast
// destinations (RFC 6890 special-purpose registry and friends). Reaching any
// of them from a fetch that a user influences is either an attack on the
// internal network or pointless.
var blockedIPv4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network", includes unspecified
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes broadcast
}

// globalUnicastIPv6 is the only IPv6 space allocated for public unicast.
// Everything outside it (loopback, unspecified, unique-local fc00::/7,
// link-local fe80::/10, site-local, multicast ff00::/8, discard 100::/64,
// local-use NAT64 64:ff9b:1::/48, IPv4-compatible ::/96, IPv4-translated
// ::ffff:0:0:0/96, ...) is refused, except the two forms below that embed
// an IPv4 address.
var globalUnicastIPv6 = netip.MustParsePrefix("2000::/3")

// blockedIPv6 are special ranges inside 2000::/3.
var blockedIPv6 = []netip.Prefix{
	// IETF protocol assignments: Teredo 2001::/32 (tunnels to arbitrary
	// IPv4 hosts), benchmarking 2001:2::/48, ORCHID, AMT, AS112.
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
}

// IPv6 ranges that embed an IPv4 address: the embedded address decides.
var (
	// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d
	// reaches a.b.c.d through a translator.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
	// sixToFour is 6to4 (RFC 3056): 2002:AABB:CCDD::/48 tunnels to
	// AA.BB.CC.DD.
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// IsBlockedAddr reports whether a must never be connected to. IPv4-mapped
// IPv6 addresses (::ffff:a.b.c.d) are judged as the IPv4 address they carry,
// as are the NAT64 and 6to4 forms; the zone of a scoped address is ignored.
// An invalid address is blocked.
func IsBlockedAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return blockedV4(a)
	}
	switch {
	case nat64.Contains(a):
		return blockedV4(embeddedV4(a, 12))
	case sixToFour.Contains(a):
		return blockedV4(embeddedV4(a, 2))
	case !globalUnicastIPv6.Contains(a):
		return true
	}
	for _, p := range blockedIPv6 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func blockedV4(a netip.Addr) bool {
	for _, p := range blockedIPv4 {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// embeddedV4 returns the IPv4 address stored in bytes [at, at+4) of a.
func embeddedV4(a netip.Addr, at int) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte{b[at], b[at+1], b[at+2], b[at+3]})
}
