// Package sources is the source registry: it maps a source URL to a tier of
// reliability (1 official and primary ... 5 known unreliable) by recorded
// rules, and normalizes URLs so sources deduplicate and count independence
// by registrable domain.
//
// # Rules
//
// The rules are data: starter.registry, embedded in the binary, and an
// optional user file (ERRATA_SOURCE_REGISTRY) in the same format, read at
// start-up, whose rules extend the starter's and override a starter rule
// with the same pattern. The format is one rule a line, "TIER PATTERN",
// with "#" comments and blank lines, and at most one "registry NAME" line
// naming the rule set. A PATTERN is a host name ("bls.gov") or a wildcard
// ("*.gov"); TIER is 1 to 5. A file with an invalid tier or pattern, or the
// same pattern twice, is refused with every faulty line named.
//
// # Resolution
//
// Lookup normalizes the URL (Normalize), then takes the first of:
//
//  1. exact: a host-name rule equal to the host ("exact:bls.gov");
//  2. parent: the nearest host-name rule for a parent of the host, walking
//     up to the host's registrable domain under the ICANN section of the
//     public suffix list ("parent:nih.gov" for data.nih.gov);
//  3. wildcard: the longest wildcard whose suffix ends the host
//     ("wildcard:*.ac.uk"); "*.gov" matches foo.gov but not gov;
//  4. default: tier 3.
//
// The walk stops at the ICANN registrable domain rather than at the full
// list's one on purpose: the list's private section makes blogspot.com,
// github.io and similar hosting platforms public suffixes, so
// foo.blogspot.com is its own registrable domain there, yet the platform's
// rule (blogspot.com: tier 4) must still apply to the sites it hosts.
// Independence is the other way round: Match.Domain, the unit of
// independence, is the full list's registrable domain, so two blogs on
// blogspot.com are two domains, while two blogs on substack.com (not on
// the list) are one.
//
// # Version
//
// Version() is "<name>@<first 12 hex digits of the SHA-256 of the
// effective rules>", e.g. "starter-v1@0123456789ab", or
// "starter-v1+<user name>@..." with a user file (whose name defaults to
// "user"). The hash covers every effective pattern and tier and the
// resolution algorithm's own version, not comments or layout, so every
// assessment records exactly which rules it was judged by.
package sources

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/publicsuffix"
)

//go:embed starter.registry
var starterData []byte

// StarterName is the name the embedded registry declares.
const StarterName = "starter-v1"

// resolutionVersion is hashed with the rules: a change to how rules are
// resolved must change every registry version.
const resolutionVersion = "resolution/1"

// DefaultTier is the tier of a source no rule matches.
const DefaultTier = 3

// Rule origins.
const (
	OriginStarter = "starter"
	OriginUser    = "user"
)

// MaxFileBytes bounds a user registry file.
const MaxFileBytes = 4 << 20

// maxReportedErrors bounds the faulty lines one error lists.
const maxReportedErrors = 20

// TierName is a short description of tier t.
func TierName(t int) string {
	switch t {
	case 1:
		return "official or primary"
	case 2:
		return "quality media, reference or academic"
	case 3:
		return "other"
	case 4:
		return "user-generated or social"
	case 5:
		return "known unreliable"
	}
	return "invalid"
}

// Rule maps a host name and its subdomains, or a wildcard suffix, to a tier.
type Rule struct {
	// Pattern is a lower-case ASCII host name ("bls.gov") or "*." and a
	// suffix ("*.gov").
	Pattern string `json:"pattern"`
	Tier    int    `json:"tier"`
	// Origin is OriginStarter or OriginUser.
	Origin string `json:"origin"`
}

// Wildcard reports whether the rule is a wildcard suffix rule.
func (r Rule) Wildcard() bool { return strings.HasPrefix(r.Pattern, "*.") }

// Match is how Lookup resolved a URL.
type Match struct {
	// URL is the normalized URL and Host its host.
	URL  string `json:"url"`
	Host string `json:"host"`
	// Domain is the registrable domain under the public suffix list, the
	// unit of independence.
	Domain string `json:"domain"`
	Tier   int    `json:"tier"`
	// Rule names the rule that matched: "exact:bls.gov",
	// "parent:nih.gov", "wildcard:*.gov" or "default".
	Rule string `json:"rule"`
}

// Registry resolves URLs to tiers. It is immutable and safe for concurrent
// use.
type Registry struct {
	version string
	rules   []Rule
	// domains maps a host-name pattern, wildcards the suffix of a wildcard
	// pattern (without "*."), to its index in rules.
	domains   map[string]int
	wildcards map[string]int
}

var defaultRegistry = sync.OnceValue(func() *Registry {
	rules, name, err := parse(starterData, "starter.registry", OriginStarter)
	if err != nil {
		panic(fmt.Sprintf("sources: the embedded starter registry is invalid: %v", err))
	}
	if name != StarterName {
		panic(fmt.Sprintf("sources: the embedded registry is named %q, want %q", name, StarterName))
	}
	return build(name, rules)
})

// Default is the starter registry alone.
func Default() *Registry { return defaultRegistry() }

// Load is the starter registry extended by the rules of the file at
// extraPath (ERRATA_SOURCE_REGISTRY), or Default when extraPath is empty.
func Load(extraPath string) (*Registry, error) {
	if extraPath == "" {
		return Default(), nil
	}
	f, err := os.Open(extraPath) //nolint:gosec // G304: the operator names the file (ERRATA_SOURCE_REGISTRY)
	if err != nil {
		return nil, fmt.Errorf("source registry: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("source registry %s: %w", extraPath, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("source registry %s: larger than %d bytes", extraPath, MaxFileBytes)
	}
	user, name, err := parse(data, extraPath, OriginUser)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = OriginUser
	}
	base := Default()
	merged := make([]Rule, 0, len(base.rules)+len(user))
	overridden := make(map[string]bool, len(user))
	for _, u := range user {
		overridden[u.Pattern] = true
	}
	for _, s := range base.rules {
		if !overridden[s.Pattern] {
			merged = append(merged, s)
		}
	}
	merged = append(merged, user...)
	return build(StarterName+"+"+name, merged), nil
}

// Version names the registry and the hash of its effective rules.
func (r *Registry) Version() string { return r.version }

// Rules are the effective rules, by tier, then pattern.
func (r *Registry) Rules() []Rule { return slices.Clone(r.rules) }

// Lookup normalizes raw and resolves its tier. A URL Normalize rejects
// returns its *URLError.
func (r *Registry) Lookup(raw string) (Match, error) {
	n, err := normalize(raw)
	if err != nil {
		return Match{}, err
	}
	m := Match{URL: n.url, Host: n.host, Domain: n.icannSite}
	// The host is itself a private suffix (blogspot.com) when the full
	// list has no registrable domain for it; its ICANN one is then the
	// domain.
	if d, err := publicsuffix.EffectiveTLDPlusOne(n.host); err == nil {
		m.Domain = d
	}
	m.Tier, m.Rule = r.resolve(n.host, n.icannSite)
	return m, nil
}

func (r *Registry) resolve(host, site string) (int, string) {
	for h := host; ; {
		if i, ok := r.domains[h]; ok {
			if h == host {
				return r.rules[i].Tier, "exact:" + h
			}
			return r.rules[i].Tier, "parent:" + h
		}
		if len(h) <= len(site) {
			break
		}
		h = h[strings.IndexByte(h, '.')+1:]
	}
	for s := host; ; {
		dot := strings.IndexByte(s, '.')
		if dot < 0 {
			break
		}
		s = s[dot+1:]
		if i, ok := r.wildcards[s]; ok {
			return r.rules[i].Tier, "wildcard:" + r.rules[i].Pattern
		}
	}
	return DefaultTier, "default"
}

// build indexes rules (patterns unique) and computes the version.
func build(name string, rules []Rule) *Registry {
	slices.SortFunc(rules, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(a.Tier, b.Tier), strings.Compare(a.Pattern, b.Pattern))
	})
	r := &Registry{rules: rules, domains: map[string]int{}, wildcards: map[string]int{}}
	h := sha256.New()
	fmt.Fprintf(h, "errata source registry\n%s\n", resolutionVersion)
	for i, rule := range rules {
		if s, ok := strings.CutPrefix(rule.Pattern, "*."); ok {
			r.wildcards[s] = i
		} else {
			r.domains[rule.Pattern] = i
		}
		fmt.Fprintf(h, "%d %s\n", rule.Tier, rule.Pattern)
	}
	r.version = name + "@" + hex.EncodeToString(h.Sum(nil))[:12]
	return r
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// parse reads a registry file. Every faulty line is reported, up to
// maxReportedErrors.
func parse(data []byte, file, origin string) (rules []Rule, name string, err error) {
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	seen := map[string]int{} // pattern -> line
	nameLine := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 4096)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if !utf8.ValidString(text) {
			fail(line, "not valid UTF-8")
			continue
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "registry" {
			switch {
			case len(fields) != 2:
				fail(line, `want "registry NAME"`)
			case nameLine != 0:
				fail(line, "second registry name (the first is on line %d)", nameLine)
			case !namePattern.MatchString(fields[1]):
				fail(line, "registry name %q: use 1-64 of a-z, 0-9, '.', '_', '-'", clip(fields[1]))
			default:
				name, nameLine = fields[1], line
			}
			continue
		}
		if len(fields) != 2 {
			fail(line, `want "TIER PATTERN", e.g. "1 bls.gov" or "2 *.edu"`)
			continue
		}
		tier := 0
		if t := fields[0]; len(t) == 1 && t[0] >= '1' && t[0] <= '5' {
			tier = int(t[0] - '0')
		} else {
			fail(line, "tier %q: want 1, 2, 3, 4 or 5", clip(t))
			continue
		}
		pattern, perr := canonicalPattern(fields[1])
		if perr != nil {
			fail(line, "pattern %q: %v", clip(fields[1]), perr)
			continue
		}
		if first, dup := seen[pattern]; dup {
			fail(line, "duplicate rule for %s (first on line %d)", pattern, first)
			continue
		}
		seen[pattern] = line
		rules = append(rules, Rule{Pattern: pattern, Tier: tier, Origin: origin})
	}
	if err := sc.Err(); err != nil {
		fail(line+1, "%v", err)
	}
	if len(errs) > maxReportedErrors {
		more := len(errs) - maxReportedErrors
		errs = append(errs[:maxReportedErrors], fmt.Errorf("... and %d more", more))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", fmt.Errorf("invalid source registry:\n%w", err)
	}
	return rules, name, nil
}

// canonicalPattern validates a rule pattern and returns its canonical form
// (lower-case punycode).
func canonicalPattern(p string) (string, error) {
	wildcard := false
	if s, ok := strings.CutPrefix(p, "*."); ok {
		p, wildcard = s, true
	}
	switch {
	case strings.ContainsAny(p, "*"):
		return "", errors.New(`a wildcard is only allowed as the whole first label ("*.gov")`)
	case strings.ContainsAny(p, "/:@?[]"):
		return "", errors.New("a pattern is a host name, not a URL")
	case strings.HasSuffix(p, "."):
		return "", errors.New("no trailing dot")
	}
	host, err := canonicalHost(p)
	if err != nil {
		var ue *URLError
		if errors.As(err, &ue) {
			return "", fmt.Errorf("not a host name (%s)", ue.Reason)
		}
		return "", err
	}
	suffix, ok := icannSuffix(host)
	if !ok {
		return "", errors.New("its top-level domain is not on the public suffix list")
	}
	if wildcard {
		return "*." + host, nil
	}
	if host == suffix {
		return "", fmt.Errorf("%s is a public suffix: write *.%s for the hosts under it", host, host)
	}
	if rest, ok := strings.CutPrefix(host, "www."); ok && len(rest) > len(suffix) {
		return "", fmt.Errorf("hosts lose a leading www. when normalized: write %s", rest)
	}
	return host, nil
}
