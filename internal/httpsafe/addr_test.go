package httpsafe

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsBlockedAddr(t *testing.T) {
	blocked := []string{
		// IPv4 special-purpose ranges.
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
		"127.0.0.1", "127.255.255.254", "169.254.169.254", "172.16.0.1", "172.31.255.255",
		"192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255",
		"198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		// IPv6 outside global unicast, and special ranges inside it.
		"::", "::1", "::2", "::127.0.0.1", "fe80::1", "fe80::1%eth0", "febf::1", "fec0::1", "fc00::1",
		"fd12:3456:789a::1", "ff02::1", "ff0e::1", "100::1", "64:ff9b:1::1", "::ffff:0:a00:1",
		"2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:2::1", "2001:10::1",
		"2001:db8::1", "2001:db8:ffff::1", "3fff::1",
		// IPv4-mapped, NAT64 and 6to4 forms of blocked IPv4 addresses.
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::c0a8:101",
		"2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1",
	}
	for _, s := range blocked {
		t.Run("blocked/"+s, func(t *testing.T) {
			require.True(t, IsBlockedAddr(netip.MustParseAddr(s)), s)
		})
	}
	allowed := []string{
		"1.1.1.1", "8.8.8.8", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.15.255.255",
		"172.32.0.1", "192.0.1.1", "198.17.255.255", "198.20.0.1", "223.255.255.255",
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1", "2001:200::1",
		"::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range allowed {
		t.Run("allowed/"+s, func(t *testing.T) {
			require.False(t, IsBlockedAddr(netip.MustParseAddr(s)), s)
		})
	}
	require.True(t, IsBlockedAddr(netip.Addr{}), "the zero Addr is blocked")
}

func TestPolicyCheck(t *testing.T) {
	p := &policy{ports: map[uint16]bool{80: true, 443: true}}
	tests := []struct {
		name string
		ap   string
		want error
	}{
		{"public 443", "93.184.216.34:443", nil},
		{"public 80", "[2606:4700:4700::1111]:80", nil},
		{"public other port", "93.184.216.34:22", ErrBlockedPort},
		{"private", "10.0.0.1:443", ErrBlockedAddress},
		{"loopback", "127.0.0.1:443", ErrBlockedAddress},
		{"mapped loopback", "[::ffff:127.0.0.1]:80", ErrBlockedAddress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.check(netip.MustParseAddrPort(tc.ap))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
		})
	}

	only := &policy{ports: p.ports, loopbackAddrs: map[netip.AddrPort]bool{netip.MustParseAddrPort("127.0.0.1:8080"): true}}
	require.NoError(t, only.check(netip.MustParseAddrPort("127.0.0.1:8080")))
	require.NoError(t, only.check(netip.MustParseAddrPort("[::ffff:127.0.0.1]:8080")))
	require.ErrorIs(t, only.check(netip.MustParseAddrPort("127.0.0.1:8081")), ErrBlockedAddress)
	require.ErrorIs(t, only.check(netip.MustParseAddrPort("10.0.0.1:8080")), ErrBlockedAddress)

	anyLoopback := &policy{ports: p.ports, loopbackAny: true}
	require.NoError(t, anyLoopback.check(netip.MustParseAddrPort("127.0.0.1:8081")))
	require.NoError(t, anyLoopback.check(netip.MustParseAddrPort("[::1]:9")))
	require.ErrorIs(t, anyLoopback.check(netip.MustParseAddrPort("192.168.0.1:80")), ErrBlockedAddress)
}
