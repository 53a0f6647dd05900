package api

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/fixtures"
)

// contractProcedures reads the procedures OpenErrata's extension calls
// from the wire contract (../shared/CONTRACT.md, "Transport"): the
// "Mutations:" and "Queries:" lists of names, all under post.
func contractProcedures(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "..", "..", "CONTRACT.md"))
	require.NoError(t, err)
	lists := regexp.MustCompile("(?m)^\\s*(?:- )?(Mutations|Queries): (`[a-zA-Z]+`(?:, `[a-zA-Z]+`)*)\\.$").FindAllStringSubmatch(string(raw), -1)
	require.Len(t, lists, 2, "the contract lists its mutations and its queries")
	var out []string
	for _, l := range lists {
		for _, name := range regexp.MustCompile("`([a-zA-Z]+)`").FindAllStringSubmatch(l[2], -1) {
			out = append(out, "post."+name[1])
		}
	}
	slices.Sort(out)
	return out
}

// trpcRoutes lists the procedures a server routes, as "METHOD name".
func trpcRoutes(s *Server) []string {
	var out []string
	for _, r := range s.App().GetRoutes(true) {
		if name, ok := strings.CutPrefix(r.Path, "/trpc/"); ok && name != ":path" && r.Method != "HEAD" {
			out = append(out, r.Method+" "+name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// The verdict namespace is Errata's own: the contract names exactly the
// six post.* procedures OpenErrata's extension calls, the server routes
// them unchanged, and every other procedure is under verdict., a
// namespace the contract never names. So OpenErrata's extension, which
// calls only what the contract lists, never reaches it; and the verdict
// procedures did not add anything under post.
func TestVerdictNamespaceIsOutsideTheContract(t *testing.T) {
	contract := contractProcedures(t)
	require.Equal(t, []string{"post.batchStatus", "post.getInvestigation", "post.investigateNow",
		"post.recordViewAndGetStatus", "post.registerObservedVersion", "post.validateSettings"}, contract)
	raw, err := os.ReadFile(filepath.Join(fixtures.Dir(t), "..", "..", "CONTRACT.md"))
	require.NoError(t, err)
	require.NotContains(t, string(raw), "verdict.", "the contract must not name the verdict namespace")

	plain, _ := newFakeServer(t)
	w := newBench(t, benchOpts{})
	contractRoutes := []string{"GET post.batchStatus", "GET post.getInvestigation", "GET post.validateSettings",
		"POST post.investigateNow", "POST post.recordViewAndGetStatus", "POST post.registerObservedVersion"}
	require.Equal(t, contractRoutes, trpcRoutes(plain))
	require.Equal(t, []string{"GET post.batchStatus", "GET post.getInvestigation", "GET post.validateSettings", "GET verdict.get",
		"POST post.investigateNow", "POST post.recordViewAndGetStatus", "POST post.registerObservedVersion", "POST verdict.request"},
		trpcRoutes(w.server))
	for _, route := range trpcRoutes(w.server) {
		name := strings.SplitN(route, " ", 2)[1]
		if strings.HasPrefix(name, "verdict.") {
			require.NotContains(t, contract, name)
			// Under the contract's namespace the verdict procedures do not exist.
			r := post(t, w.server, "post."+strings.TrimPrefix(name, "verdict."), []byte(`{}`))
			expectError(t, r, "NOT_FOUND", "post."+strings.TrimPrefix(name, "verdict."))
			continue
		}
		require.Contains(t, contract, name)
	}
	// An instance without the workbench has no verdict namespace at all.
	expectError(t, post(t, plain, "verdict.request", []byte(`{}`)), "NOT_FOUND", "verdict.request")
}
