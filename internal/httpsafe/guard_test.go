package httpsafe

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoopbackOptionsOnlyInTests: no file of the module but a _test.go
// file refers to the loopback options, so production code cannot enable
// them, whatever its configuration. Every package's non-test files are
// read, those of other platforms and build tags included.
func TestLoopbackOptionsOnlyInTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-e", "-f",
		`{{.ImportPath}}|{{.Dir}}|{{join .GoFiles " "}} {{join .CgoFiles " "}} {{join .IgnoredGoFiles " "}}`,
		"github.com/errata-dev/errata/...").Output()
	require.NoError(t, err, "go list")
	fset := token.NewFileSet()
	var refs []string
	files, pkgs := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		require.Len(t, parts, 3, line)
		pkgs[parts[0]] = true
		for _, name := range strings.Fields(parts[2]) {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			found, err := testOnlyReferences(fset, filepath.Join(parts[1], name), parts[0] == httpsafePath)
			require.NoError(t, err)
			refs = append(refs, found...)
			files++
		}
	}
	require.True(t, pkgs[httpsafePath] && pkgs["github.com/errata-dev/errata/cmd/errata"], "the module's packages were listed")
	require.Greater(t, files, 100)
	require.Empty(t, refs, "production code refers to a test-only loopback option")

	// The same reading finds every reference in a program that does.
	var found []string
	for _, name := range []string{"main.go", "dot.go"} {
		refs, err := testOnlyReferences(fset, filepath.Join("testdata", "loopbackguard", name), false)
		require.NoError(t, err)
		found = append(found, refs...)
	}
	require.Equal(t, []string{
		"testdata/loopbackguard/main.go:14:13: AllowLoopbackForTests",
		"testdata/loopbackguard/main.go:15:33: AllowLoopbackAddrsForTests",
		"testdata/loopbackguard/dot.go:5:8: dot import of httpsafe",
	}, found)
}

const httpsafePath = "github.com/errata-dev/errata/internal/httpsafe"

var testOnlyOptions = map[string]bool{"AllowLoopbackForTests": true, "AllowLoopbackAddrsForTests": true}

// testOnlyReferences lists the references to a test-only option in one Go
// file: through any name it imports this package by (a dot import counts
// as one), or, in this package's own files, anywhere but the declarations.
func testOnlyReferences(fset *token.FileSet, path string, inHTTPSafe bool) ([]string, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var refs []string
	report := func(n ast.Node, what string) {
		refs = append(refs, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	local := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != httpsafePath {
			continue
		}
		local = "httpsafe"
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == "." {
			report(imp, "dot import of httpsafe")
		}
	}
	declared := map[*ast.Ident]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			declared[fd.Name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && local != "" && x.Name == local && testOnlyOptions[n.Sel.Name] {
				report(n.Sel, n.Sel.Name)
			}
		case *ast.Ident:
			if inHTTPSafe && testOnlyOptions[n.Name] && !declared[n] {
				report(n, n.Name)
			}
		}
		return true
	})
	return refs, nil
}

// TestControlHookChecksSocketAddress: the last check, on the raw socket
// address right before connect, refuses what the policy refuses.
func TestControlHookChecksSocketAddress(t *testing.T) {
	d := newDialer(&policy{ports: map[uint16]bool{80: true, 443: true}}, nil)
	require.NoError(t, d.control("tcp4", "93.184.216.34:443", nil))
	require.ErrorIs(t, d.control("tcp4", "127.0.0.1:443", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp6", "[::ffff:10.0.0.1]:80", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp6", "[fe80::1%eth0]:80", nil), ErrBlockedAddress)
	require.ErrorIs(t, d.control("tcp4", "93.184.216.34:25", nil), ErrBlockedPort)
	require.ErrorIs(t, d.control("tcp4", "not-an-address", nil), ErrBlockedAddress)
}

// rebindingResolver answers a name with the allowed address first and an
// internal one afterwards, as a DNS rebinding attacker's server would.
type rebindingResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

// TestDNSRebindingBlockedAtDial: every new connection resolves and checks
// again, so a name that turns internal after a first good answer is refused.
func TestDNSRebindingBlockedAtDial(t *testing.T) {
	srv := newCountingServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close") // every request dials anew
		_, _ = io.WriteString(w, "ok")
	})
	resolver := &rebindingResolver{answers: [][]netip.Addr{addrs("127.0.0.1"), addrs("10.0.0.7")}}
	c := newClient(t, WithResolver(resolver), AllowLoopbackAddrsForTests(srv.addrPort()))
	target := "http://rebind.example:" + itoa(srv.addrPort().Port()) + "/"

	resp, err := c.Get(context.Background(), target)
	require.NoError(t, err)
	require.Equal(t, "ok", string(resp.Body))

	_, err = c.Get(context.Background(), target)
	require.ErrorIs(t, err, ErrBlockedAddress)
	require.Contains(t, err.Error(), "10.0.0.7")
	require.Equal(t, 2, resolver.calls)
	require.EqualValues(t, 1, srv.hits.Load())
}
