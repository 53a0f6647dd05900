// Package internal_test holds the rule of the internal/ room, checked over
// the module's import graph: internal/ is the ground floor. Its packages
// import the standard library, modules and each other, never a room above
// (events, producers, consumers, projections, api, cmd), so plumbing can
// be read and changed without the domain. internal/testkit (test support:
// service set-up, fixtures, the scripted OpenAI double) is the one
// exception, and only tests import it, besides the fake-openai command,
// which serves the double as a process for the browser tests and the demo.
package internal_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/errata-dev/errata/"

// imports maps each package of the module to its non-test imports of the
// module's own packages.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/errata-dev/errata/...").Output()
	require.NoError(t, err, "go list")
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		graph[pkg] = nil
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, module) {
				graph[pkg] = append(graph[pkg], strings.TrimPrefix(imp, module))
			}
		}
	}
	require.Contains(t, graph, "internal/kafka", "the module's packages were listed")
	return graph
}

func TestInternalImportsNothingAbove(t *testing.T) {
	for pkg, deps := range imports(t) {
		if !strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "internal/testkit/") {
			continue
		}
		for _, d := range deps {
			require.Truef(t, strings.HasPrefix(d, "internal/") && !strings.HasPrefix(d, "internal/testkit/"),
				"%s imports %s: internal/ imports nothing above it (nor the test kit)", pkg, d)
		}
	}
}

func TestOnlyTestsImportTheTestKit(t *testing.T) {
	allowed := map[string]string{"cmd/errata": "internal/testkit/fakeopenai"}
	for pkg, deps := range imports(t) {
		if strings.HasPrefix(pkg, "internal/testkit/") {
			continue
		}
		for _, d := range deps {
			if strings.HasPrefix(d, "internal/testkit/") {
				require.Equalf(t, allowed[pkg], d, "%s imports the test kit (%s) outside its tests", pkg, d)
			}
		}
	}
}
