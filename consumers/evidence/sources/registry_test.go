package sources

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// starterVersion pins the starter registry: a change to starter.registry
// or to resolution must show up here, and in the CLI's golden list.
const starterVersion = "starter-v1@1db44c3b699b"

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sources.registry")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestStarterVersion(t *testing.T) {
	t.Parallel()
	r := Default()
	require.Regexp(t, regexp.MustCompile(`^starter-v1@[0-9a-f]{12}$`), r.Version())
	require.Equal(t, starterVersion, r.Version())
	loaded, err := Load("")
	require.NoError(t, err)
	require.Same(t, r, loaded)
}

// TestResolutionOrder: exact beats parent, the nearest parent beats a
// farther one, a parent beats any wildcard, the longest wildcard beats a
// shorter one, and a wildcard never matches its own suffix.
func TestResolutionOrder(t *testing.T) {
	t.Parallel()
	rules, name, err := parse([]byte(`registry order-test
1 a.example.com
2 example.com
4 *.example.com
5 *.com
1 *.b.example.org
2 *.example.org
`), "order", OriginUser)
	require.NoError(t, err)
	r := build(name, rules)
	for _, tc := range []struct {
		url, rule string
		tier      int
	}{
		{"https://a.example.com/", "exact:a.example.com", 1},
		{"https://x.y.a.example.com/", "parent:a.example.com", 1},
		{"https://example.com/", "exact:example.com", 2},
		{"https://www.example.com/", "exact:example.com", 2},
		{"https://b.example.com/", "parent:example.com", 2},
		{"https://other.com/", "wildcard:*.com", 5},
		{"https://x.other.com/", "wildcard:*.com", 5},
		{"https://x.b.example.org/", "wildcard:*.b.example.org", 1},
		{"https://b.example.org/", "wildcard:*.example.org", 2},
		{"https://example.org/", "default", 3},
		{"https://example.net/", "default", 3},
	} {
		m, err := r.Lookup(tc.url)
		require.NoError(t, err, tc.url)
		require.Equal(t, tc.rule, m.Rule, tc.url)
		require.Equal(t, tc.tier, m.Tier, tc.url)
	}
}

func TestStarterLookups(t *testing.T) {
	t.Parallel()
	r := Default()
	for _, tc := range []struct {
		url  string
		want Match
	}{
		{"https://www.bls.gov/cpi/", Match{URL: "https://bls.gov/cpi", Host: "bls.gov", Domain: "bls.gov", Tier: 1, Rule: "exact:bls.gov"}},
		{"https://data.bls.gov/timeseries/CUUR0000SA0", Match{URL: "https://data.bls.gov/timeseries/CUUR0000SA0", Host: "data.bls.gov", Domain: "bls.gov", Tier: 1, Rule: "parent:bls.gov"}},
		{"https://www.nhlbi.nih.gov/health", Match{URL: "https://nhlbi.nih.gov/health", Host: "nhlbi.nih.gov", Domain: "nih.gov", Tier: 1, Rule: "parent:nih.gov"}},
		{"https://pubmed.ncbi.nlm.nih.gov/123/", Match{URL: "https://pubmed.ncbi.nlm.nih.gov/123", Host: "pubmed.ncbi.nlm.nih.gov", Domain: "nih.gov", Tier: 1, Rule: "exact:pubmed.ncbi.nlm.nih.gov"}},
		{"https://www.ssa.gov/", Match{URL: "https://ssa.gov/", Host: "ssa.gov", Domain: "ssa.gov", Tier: 1, Rule: "wildcard:*.gov"}},
		{"https://www.army.mil/", Match{URL: "https://army.mil/", Host: "army.mil", Domain: "army.mil", Tier: 1, Rule: "wildcard:*.mil"}},
		// gov.uk is a public suffix: www.gov.uk keeps its www. and is its
		// own registrable domain
		{"https://www.gov.uk/government/statistics", Match{URL: "https://www.gov.uk/government/statistics", Host: "www.gov.uk", Domain: "www.gov.uk", Tier: 1, Rule: "wildcard:*.gov.uk"}},
		{"https://www.ons.gov.uk/economy", Match{URL: "https://ons.gov.uk/economy", Host: "ons.gov.uk", Domain: "ons.gov.uk", Tier: 1, Rule: "exact:ons.gov.uk"}},
		{"https://www.ox.ac.uk/research", Match{URL: "https://ox.ac.uk/research", Host: "ox.ac.uk", Domain: "ox.ac.uk", Tier: 2, Rule: "wildcard:*.ac.uk"}},
		{"https://www.parlament.gv.at/recherchieren", Match{URL: "https://parlament.gv.at/recherchieren", Host: "parlament.gv.at", Domain: "parlament.gv.at", Tier: 1, Rule: "wildcard:*.gv.at"}},
		{"https://www.u-tokyo.ac.jp/en/", Match{URL: "https://u-tokyo.ac.jp/en", Host: "u-tokyo.ac.jp", Domain: "u-tokyo.ac.jp", Tier: 2, Rule: "wildcard:*.ac.jp"}},
		{"https://ec.europa.eu/eurostat/data", Match{URL: "https://ec.europa.eu/eurostat/data", Host: "ec.europa.eu", Domain: "europa.eu", Tier: 1, Rule: "exact:ec.europa.eu"}},
		{"https://frontex.europa.eu/", Match{URL: "https://frontex.europa.eu/", Host: "frontex.europa.eu", Domain: "europa.eu", Tier: 1, Rule: "parent:europa.eu"}},
		{"https://www.who.int/news", Match{URL: "https://who.int/news", Host: "who.int", Domain: "who.int", Tier: 1, Rule: "exact:who.int"}},
		{"https://www.nato.int/", Match{URL: "https://nato.int/", Host: "nato.int", Domain: "nato.int", Tier: 1, Rule: "wildcard:*.int"}},
		{"https://doi.org/10.1038/s41586-020-2649-2", Match{URL: "https://doi.org/10.1038/s41586-020-2649-2", Host: "doi.org", Domain: "doi.org", Tier: 1, Rule: "exact:doi.org"}},
		{"https://www.reuters.com/world/?utm_source=tw#x", Match{URL: "https://reuters.com/world", Host: "reuters.com", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com"}},
		{"https://de.wikipedia.org/wiki/Wien", Match{URL: "https://de.wikipedia.org/wiki/Wien", Host: "de.wikipedia.org", Domain: "wikipedia.org", Tier: 2, Rule: "parent:wikipedia.org"}},
		{"https://web.mit.edu/", Match{URL: "https://web.mit.edu/", Host: "web.mit.edu", Domain: "mit.edu", Tier: 2, Rule: "wildcard:*.edu"}},
		{"https://arxiv.org/abs/1706.03762", Match{URL: "https://arxiv.org/abs/1706.03762", Host: "arxiv.org", Domain: "arxiv.org", Tier: 3, Rule: "exact:arxiv.org"}},
		{"https://example.com/", Match{URL: "https://example.com/", Host: "example.com", Domain: "example.com", Tier: 3, Rule: "default"}},
		{"https://bücher.de/", Match{URL: "https://xn--bcher-kva.de/", Host: "xn--bcher-kva.de", Domain: "xn--bcher-kva.de", Tier: 3, Rule: "default"}},
		// tier-4 platforms: sub-hosts resolve through the parent walk
		{"https://foo.substack.com/p/bar", Match{URL: "https://foo.substack.com/p/bar", Host: "foo.substack.com", Domain: "substack.com", Tier: 4, Rule: "parent:substack.com"}},
		{"https://www.lesswrong.com/posts/abc/x", Match{URL: "https://lesswrong.com/posts/abc/x", Host: "lesswrong.com", Domain: "lesswrong.com", Tier: 4, Rule: "exact:lesswrong.com"}},
		{"https://mobile.twitter.com/a/status/1", Match{URL: "https://mobile.twitter.com/a/status/1", Host: "mobile.twitter.com", Domain: "twitter.com", Tier: 4, Rule: "parent:twitter.com"}},
		{"https://sites.google.com/view/x", Match{URL: "https://sites.google.com/view/x", Host: "sites.google.com", Domain: "google.com", Tier: 4, Rule: "exact:sites.google.com"}},
		{"https://www.google.com/search?q=x", Match{URL: "https://google.com/search?q=x", Host: "google.com", Domain: "google.com", Tier: 3, Rule: "default"}},
		// The public suffix list makes blogspot.com and github.io suffixes:
		// each blog is its own registrable domain (independent of the
		// others), and the platform's rule still applies by the walk up to
		// the ICANN registrable domain.
		{"https://foo.blogspot.com/2020/01/x.html", Match{URL: "https://foo.blogspot.com/2020/01/x.html", Host: "foo.blogspot.com", Domain: "foo.blogspot.com", Tier: 4, Rule: "parent:blogspot.com"}},
		{"https://www.foo.blogspot.com/", Match{URL: "https://foo.blogspot.com/", Host: "foo.blogspot.com", Domain: "foo.blogspot.com", Tier: 4, Rule: "parent:blogspot.com"}},
		{"https://blogspot.com/", Match{URL: "https://blogspot.com/", Host: "blogspot.com", Domain: "blogspot.com", Tier: 4, Rule: "exact:blogspot.com"}},
		{"https://user.github.io/repo/", Match{URL: "https://user.github.io/repo", Host: "user.github.io", Domain: "user.github.io", Tier: 4, Rule: "parent:github.io"}},
		{"https://www.gov.scot/publications/", Match{URL: "https://gov.scot/publications", Host: "gov.scot", Domain: "gov.scot", Tier: 1, Rule: "exact:gov.scot"}},
		{"https://www.dailymail.co.uk/news/article-1.html", Match{URL: "https://dailymail.co.uk/news/article-1.html", Host: "dailymail.co.uk", Domain: "dailymail.co.uk", Tier: 5, Rule: "exact:dailymail.co.uk"}},
	} {
		m, err := r.Lookup(tc.url)
		require.NoError(t, err, tc.url)
		require.Equal(t, tc.want, m, tc.url)
	}
}

// TestStarterCoverage checks the tier of each source the issue requires
// the starter registry to cover.
func TestStarterCoverage(t *testing.T) {
	t.Parallel()
	want := map[int][]string{
		1: {"whitehouse.gov", "congress.gov", "supremecourt.gov", "uscourts.gov", "census.gov", "bls.gov", "cdc.gov",
			"nih.gov", "nasa.gov", "noaa.gov", "www.gov.uk", "parliament.uk", "ons.gov.uk", "judiciary.uk",
			"nationalarchives.gov.uk", "publications.parliament.uk", "europa.eu", "europarl.europa.eu", "curia.europa.eu",
			"ec.europa.eu", "un.org", "who.int", "imf.org", "worldbank.org", "data.worldbank.org", "oecd.org", "ipcc.ch",
			"nature.com", "science.org", "thelancet.com", "nejm.org", "bmj.com", "pnas.org", "cell.com",
			"pubmed.ncbi.nlm.nih.gov", "doi.org", "insee.fr", "destatis.de", "statcan.gc.ca", "abs.gov.au"},
		2: {"reuters.com", "apnews.com", "afp.com", "nytimes.com", "washingtonpost.com", "wsj.com", "ft.com",
			"theguardian.com", "bbc.co.uk", "bbc.com", "economist.com", "lemonde.fr", "faz.net", "en.wikipedia.org",
			"britannica.com", "harvard.edu", "cam.ac.uk", "plato.stanford.edu"},
		4: {"x.com", "twitter.com", "facebook.com", "instagram.com", "tiktok.com", "reddit.com", "old.reddit.com",
			"youtube.com", "m.youtube.com", "medium.com", "substack.com", "blogspot.com", "wordpress.com",
			"someone.wordpress.com", "tumblr.com", "quora.com", "threads.net", "bsky.app", "lesswrong.com"},
		5: {"infowars.com", "naturalnews.com", "breitbart.com", "theonion.com"},
	}
	r := Default()
	for tier, hosts := range want {
		for _, h := range hosts {
			m, err := r.Lookup("https://" + h + "/")
			require.NoError(t, err, h)
			require.Equal(t, tier, m.Tier, "%s (rule %s)", h, m.Rule)
		}
	}
}

func TestRulesAreACopy(t *testing.T) {
	t.Parallel()
	r := Default()
	rules := r.Rules()
	require.NotEmpty(t, rules)
	for i := range rules {
		require.Equal(t, OriginStarter, rules[i].Origin)
		require.True(t, rules[i].Tier >= 1 && rules[i].Tier <= 5)
		rules[i].Tier = 5
	}
	m, err := r.Lookup("https://bls.gov/")
	require.NoError(t, err)
	require.Equal(t, 1, m.Tier)
	// Sorted by tier, then pattern.
	rules = r.Rules()
	for i := 1; i < len(rules); i++ {
		a, b := rules[i-1], rules[i]
		require.True(t, a.Tier < b.Tier || a.Tier == b.Tier && a.Pattern < b.Pattern, "%v before %v", a, b)
	}
}

func TestLoadUserFileOverridesAndExtends(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "\ufeff# our local view\r\nregistry acme-v2\r\n\r\n2 bls.gov   # demoted, for this test\r\n5 example.com\r\n1 *.gov.ie\r\n1 BÜCHER.de\r\n")
	r, err := Load(path)
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^starter-v1\+acme-v2@[0-9a-f]{12}$`), r.Version())
	require.NotEqual(t, strings.TrimPrefix(Default().Version(), "starter-v1"), strings.TrimPrefix(r.Version(), "starter-v1+acme-v2"))

	for _, tc := range []struct {
		url, rule string
		tier      int
	}{
		{"https://www.bls.gov/", "exact:bls.gov", 2},
		{"https://data.bls.gov/", "parent:bls.gov", 2},
		{"https://shop.example.com/", "parent:example.com", 5},
		{"https://www.cso.gov.ie/", "wildcard:*.gov.ie", 1},
		{"https://bücher.de/", "exact:xn--bcher-kva.de", 1},
		{"https://cdc.gov/", "exact:cdc.gov", 1},
	} {
		m, err := r.Lookup(tc.url)
		require.NoError(t, err, tc.url)
		require.Equal(t, tc.rule, m.Rule, tc.url)
		require.Equal(t, tc.tier, m.Tier, tc.url)
	}
	origins := map[string]string{}
	for _, rule := range r.Rules() {
		_, dup := origins[rule.Pattern]
		require.False(t, dup, "one effective rule per pattern: %s", rule.Pattern)
		origins[rule.Pattern] = rule.Origin
	}
	require.Equal(t, OriginUser, origins["bls.gov"])
	require.Equal(t, OriginUser, origins["xn--bcher-kva.de"])
	require.Equal(t, OriginStarter, origins["cdc.gov"])
	require.Len(t, r.Rules(), len(Default().Rules())+3)

	// The starter registry is untouched.
	m, err := Default().Lookup("https://bls.gov/")
	require.NoError(t, err)
	require.Equal(t, 1, m.Tier)
	require.Equal(t, starterVersion, Default().Version())
}

// TestVersionHashesEffectiveRules: the hash covers what is in effect, not
// how the file is written; the name says a user file was read.
func TestVersionHashesEffectiveRules(t *testing.T) {
	t.Parallel()
	hash := func(v string) string { return v[strings.LastIndexByte(v, '@')+1:] }
	same, err := Load(writeFile(t, "# restates a starter rule\n1   bls.gov\n"))
	require.NoError(t, err)
	require.Equal(t, "starter-v1+user@"+hash(starterVersion), same.Version())

	empty, err := Load(writeFile(t, "# nothing\n\n"))
	require.NoError(t, err)
	require.Equal(t, "starter-v1+user@"+hash(starterVersion), empty.Version())

	changed, err := Load(writeFile(t, "2 bls.gov\n"))
	require.NoError(t, err)
	require.NotEqual(t, hash(starterVersion), hash(changed.Version()))

	// The same effective rules in another order and layout hash alike.
	a, err := Load(writeFile(t, "registry x\n5 a.example.com\n4 b.example.com\n"))
	require.NoError(t, err)
	b, err := Load(writeFile(t, "4 b.example.com # b\n\n  registry   x\n5\ta.example.com\n"))
	require.NoError(t, err)
	require.Equal(t, a.Version(), b.Version())
}

func TestLoadRejectsMalformedFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"tier out of range", "1 ok.com\n6 example.com\n", []string{":2: tier \"6\": want 1, 2, 3, 4 or 5"}},
		{"tier zero", "0 example.com\n", []string{":1: tier \"0\""}},
		{"tier not a number", "high example.com\n", []string{":1: tier \"high\""}},
		{"tier padded", "01 example.com\n", []string{":1: tier \"01\""}},
		{"swapped columns", "example.com 1\n", []string{":1: tier \"example.com\""}},
		{"missing pattern", "1\n", []string{`:1: want "TIER PATTERN"`}},
		{"extra field", "1 example.com 2\n", []string{`:1: want "TIER PATTERN"`}},
		{"duplicate", "1 example.com\n\n2 EXAMPLE.com\n", []string{":3: duplicate rule for example.com (first on line 1)"}},
		{"duplicate wildcard", "1 *.gov.ie\n1 *.gov.ie\n", []string{":2: duplicate rule for *.gov.ie (first on line 1)"}},
		{"public suffix", "1 co.uk\n", []string{`:1: pattern "co.uk": co.uk is a public suffix: write *.co.uk`}},
		{"top-level domain", "1 gov\n", []string{`:1: pattern "gov": gov is a public suffix: write *.gov`}},
		{"inner wildcard", "1 a.*.com\n", []string{`:1: pattern "a.*.com": a wildcard is only allowed`}},
		{"bare wildcard", "1 *\n", []string{`:1: pattern "*"`}},
		{"double wildcard", "1 *.*.com\n", []string{`:1: pattern "*.*.com"`}},
		{"url", "1 https://example.com/\n", []string{`:1: pattern "https://example.com/": a pattern is a host name, not a URL`}},
		{"ip", "1 127.0.0.1\n", []string{`:1: pattern "127.0.0.1": not a host name (ip_literal)`}},
		{"no suffix", "1 intranet.corp\n", []string{`:1: pattern "intranet.corp": its top-level domain is not on the public suffix list`}},
		{"localhost", "1 localhost\n", []string{`:1: pattern "localhost": its top-level domain is not on the public suffix list`}},
		{"bad host", "1 ex_ample.com\n", []string{`:1: pattern "ex_ample.com": not a host name (bad_host)`}},
		{"trailing dot", "1 example.com.\n", []string{`:1: pattern "example.com.": no trailing dot`}},
		{"www", "1 www.example.com\n", []string{`:1: pattern "www.example.com": hosts lose a leading www. when normalized: write example.com`}},
		{"control character", "1 exa\x01mple.com\n", []string{`:1: pattern "exa\x01mple.com": not a host name (control_character)`}},
		{"invalid utf-8", "1 exa\xffmple.com\n", []string{":1: not valid UTF-8"}},
		{"bad name", "registry Acme Corp\n", []string{`:1: want "registry NAME"`}},
		{"bad name chars", "registry acme/v2\n", []string{`:1: registry name "acme/v2"`}},
		{"second name", "registry a\nregistry b\n", []string{":2: second registry name (the first is on line 1)"}},
		{"long line", "1 example.com\n#" + strings.Repeat("x", 5000) + "\n", []string{":2: bufio.Scanner: token too long"}},
		{"every faulty line", "7 a.com\n1 b.com\n1 co.uk\n1 b.com\n", []string{":1: tier \"7\"", ":3: pattern \"co.uk\"", ":4: duplicate rule for b.com (first on line 2)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tc.content)
			r, err := Load(path)
			require.Error(t, err)
			require.Nil(t, r)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), path+w)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "missing.registry"))
	require.ErrorIs(t, err, os.ErrNotExist)

	big := writeFile(t, strings.Repeat("# padding line\n", MaxFileBytes/15+1))
	_, err = Load(big)
	require.ErrorContains(t, err, "larger than 4194304 bytes")

	many := writeFile(t, strings.Repeat("9 a.com\n", 30))
	_, err = Load(many)
	require.ErrorContains(t, err, ":20: tier")
	require.NotContains(t, err.Error(), ":21: tier")
	require.ErrorContains(t, err, "... and 10 more")
}

var benchURLs = []string{
	"https://www.bls.gov/news.release/cpi.nr0.htm",
	"https://foo.substack.com/p/some-post?utm_source=twitter&utm_medium=social",
	"https://en.wikipedia.org/wiki/Consumer_price_index#History",
	"https://www.ox.ac.uk/news/2024-01-01-study",
	"https://example.com/a/b/../c/?b=2&a=1",
	"https://bücher.de/katalog",
	"https://www.gov.uk/government/statistics/x",
	"https://user.github.io/repo/",
}

func BenchmarkLookup(b *testing.B) {
	r := Default()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := r.Lookup(benchURLs[i%len(benchURLs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Normalize(benchURLs[i%len(benchURLs)]); err != nil {
			b.Fatal(err)
		}
	}
}
