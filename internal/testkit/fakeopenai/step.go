package fakeopenai

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"
)

// Step is one scripted answer. Build it with Reply, ChatReply, Fail,
// RateLimit, Raw or Disconnect and adjust it with the With… methods (they
// return a modified copy).
type Step struct {
	status     int
	header     http.Header
	delay      time.Duration
	body       func(s *Server, req Request) []byte
	truncate   bool // send only truncateAt body bytes, then end the response cleanly
	truncateAt int
	cut        bool // announce the full length, send cutAt bytes, then drop the connection
	cutAt      int
	disconnect bool
}

func newStep(status int, body func(*Server, Request) []byte) Step {
	return Step{status: status, body: body}
}

// IsZero reports whether st is the zero Step (an empty 200 answer).
func (st Step) IsZero() bool {
	return st.status == 0 && st.body == nil && !st.disconnect && st.header == nil && st.delay == 0
}

// WithDelay waits d before answering (the wait ends early if the client
// gives up or the server closes).
func (st Step) WithDelay(d time.Duration) Step {
	st.delay = d
	return st
}

// WithHeader adds a response header.
func (st Step) WithHeader(key, value string) Step {
	h := st.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	st.header = h
	return st
}

// WithStatus overrides the HTTP status.
func (st Step) WithStatus(code int) Step {
	st.status = code
	return st
}

// Truncated sends only the first n bytes of the body and ends the
// response normally: the client receives well-framed HTTP whose JSON is
// cut mid-way. n < 0 keeps half of the body.
func (st Step) Truncated(n int) Step {
	st.truncate, st.truncateAt = true, n
	if n < 0 {
		st.truncateAt = math.MaxInt
		inner := st.body
		st.body = func(s *Server, req Request) []byte {
			b := inner(s, req)
			return b[:len(b)/2]
		}
	}
	return st
}

// CutConnection announces the full Content-Length, sends the first n bytes
// of the body, then closes the connection (the client sees an unexpected
// EOF while reading the body).
func (st Step) CutConnection(n int) Step {
	st.cut, st.cutAt = true, max(n, 0)
	return st
}

// Disconnect closes the connection without any answer.
func Disconnect() Step {
	st := newStep(0, nil)
	st.disconnect = true
	return st
}

// Raw answers with exactly these bytes.
func Raw(status int, contentType string, body []byte) Step {
	st := newStep(status, func(*Server, Request) []byte { return body })
	return st.WithHeader("Content-Type", contentType)
}

// JSON answers with v marshaled as JSON.
func JSON(status int, v any) Step {
	return newStep(status, func(*Server, Request) []byte { return mustJSON(v) })
}

// APIError is OpenAI's error object. Empty Param and Code are sent as null.
type APIError struct {
	Message string
	Type    string
	Param   string
	Code    string
}

// MarshalJSON writes the error object in OpenAI's shape.
func (e APIError) MarshalJSON() ([]byte, error) {
	nullable := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return json.Marshal(struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	}{e.Message, e.Type, nullable(e.Param), nullable(e.Code)})
}

// Fail answers with an HTTP error carrying {"error": {...}}.
func Fail(status int, e APIError) Step {
	return newStep(status, func(*Server, Request) []byte {
		return mustJSON(map[string]APIError{"error": e})
	})
}

// Error answers with an HTTP error whose type is the one OpenAI uses for
// that status (invalid_request_error for 4xx, server_error for 5xx,
// requests for 429). Empty code: null.
func Error(status int, code, message string) Step {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "requests"
		if code == "insufficient_quota" {
			typ = "insufficient_quota"
		}
	case status >= 500:
		typ = "server_error"
	}
	return Fail(status, APIError{Type: typ, Code: code, Message: message})
}

// RateLimit answers 429 rate_limit_exceeded with a Retry-After header in
// whole seconds (rounded up; none when retryAfter is 0).
func RateLimit(retryAfter time.Duration) Step {
	st := Error(http.StatusTooManyRequests, "rate_limit_exceeded",
		"Rate limit reached for requests. Please try again later.")
	if retryAfter > 0 {
		st = st.WithHeader("Retry-After", fmt.Sprint(int(math.Ceil(retryAfter.Seconds()))))
	}
	return st
}

func modelsReply(ids []string) Step {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	return newStep(http.StatusOK, func(s *Server, _ Request) []byte {
		data := make([]model, len(ids))
		for i, id := range ids {
			data[i] = model{ID: id, Object: "model", Created: s.created, OwnedBy: "system"}
		}
		return mustJSON(map[string]any{"object": "list", "data": data})
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeopenai: %v", err))
	}
	return b
}
