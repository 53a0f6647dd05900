// Command loopbackguard is built by TestLoopbackOptionsPanicOutsideTests: a
// production binary that asks for loopback access must panic.
package main

import (
	"fmt"
	"net/netip"
	"os"

	"github.com/errata-dev/errata/internal/httpsafe"
)

func main() {
	which := ""
	if len(os.Args) > 1 {
		which = os.Args[1]
	}
	defer func() {
		if r := recover(); r != nil {
			fmt.Println("panic:", r)
			os.Exit(3)
		}
	}()
	switch which {
	case "addrs":
		httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort("127.0.0.1:80"))
	default:
		httpsafe.AllowLoopbackForTests()
	}
	fmt.Println("loopback option accepted")
}
