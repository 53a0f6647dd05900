package analyses

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// Defaults of a PageFetcher.
const (
	DefaultPageTimeout  = 15 * time.Second
	DefaultPageMaxBytes = 5 << 20
)

// Page is a fetched page's readable text, normalised as a submitted text
// is (NormalizeText) and cut to events.MaxAnalysisTextRunes characters.
type Page struct {
	// URL is the address submitted (host in punycode, no fragment);
	// FinalURL the one after redirects.
	URL, FinalURL string
	Title         string
	Text          string
	// Truncated says the page had more text than is analysed.
	Truncated bool
}

// PageFetcher fetches submitted pages through the SSRF-safe client: no
// private, loopback or reserved address is ever dialled, whatever the name
// resolves to or a redirect points at.
type PageFetcher struct {
	client   *httpsafe.Client
	timeout  time.Duration
	maxBytes int64
}

// NewPageFetcher fetches with client; zero timeout and maxBytes take the
// defaults.
func NewPageFetcher(client *httpsafe.Client, timeout time.Duration, maxBytes int64) *PageFetcher {
	if timeout <= 0 {
		timeout = DefaultPageTimeout
	}
	if maxBytes <= 0 {
		maxBytes = DefaultPageMaxBytes
	}
	return &PageFetcher{client: client, timeout: timeout, maxBytes: maxBytes}
}

// Fetch downloads u (from ParseURL) and extracts its main text, the way
// the investigator's fetch_url reads a page. Every refusal is an
// *InputError: a blocked address or port, an unreachable host, an HTTP
// error status, a body that is not HTML or is too large, a page without
// text. Only the end of ctx is returned as itself.
func (f *PageFetcher) Fetch(ctx context.Context, u *url.URL) (Page, error) {
	fctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	resp, err := f.client.Do(fctx, httpsafe.Request{
		URL: u.String(),
		Header: http.Header{
			"Accept":          {"text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"},
			"Accept-Language": {"en;q=0.9,*;q=0.5"},
		},
		MaxBytes: f.maxBytes,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Page{}, ctx.Err()
		}
		return Page{}, f.describe(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, refuse(CodeURLHTTPStatus, "url: the page answered HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	header := resp.Header.Get("Content-Type")
	if !fetchurl.IsHTML(header, resp.Body) {
		kind := strings.TrimSpace(strings.SplitN(header, ";", 2)[0])
		if kind == "" || !printableASCII(kind) || len(kind) > 100 {
			kind = "an unknown type"
		}
		return Page{}, refuse(CodeURLNotHTML, "url: the page is not HTML (%s); submit a web page, or paste its text", kind)
	}
	title, raw := fetchurl.ReadHTML(header, resp.Body)
	text, truncated := cut(stripControls(raw), events.MaxAnalysisTextRunes)
	if text == "" {
		return Page{}, refuse(CodeURLNoText, "url: the page has no text to check (it may need JavaScript to show its content); paste its text instead")
	}
	return Page{URL: u.String(), FinalURL: resp.URL.String(), Title: content.Normalize(stripControls(title)), Text: text, Truncated: truncated}, nil
}

// describe turns a fetch error into the refusal a person can act on,
// without internal details.
func (f *PageFetcher) describe(err error) *InputError {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, httpsafe.ErrBlockedAddress):
		return refuse(CodeURLPrivateAddress, "url: the address is not on the public internet (a private, local or reserved network) and is never fetched")
	case errors.Is(err, httpsafe.ErrBlockedPort):
		return refuse(CodeURLPort, "url: only the standard web ports (80 and 443) are fetched")
	case errors.Is(err, httpsafe.ErrBlockedScheme):
		return refuse(CodeURLScheme, "url: the page redirects to an address that is not http or https")
	case errors.Is(err, httpsafe.ErrInvalidURL):
		return refuse(CodeURLInvalid, "url: is not a valid absolute http or https URL")
	case errors.Is(err, httpsafe.ErrTooLarge):
		return refuse(CodeURLTooLarge, "url: the page is larger than %d MiB and was not read", f.maxBytes>>20)
	case errors.Is(err, httpsafe.ErrTooManyRedirects):
		return refuse(CodeURLUnreachable, "url: the page redirects too many times")
	case errors.Is(err, httpsafe.ErrTimeout):
		return refuse(CodeURLUnreachable, "url: the server did not deliver the page within %s", f.timeout)
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return refuse(CodeURLUnreachable, "url: the host name does not exist")
	case errors.As(err, &dnsErr):
		return refuse(CodeURLUnreachable, "url: the host name could not be resolved")
	case errors.As(err, &certErr):
		return refuse(CodeURLUnreachable, "url: the site's TLS certificate is not valid")
	case errors.Is(err, syscall.ECONNREFUSED):
		return refuse(CodeURLUnreachable, "url: the server refused the connection")
	default:
		return refuse(CodeURLUnreachable, "url: the page could not be fetched (network error)")
	}
}

// stripControls drops the control characters NormalizeText refuses: a
// page's text is taken as it is, not refused for them.
func stripControls(s string) string {
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, s)
}

// cut normalises page text (content.Normalize, as NormalizeText does) and
// keeps at most n characters, ending at a space when one is near the limit.
func cut(raw string, n int) (string, bool) {
	text := content.Normalize(raw)
	if len(text) <= n || utf8.RuneCountInString(text) <= n {
		return text, false
	}
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	head := text[:i]
	if j := strings.LastIndexByte(head, ' '); j > 0 && j > len(head)-200 {
		head = head[:j]
	}
	return head, true
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
