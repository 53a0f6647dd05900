// Command loopbackguard is a production program that reaches for the
// test-only loopback options, under another import name and as a function
// value: TestLoopbackOptionsOnlyInTests must find every reference in it.
package main

import (
	"fmt"
	"net/netip"

	hs "github.com/errata-dev/errata/internal/httpsafe"
)

func main() {
	open := hs.AllowLoopbackForTests
	opts := []hs.Option{open(), hs.AllowLoopbackAddrsForTests(netip.MustParseAddrPort("127.0.0.1:80"))}
	fmt.Println(len(opts), "loopback options")
}
