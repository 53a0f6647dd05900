package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence/sources"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runSources runs `errata sources ...` with registry as
// ERRATA_SOURCE_REGISTRY and returns stdout, stderr and the error.
func runSources(t *testing.T, registry string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"sources"}, args...)...)
	cmd.Env = append(os.Environ(), "ERRATA_SOURCE_REGISTRY="+registry)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func TestSourcesLookupJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		want sourceLookup
	}{
		{"https://www.BLS.gov/cpi/?utm_source=x&b=1#top", sourceLookup{
			URL: "https://bls.gov/cpi?b=1", Host: "bls.gov", Domain: "bls.gov", Tier: 1, TierName: "official or primary",
			Rule: "exact:bls.gov", Origin: "starter", RegistryVersion: sources.Default().Version(),
		}},
		{"https://foo.blogspot.com/2020/x.html", sourceLookup{
			URL: "https://foo.blogspot.com/2020/x.html", Host: "foo.blogspot.com", Domain: "foo.blogspot.com", Tier: 4,
			TierName: "user-generated or social", Rule: "parent:blogspot.com", Origin: "starter", RegistryVersion: sources.Default().Version(),
		}},
		{"https://www.ox.ac.uk/", sourceLookup{
			URL: "https://ox.ac.uk/", Host: "ox.ac.uk", Domain: "ox.ac.uk", Tier: 2, TierName: "quality media, reference or academic",
			Rule: "wildcard:*.ac.uk", Origin: "starter", RegistryVersion: sources.Default().Version(),
		}},
		{"https://example.com/", sourceLookup{
			URL: "https://example.com/", Host: "example.com", Domain: "example.com", Tier: 3, TierName: "other",
			Rule: "default", RegistryVersion: sources.Default().Version(),
		}},
	} {
		out, stderr, err := runSources(t, "", "lookup", "--json", tc.url)
		require.NoError(t, err, stderr)
		var got sourceLookup
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&got), out)
		require.Equal(t, tc.want, got)
		// The keys others depend on, by name and JSON type.
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		require.IsType(t, float64(0), raw["tier"])
		require.IsType(t, "", raw["domain"])
		require.IsType(t, "", raw["rule"])
	}
}

func TestSourcesLookupText(t *testing.T) {
	t.Parallel()
	out, stderr, err := runSources(t, "", "lookup", "https://data.nih.gov/x")
	require.NoError(t, err, stderr)
	require.Equal(t, "url       https://data.nih.gov/x\n"+
		"host      data.nih.gov\n"+
		"domain    nih.gov\n"+
		"tier      1 (official or primary)\n"+
		"rule      parent:nih.gov (starter)\n"+
		"registry  "+sources.Default().Version()+"\n", out)
}

func TestSourcesLookupRejectsHostileURLs(t *testing.T) {
	t.Parallel()
	for url, reason := range map[string]string{
		"http://127.0.0.1/":                                "ip_literal",
		"javascript:alert(1)":                              "unsupported_scheme",
		"https://u:p@example.com/":                         "userinfo",
		"http://localhost:8080/":                           "no_public_suffix",
		"https://example.com/" + strings.Repeat("a", 5000): "too_long",
	} {
		out, stderr, err := runSources(t, "", "lookup", "--json", url)
		require.Error(t, err, "%.60s", url)
		require.Empty(t, out)
		require.Contains(t, stderr, "errata: url rejected: "+reason)
		require.Less(t, len(stderr), 300)
	}
	_, _, err := runSources(t, "", "lookup")
	require.Error(t, err)
}

func TestSourcesListGolden(t *testing.T) {
	t.Parallel()
	out, stderr, err := runSources(t, "", "list", "--json")
	require.NoError(t, err, stderr)
	golden := filepath.Join("testdata", "sources_list.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update to create %s", golden)
	require.Equal(t, string(want), out)

	var list struct {
		RegistryVersion string `json:"registry_version"`
		DefaultTier     int    `json:"default_tier"`
		Rules           []struct {
			Pattern, Kind, Origin string
			Tier                  int
		} `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Equal(t, sources.Default().Version(), list.RegistryVersion)
	require.Len(t, list.Rules, len(sources.Default().Rules()))

	text, _, err := runSources(t, "", "list")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(text, "registry "+sources.Default().Version()+": "), text[:80])
	require.Contains(t, text, "\n1     bls.gov")
}

func TestSourcesUserRegistry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "ours.registry")
	require.NoError(t, os.WriteFile(path, []byte("registry ours-v1\n2 bls.gov\n5 example.com\n"), 0o644))

	out, stderr, err := runSources(t, path, "lookup", "--json", "https://www.bls.gov/")
	require.NoError(t, err, stderr)
	var got sourceLookup
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, 2, got.Tier)
	require.Equal(t, "exact:bls.gov", got.Rule)
	require.Equal(t, "user", got.Origin)
	require.True(t, strings.HasPrefix(got.RegistryVersion, "starter-v1+ours-v1@"), got.RegistryVersion)
	require.NotEqual(t, sources.Default().Version(), got.RegistryVersion)

	out, stderr, err = runSources(t, path, "list", "--json")
	require.NoError(t, err, stderr)
	var list struct {
		RegistryVersion string       `json:"registry_version"`
		Rules           []sourceRule `json:"rules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Equal(t, got.RegistryVersion, list.RegistryVersion)
	require.Contains(t, list.Rules, sourceRule{Pattern: "bls.gov", Kind: "domain", Tier: 2, Origin: "user"})
	require.Contains(t, list.Rules, sourceRule{Pattern: "example.com", Kind: "domain", Tier: 5, Origin: "user"})
	require.Contains(t, list.Rules, sourceRule{Pattern: "*.gov", Kind: "wildcard", Tier: 1, Origin: "starter"})
	require.NotContains(t, list.Rules, sourceRule{Pattern: "bls.gov", Kind: "domain", Tier: 1, Origin: "starter"})

	bad := filepath.Join(dir, "bad.registry")
	require.NoError(t, os.WriteFile(bad, []byte("1 ok.example.com\n9 example.com\n"), 0o644))
	_, stderr, err = runSources(t, bad, "list")
	require.Error(t, err)
	require.Contains(t, stderr, bad+`:2: tier "9": want 1, 2, 3, 4 or 5`)
}
