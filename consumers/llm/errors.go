package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/errata-dev/errata/internal/retry"
)

// Class says whether an attempt may be retried.
type Class string

// Classes.
const (
	// Transient failures may succeed on a later attempt: 429, 5xx, 408, 409,
	// timeouts, network errors, incomplete or truncated responses.
	Transient Class = "TRANSIENT"
	// NonRetryable failures fail the same way again: 400, 401, 403, 404,
	// 422 and other 4xx, refusals, tool arguments that break their schema,
	// an exhausted quota, requests this package rejects before sending.
	NonRetryable Class = "NON_RETRYABLE"
)

// Kind is the precise failure.
type Kind string

// Kinds, with their class.
const (
	KindRateLimited     Kind = "rate_limited"           // 429 (TRANSIENT)
	KindQuotaExceeded   Kind = "quota_exceeded"         // 429 insufficient_quota: billing, not load (NON_RETRYABLE)
	KindServer          Kind = "server_error"           // 5xx (TRANSIENT)
	KindTimeout         Kind = "timeout"                // deadline, network timeout, 408 (TRANSIENT)
	KindNetwork         Kind = "network"                // no HTTP answer: refused, reset, closed (TRANSIENT)
	KindCanceled        Kind = "canceled"               // the caller's context was canceled (TRANSIENT)
	KindConflict        Kind = "conflict"               // 409 (TRANSIENT)
	KindIncomplete      Kind = "incomplete"             // status incomplete, finish_reason length (TRANSIENT)
	KindTruncated       Kind = "truncated"              // body cut off mid-JSON (TRANSIENT)
	KindInvalidResponse Kind = "invalid_response"       // 2xx body that is not a response (TRANSIENT)
	KindFailed          Kind = "failed"                 // status failed; class from the error code
	KindBadRequest      Kind = "bad_request"            // 400 (NON_RETRYABLE)
	KindUnauthorized    Kind = "unauthorized"           // 401 (NON_RETRYABLE)
	KindForbidden       Kind = "forbidden"              // 403 (NON_RETRYABLE)
	KindNotFound        Kind = "not_found"              // 404 (NON_RETRYABLE)
	KindUnprocessable   Kind = "unprocessable"          // 422 (NON_RETRYABLE)
	KindClientError     Kind = "client_error"           // other 4xx (NON_RETRYABLE)
	KindRefusal         Kind = "refusal"                // the model refused (NON_RETRYABLE)
	KindToolArguments   Kind = "invalid_tool_arguments" // unknown tool or arguments breaking the schema (NON_RETRYABLE)
	KindInvalidOutput   Kind = "invalid_output"         // a structured answer breaking Request.OutputSchema (NON_RETRYABLE)
	KindInvalidRequest  Kind = "invalid_request"        // rejected before sending (NON_RETRYABLE)
)

// Error is every failure of Create and Continue. It never contains the API
// key: provider messages are redacted and the SDK's error (which holds the
// request and its Authorization header) is not kept.
type Error struct {
	Provider string
	Class    Class
	Kind     Kind
	// StatusCode is the HTTP status (0 when no answer arrived).
	StatusCode int
	// Code, Type, Param and Message come from the provider's error object
	// (or the refusal, incomplete reason, local check), redacted.
	Code    string
	Type    string
	Param   string
	Message string
	// RetryAfter is the wait the provider asked for (retry-after-ms or
	// Retry-After, read by retry.After), 0 when not given.
	RetryAfter time.Duration
	// RequestID is the provider's x-request-id.
	RequestID string
	// Err is the transport or context error behind a timeout, network or
	// truncation failure, or the schema error behind invalid tool
	// arguments (errors.Is(err, context.DeadlineExceeded) works).
	Err error
}

// Retryable reports whether another attempt may succeed.
func (e *Error) Retryable() bool { return e.Class == Transient }

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s: %s", e.Provider, e.Kind)
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// AsError returns the *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsRetryable reports whether err is a transient *Error.
func IsRetryable(err error) bool {
	e, ok := AsError(err)
	return ok && e.Retryable()
}

// redactor removes the API key and anything shaped like an OpenAI key or a
// bearer token from provider text.
type redactor struct{ key string }

var (
	keyShapeRE = regexp.MustCompile(`sk-[A-Za-z0-9_\-*]{3,}`)
	bearerRE   = regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9._~+/=-]{16,}`)
)

func (r redactor) text(s string) string {
	if len(r.key) >= 6 {
		s = strings.ReplaceAll(s, r.key, "[redacted]")
	}
	s = keyShapeRE.ReplaceAllString(s, "sk-[redacted]")
	return bearerRE.ReplaceAllString(s, "Bearer [redacted]")
}

// bytes replaces the exact key in a raw body (keys are JSON-safe, so the
// body stays valid JSON). Only the caller's own key is replaced: the raw
// response is otherwise kept byte for byte.
func (r redactor) bytes(b []byte) []byte {
	if len(r.key) < 6 || !bytes.Contains(b, []byte(r.key)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(r.key), []byte("[redacted]"))
}

// providerError is the OpenAI error object ({"error": {...}}); code may be a
// string, a number (OpenRouter) or null.
type providerError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   json.RawMessage `json:"param"`
	Code    json.RawMessage `json:"code"`
}

func parseProviderError(body []byte) (providerError, bool) {
	var env struct {
		Error *providerError `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Error == nil {
		return providerError{}, false
	}
	return *env.Error, true
}

func rawScalar(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String()
	}
	return ""
}

// httpError classifies an HTTP error status.
func httpError(provider string, status int, header http.Header, body []byte, red redactor) *Error {
	e := &Error{Provider: provider, StatusCode: status, RequestID: header.Get("x-request-id")}
	e.RetryAfter, _ = retry.After(header, time.Now())
	if pe, ok := parseProviderError(body); ok {
		e.Message, e.Type = red.text(pe.Message), red.text(pe.Type)
		e.Code, e.Param = red.text(rawScalar(pe.Code)), red.text(rawScalar(pe.Param))
	} else {
		e.Message = red.text(snippet(body))
	}
	e.Kind, e.Class = classifyStatus(status, e.Code, e.Type)
	return e
}

func classifyStatus(status int, code, typ string) (Kind, Class) {
	switch {
	case status == http.StatusTooManyRequests && (code == "insufficient_quota" || typ == "insufficient_quota"):
		return KindQuotaExceeded, NonRetryable
	case status == http.StatusTooManyRequests:
		return KindRateLimited, Transient
	case status == http.StatusRequestTimeout:
		return KindTimeout, Transient
	case status == http.StatusConflict:
		return KindConflict, Transient
	case status >= 500:
		return KindServer, Transient
	case status == http.StatusBadRequest:
		return KindBadRequest, NonRetryable
	case status == http.StatusUnauthorized:
		return KindUnauthorized, NonRetryable
	case status == http.StatusForbidden:
		return KindForbidden, NonRetryable
	case status == http.StatusNotFound:
		return KindNotFound, NonRetryable
	case status == http.StatusUnprocessableEntity:
		return KindUnprocessable, NonRetryable
	case status >= 400:
		return KindClientError, NonRetryable
	}
	return KindInvalidResponse, Transient
}

// transportError classifies a failure without an HTTP status: the
// context, a timeout, a cut body (headersSeen) or the network.
func transportError(ctx context.Context, provider string, err error, headersSeen bool, red redactor) *Error {
	e := &Error{Provider: provider, Class: Transient, Err: err}
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = KindTimeout, "the request deadline passed"
		if ctx.Err() != nil {
			e.Err = ctx.Err()
		}
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		e.Kind, e.Message = KindCanceled, "the request was canceled"
	case errors.As(err, &ne) && ne.Timeout():
		e.Kind, e.Message = KindTimeout, red.text(err.Error())
	case headersSeen:
		e.Kind, e.Message = KindTruncated, "the response body was cut off: "+red.text(err.Error())
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		e.Kind, e.Message = KindNetwork, "the connection closed before an answer: "+red.text(err.Error())
	default:
		e.Kind, e.Message = KindNetwork, red.text(err.Error())
	}
	return e
}

func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func invalidRequest(provider, format string, args ...any) *Error {
	return &Error{Provider: provider, Class: NonRetryable, Kind: KindInvalidRequest, Message: fmt.Sprintf(format, args...)}
}
