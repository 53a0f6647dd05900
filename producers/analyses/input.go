package analyses

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// MaxURLRunes bounds a submitted URL, in characters.
const MaxURLRunes = 2000

// Codes of refused submissions. They are the workbench API's error codes
// (api: {"error":{"code","message"}}), so they never change meaning.
const (
	CodeTextEmpty         = "TEXT_EMPTY"
	CodeTextTooLong       = "TEXT_TOO_LONG"
	CodeTextControl       = "TEXT_CONTROL_CHARACTERS"
	CodeURLInvalid        = "URL_INVALID"
	CodeURLTooLong        = "URL_TOO_LONG"
	CodeURLScheme         = "URL_SCHEME"
	CodeURLPort           = "URL_PORT"
	CodeURLPrivateAddress = "URL_PRIVATE_ADDRESS"
	CodeURLUnreachable    = "URL_UNREACHABLE"
	CodeURLHTTPStatus     = "URL_HTTP_STATUS"
	CodeURLTooLarge       = "URL_TOO_LARGE"
	CodeURLNotHTML        = "URL_NOT_HTML"
	CodeURLNoText         = "URL_NO_TEXT"
)

// InputError is a refused submission: Code names the problem for scripts,
// Message says it for people. Messages never quote the input.
type InputError struct {
	Code    string
	Message string
}

func (e *InputError) Error() string { return e.Code + ": " + e.Message }

func refuse(code, format string, args ...any) *InputError {
	return &InputError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NormalizeText is the text a submission is analysed and identified by:
// content.Normalize (NFC, typographic quotes and dashes folded, every
// whitespace run one space, trimmed), the same canonical form as a post's
// text. It must hold 1 to events.MaxAnalysisTextRunes characters. NUL and
// other control characters (C0 but tab, line and page breaks; DEL; C1) are
// refused: they are never part of prose, and Postgres cannot store NUL.
func NormalizeText(raw string) (string, error) {
	for i, r := range raw {
		if isControl(r) {
			if r == 0 {
				return "", refuse(CodeTextControl, "text: must not contain NUL (U+0000), found at byte %d", i)
			}
			return "", refuse(CodeTextControl, "text: must not contain control characters, found U+%04X at byte %d", r, i)
		}
	}
	text := content.Normalize(raw)
	if text == "" {
		return "", refuse(CodeTextEmpty, "text: is empty; paste the text to check (1 to %s characters)", thousands(events.MaxAnalysisTextRunes))
	}
	if n := utf8.RuneCountInString(text); n > events.MaxAnalysisTextRunes {
		return "", refuse(CodeTextTooLong, "text: has %s characters after whitespace is collapsed; at most %s are analysed",
			thousands(n), thousands(events.MaxAnalysisTextRunes))
	}
	return text, nil
}

// isControl: C0 controls but tab, line feed, vertical tab, form feed and
// carriage return (whitespace in pasted text), DEL and the C1 controls.
func isControl(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\v', r == '\f', r == '\r':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}

// hostProfile maps an internationalized host to its ASCII (punycode) form
// the way a browser looks it up, and refuses what is no host name.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.VerifyDNSLength(true),
	idna.CheckHyphens(false),
)

// ParseURL checks a submitted page address: absolute http or https, at
// most MaxURLRunes characters, no credentials, no control characters or
// spaces, a host that is an IP literal or a valid (internationalized) name.
// It returns the URL to fetch: host in punycode, fragment dropped. Whether
// the address is public is decided when it is dialled (internal/httpsafe),
// after name resolution.
func ParseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, refuse(CodeURLInvalid, "url: is empty")
	}
	if n := utf8.RuneCountInString(raw); n > MaxURLRunes {
		return nil, refuse(CodeURLTooLong, "url: has %s characters; at most %s", thousands(n), thousands(MaxURLRunes))
	}
	for _, r := range raw {
		if r <= ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError {
			return nil, refuse(CodeURLInvalid, "url: must not contain spaces or control characters")
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, refuse(CodeURLInvalid, "url: is not a valid URL")
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "":
		return nil, refuse(CodeURLInvalid, "url: must be absolute, starting with https:// or http://")
	case scheme != "http" && scheme != "https":
		return nil, refuse(CodeURLScheme, "url: only http and https pages can be fetched")
	case u.Opaque != "" || u.Host == "":
		return nil, refuse(CodeURLInvalid, "url: has no host")
	case u.User != nil:
		return nil, refuse(CodeURLInvalid, "url: must not contain a user name or password")
	}
	u.Scheme = scheme
	host := u.Hostname()
	if host == "" {
		return nil, refuse(CodeURLInvalid, "url: has no host")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, refuse(CodeURLInvalid, "url: the port must be a number from 1 to 65535")
		}
	}
	if !strings.HasPrefix(u.Host, "[") && !isIPv4Literal(host) {
		ascii, err := hostProfile.ToASCII(strings.TrimSuffix(host, "."))
		if err != nil || ascii == "" {
			return nil, refuse(CodeURLInvalid, "url: the host is not a valid domain name")
		}
		if port := u.Port(); port != "" {
			u.Host = ascii + ":" + port
		} else {
			u.Host = ascii
		}
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func isIPv4Literal(h string) bool {
	return strings.Trim(h, "0123456789.") == "" && strings.Count(h, ".") == 3
}

// thousands renders n with comma separators (32,000).
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
