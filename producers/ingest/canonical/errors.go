package canonical

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Errors callers branch on with errors.Is. Every error means the content was
// not verified and the caller should fall back to the client's copy.
var (
	// ErrNotVerifiable: the platform has no server-side source (X).
	ErrNotVerifiable = errors.New("platform content cannot be verified server-side")
	// ErrInvalidRequest: identity fields that cannot name a post (a language
	// code or slug that would change the URL's meaning, a non-numeric id).
	// Nothing was fetched.
	ErrInvalidRequest = errors.New("invalid canonical fetch request")
	// ErrNotFound: the platform says the post or revision does not exist.
	ErrNotFound = errors.New("post not found on platform")
	// ErrPaywalled: the post is not public (Substack audience other than
	// "everyone", or a body cut at the paywall).
	ErrPaywalled = errors.New("post is not publicly readable")
	// ErrNoContent: the platform returned no body, or one with no text.
	ErrNoContent = errors.New("platform returned no content")
	// ErrRevisionMismatch: Wikipedia served a revision other than the pinned
	// one, so its content says nothing about the version the client saw.
	ErrRevisionMismatch = errors.New("platform served a different revision")
	// ErrBadResponse: a response that is not the documented shape (not JSON,
	// fields missing, an API-level error).
	ErrBadResponse = errors.New("unexpected platform response")
	// ErrUpstreamStatus: a non-2xx HTTP status, after any retries. The
	// concrete error is a *StatusError.
	ErrUpstreamStatus = errors.New("platform returned an error status")
)

// StatusError is a final non-2xx response.
type StatusError struct {
	StatusCode int
	// RetryAfter is the server's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Body is the start of the response body (at most maxErrorBody
	// bytes), for platform error codes such as XRPC's {"error":"NotFound"}.
	// It is never part of the message.
	Body []byte
}

// maxErrorBody bounds StatusError.Body.
const maxErrorBody = 4096

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (Retry-After %v)", e.RetryAfter)
	}
	return msg
}

// Is makes every StatusError match ErrUpstreamStatus, and 404 and 410 also
// match ErrNotFound.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrUpstreamStatus:
		return true
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusGone
	}
	return false
}
