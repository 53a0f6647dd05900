package sources

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// MaxURLBytes is the longest URL Normalize accepts.
const MaxURLBytes = 4096

// Reason says why a URL was rejected. It is recorded as the drop reason of
// the source, so the values are stable.
type Reason string

// The reasons a URL is rejected.
const (
	ReasonTooLong        Reason = "too_long"           // over MaxURLBytes
	ReasonControlChar    Reason = "control_character"  // NUL or another control character
	ReasonUnparseable    Reason = "unparseable"        // net/url refuses it
	ReasonNotAbsolute    Reason = "not_absolute"       // no scheme
	ReasonScheme         Reason = "unsupported_scheme" // not http or https (javascript:, data:, ftp: ...)
	ReasonNoHost         Reason = "no_host"            // http:foo, http:///path
	ReasonUserinfo       Reason = "userinfo"           // user:password@ before the host
	ReasonIPLiteral      Reason = "ip_literal"         // an IPv4 or IPv6 address instead of a name
	ReasonBadHost        Reason = "bad_host"           // not a valid (internationalized) host name
	ReasonBadPort        Reason = "bad_port"           // not in 1-65535
	ReasonBadQuery       Reason = "bad_query"          // an invalid percent escape in the query
	ReasonNoPublicSuffix Reason = "no_public_suffix"   // localhost, foo.internal: no ICANN suffix
	ReasonPublicSuffix   Reason = "public_suffix"      // the host is itself a public suffix (co.uk)
)

// URLError is why Normalize (or Lookup) refused a URL. Detail never
// repeats the whole URL, which may be huge or hostile; at most a short,
// quoted host.
type URLError struct {
	Reason Reason
	Detail string
}

func (e *URLError) Error() string {
	if e.Detail == "" {
		return "url rejected: " + string(e.Reason)
	}
	return "url rejected: " + string(e.Reason) + ": " + e.Detail
}

func reject(r Reason, format string, args ...any) *URLError {
	return &URLError{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// droppedParams are query parameters that only track a click; they never
// change the resource. utm_* is matched by prefix. All are compared
// case-insensitively.
var droppedParams = map[string]bool{"ref": true, "ref_src": true, "fbclid": true, "gclid": true}

// hostProfile maps internationalized host names to their ASCII (punycode)
// form the way a browser looks them up: case and width folded, UTS #46
// nontransitional mapping, the Bidi rule, DNS lengths (labels of 1-63
// bytes, 253 in all) and RFC 1034 characters only (no "_"). Unlike
// idna.Lookup it allows "--" in the third and fourth positions, which CDN
// host names such as "r3---sn-abc.googlevideo.com" use.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.VerifyDNSLength(true),
	idna.CheckHyphens(false),
)

// Normalize returns the canonical form of an absolute http(s) URL, the key
// sources are deduplicated by:
//
//   - surrounding white space is trimmed; any other control character, or
//     more than MaxURLBytes bytes, rejects the URL;
//   - the scheme is lower-cased and must be http or https; userinfo is
//     rejected;
//   - the host is mapped to lower-case punycode (IDN), one trailing dot
//     is removed, and leading "www." labels are dropped unless what
//     remains is a public suffix (www.gov.uk stays); IP literals, and hosts without an
//     ICANN public suffix or that are one, are rejected;
//   - the port is dropped when it is the scheme's default;
//   - "." and ".." path segments are resolved; the root path is "/" and
//     any other path loses its trailing slash ("/a/" and "/a" are the same
//     source); percent-escapes are kept as given;
//   - the query drops utm_*, ref, ref_src, fbclid and gclid, and keeps the
//     other parameters re-escaped and sorted by name (repeated names keep
//     their order); an empty query disappears;
//   - the fragment is dropped.
//
// A rejection is a *URLError whose Reason is the drop reason.
func Normalize(raw string) (string, error) {
	n, err := normalize(raw)
	if err != nil {
		return "", err
	}
	return n.url, nil
}

// normalized is a URL after Normalize, with what Lookup needs next.
type normalized struct {
	url  string
	host string
	// icannSite is the host's registrable domain under the ICANN section of
	// the public suffix list alone (blogspot.com for foo.blogspot.com).
	icannSite string
}

func normalize(raw string) (normalized, error) {
	if len(raw) > MaxURLBytes {
		return normalized{}, reject(ReasonTooLong, "%d bytes, at most %d", len(raw), MaxURLBytes)
	}
	raw = strings.TrimSpace(raw)
	if i := controlIndex(raw); i >= 0 {
		return normalized{}, reject(ReasonControlChar, "byte 0x%02x at offset %d", raw[i], i)
	}
	if raw == "" {
		return normalized{}, reject(ReasonNotAbsolute, "empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole input; keep only its reason.
		var msg string
		if ue, ok := err.(*url.Error); ok {
			msg = ue.Err.Error()
		} else {
			msg = err.Error()
		}
		return normalized{}, reject(ReasonUnparseable, "%s", clip(msg))
	}
	switch {
	case u.Scheme == "":
		return normalized{}, reject(ReasonNotAbsolute, "no scheme")
	case u.Scheme != "http" && u.Scheme != "https":
		return normalized{}, reject(ReasonScheme, "%q", clip(u.Scheme))
	case u.Opaque != "" || u.Host == "":
		return normalized{}, reject(ReasonNoHost, "")
	case u.User != nil:
		return normalized{}, reject(ReasonUserinfo, "credentials before the host")
	case strings.HasPrefix(u.Host, "["):
		return normalized{}, reject(ReasonIPLiteral, "IPv6 address")
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return normalized{}, err
	}
	suffix, ok := icannSuffix(host)
	if !ok {
		return normalized{}, reject(ReasonNoPublicSuffix, "%q", clip(host))
	}
	if host == suffix {
		return normalized{}, reject(ReasonPublicSuffix, "%q", clip(host))
	}
	// Every leading www. goes, so that Normalize is idempotent.
	for {
		rest, found := strings.CutPrefix(host, "www.")
		if !found || len(rest) <= len(suffix) {
			break
		}
		host = rest
	}
	site := host[strings.LastIndexByte(host[:len(host)-len(suffix)-1], '.')+1:]

	var b strings.Builder
	b.Grow(len(raw))
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(host)
	if p := u.Port(); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return normalized{}, reject(ReasonBadPort, "%q", clip(p))
		}
		if !(u.Scheme == "http" && port == 80 || u.Scheme == "https" && port == 443) {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(port))
		}
	}
	b.WriteString(canonicalPath(u.EscapedPath()))
	q, err := canonicalQuery(u.RawQuery)
	if err != nil {
		return normalized{}, err
	}
	if q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	// Escaping may lengthen a URL up to threefold; the limit holds for the
	// result too, or the result would not normalize to itself.
	if b.Len() > MaxURLBytes {
		return normalized{}, reject(ReasonTooLong, "%d bytes once escaped, at most %d", b.Len(), MaxURLBytes)
	}
	return normalized{url: b.String(), host: host, icannSite: site}, nil
}

// canonicalHost maps a host name (a URL's, or a registry pattern's) to
// lower-case ASCII, or rejects it.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", reject(ReasonNoHost, "")
	}
	if i := controlIndex(h); i >= 0 {
		return "", reject(ReasonControlChar, "byte 0x%02x in the host", h[i])
	}
	if !utf8.ValidString(h) {
		return "", reject(ReasonBadHost, "not UTF-8")
	}
	if _, err := netip.ParseAddr(strings.TrimSuffix(h, ".")); err == nil {
		return "", reject(ReasonIPLiteral, "%q", clip(h))
	}
	a, err := hostProfile.ToASCII(h)
	if err != nil || a == "" {
		return "", reject(ReasonBadHost, "%q", clip(h))
	}
	// One trailing dot (the DNS root) names the same host. IDNA maps full
	// stops such as U+3002 to ".", so this is only decided now.
	a = strings.TrimSuffix(a, ".")
	if a == "" || a[0] == '.' || strings.HasSuffix(a, ".") || strings.Contains(a, "..") {
		return "", reject(ReasonBadHost, "empty label in %q", clip(h))
	}
	// The profile allows only RFC 1034 characters; a second look costs
	// nothing and keeps anything else out of keys and rule names.
	for i := 0; i < len(a); i++ {
		c := a[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return "", reject(ReasonBadHost, "%q", clip(h))
		}
	}
	if endsInNumber(a) {
		return "", reject(ReasonIPLiteral, "%q", clip(a))
	}
	// Invalid UTF-8 maps to U+FFFD, whose punycode is not itself a valid
	// host: an A-label must map to itself, or the key would not be stable.
	if strings.Contains(a, "xn--") {
		if again, err := hostProfile.ToASCII(a); err != nil || again != a {
			return "", reject(ReasonBadHost, "%q", clip(h))
		}
	}
	return a, nil
}

// endsInNumber reports whether a browser would read host as an IPv4
// address: its last label is decimal, or hex with 0x ("2130706433",
// "0x7f.1", "127.1").
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(strings.ToLower(last), "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// icannSuffix returns host's public suffix under the ICANN section of the
// list, skipping private entries (blogspot.com, github.io), and false when
// its top-level domain is on no list (localhost, corp, internal).
func icannSuffix(host string) (string, bool) {
	s, icann := publicsuffix.PublicSuffix(host)
	for !icann {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return "", false
		}
		s, icann = publicsuffix.PublicSuffix(s[i+1:])
	}
	return s, true
}

// canonicalPath resolves dot segments and applies the trailing-slash rule.
func canonicalPath(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	if strings.Contains(p, ".") {
		p = removeDotSegments(p)
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	return p
}

// removeDotSegments is RFC 3986 section 5.2.4 for an absolute path.
func removeDotSegments(p string) string {
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

type param struct{ key, value string }

// canonicalQuery drops tracking parameters and sorts the rest by name.
// A parameter without "=" stays without one.
func canonicalQuery(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	var params []param
	var flags []bool
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			return "", reject(ReasonBadQuery, "parameter name: %s", clip(err.Error()))
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return "", reject(ReasonBadQuery, "value of %q: %s", clip(key), clip(err.Error()))
		}
		lk := strings.ToLower(key)
		if strings.HasPrefix(lk, "utm_") || droppedParams[lk] {
			continue
		}
		params = append(params, param{key, val})
		flags = append(flags, hasValue)
	}
	idx := make([]int, len(params))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(params[a].key, params[b].key) })
	var b strings.Builder
	for n, i := range idx {
		if n > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(params[i].key))
		if flags[i] {
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(params[i].value))
		}
	}
	return b.String(), nil
}

// controlIndex is the offset of the first ASCII control character (C0 or
// DEL) in s, or -1.
func controlIndex(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return i
		}
	}
	return -1
}

// clip shortens what an error repeats from hostile input.
func clip(s string) string {
	const keep = 80
	if len(s) <= keep {
		return s
	}
	return s[:keep] + "…"
}
