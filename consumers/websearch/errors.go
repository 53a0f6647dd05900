package websearch

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/errata-dev/errata/internal/httpsafe"
)

// Kinds of failure, for errors.Is.
var (
	// ErrUnauthorized: the provider refused the API key (401, 403).
	ErrUnauthorized = errors.New("search: provider refused the credentials")
	// ErrRateLimited: the provider asked us to slow down (429).
	ErrRateLimited = errors.New("search: rate limited")
	// ErrUnavailable: the provider failed (5xx) or could not be reached.
	ErrUnavailable = errors.New("search: provider unavailable")
	// ErrBadRequest: the provider refused the request (other 4xx).
	ErrBadRequest = errors.New("search: request refused")
	// ErrBadResponse: a 2xx response that is not the expected JSON.
	ErrBadResponse = errors.New("search: malformed response")
	// ErrInvalidQuery: the query was refused before sending.
	ErrInvalidQuery = errors.New("search: invalid query")
)

// StatusError is a non-2xx answer from a provider.
type StatusError struct {
	Provider   string
	StatusCode int
	// RetryAfter is the provider's requested wait (retry.After), when it
	// sent one.
	RetryAfter time.Duration
	// Detail is the provider's own short explanation, scrubbed of secrets.
	Detail string
	kind   error
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s search: HTTP %d: %v", e.Provider, e.StatusCode, e.kind)
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %v)", e.RetryAfter)
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns the error's kind.
func (e *StatusError) Unwrap() error { return e.kind }

// Retryable reports whether a later attempt may succeed: rate limits,
// provider failures and timeouts. Refused credentials, refused requests,
// malformed responses and SSRF policy refusals are not.
func Retryable(err error) bool {
	switch {
	case err == nil, httpsafe.IsPolicyError(err):
		return false
	case errors.Is(err, ErrRateLimited), errors.Is(err, ErrUnavailable), errors.Is(err, httpsafe.ErrTimeout):
		return true
	}
	return false
}

// statusKind maps a non-2xx status to its kind.
func statusKind(code int) error {
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ErrUnauthorized
	case code == http.StatusTooManyRequests:
		return ErrRateLimited
	case code >= 500:
		return ErrUnavailable
	default:
		return ErrBadRequest
	}
}

// maxDetailRunes bounds the provider text quoted in an error.
const maxDetailRunes = 200

// scrub makes provider-supplied text safe to put in an error: secrets
// replaced (before anything else, so none is cut into an unrecognisable
// piece), control characters dropped, whitespace collapsed, length bounded.
func scrub(s string, secrets ...string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxDetailRunes {
		s = string(r[:maxDetailRunes]) + "…"
	}
	return s
}
