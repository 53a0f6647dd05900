package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testingImporters are the binary's dependencies allowed to import the
// testing package, with the reason. Only fiber v2's utils does, for its
// AssertEqual helper, which nothing calls: the linker keeps no function of
// testing, only its package initialisation (checked below).
var testingImporters = map[string]string{
	"github.com/gofiber/fiber/v2/utils": "fiber v2's AssertEqual test helper, never called",
}

// TestBinaryHoldsNoTestCode keeps test code out of the errata binary: no
// test support (the test kit's service set-up and fixtures), no
// testcontainers, no package of this module or any other that imports
// testing beyond testingImporters, and no function of testing linked.
func TestBinaryHoldsNoTestCode(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	require.NoError(t, err, "go list")
	var importers []string
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		n++
		for _, banned := range []string{"internal/testkit/testenv", "internal/testkit/teststack", "internal/testkit/fixtures"} {
			banned = "github.com/errata-dev/errata/" + banned
			require.Falsef(t, pkg == banned || strings.HasPrefix(pkg, banned+"/"), "the binary links %s", pkg)
		}
		require.NotContainsf(t, pkg, "testcontainers", "the binary links %s", pkg)
		require.Falsef(t, strings.HasPrefix(pkg, "testing/"), "the binary links %s", pkg)
		if slices.Contains(fields[1:], "testing") {
			importers = append(importers, pkg)
		}
	}
	require.Greater(t, n, 100, "the binary's dependencies were listed")
	for _, pkg := range importers {
		require.Containsf(t, testingImporters, pkg, "%s imports testing and is linked into the binary", pkg)
	}

	// What the linker kept: testing's package initialisation at most
	// (testing.init), never one of its functions or methods.
	syms, err := exec.Command("go", "tool", "nm", binary).Output()
	require.NoError(t, err, "go tool nm")
	var linked []string
	for _, line := range strings.Split(string(syms), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		kind, name := f[len(f)-2], f[len(f)-1]
		if (kind == "T" || kind == "t") && strings.HasPrefix(name, "testing.") && name != "testing.init" {
			linked = append(linked, name)
		}
	}
	require.Empty(t, linked, "functions of the testing package in the binary")
}
