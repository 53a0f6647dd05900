package retry

import (
	"net/http"
	"strings"
	"time"
)

// MaxAfter is the longest wait After reports. A server asking for longer,
// or for a number too large to represent, is read as asking for MaxAfter:
// no caller waits that long (each caps its own honoured wait lower, or
// gives up), and a clamped value can neither overflow nor wrap around.
const MaxAfter = 24 * time.Hour

// After reads how long the response headers ask a client to wait before
// retrying, and whether they asked at all. The wait is in [0, MaxAfter].
//
//   - retry-after-ms (OpenAI, Azure): milliseconds, a decimal number with
//     an optional fraction ("1500", "1500.5"), read first because it is
//     the more precise;
//   - Retry-After as delay-seconds: a non-negative integer (RFC 9110
//     §10.2.3). Fractions ("1.5"), signs, exponents and anything else are
//     not delay-seconds: such a value asks for nothing;
//   - Retry-After as an HTTP date, in any of the three formats
//     http.ParseTime accepts: the time left until then, exactly; a date in
//     the past means no wait (0, true), never a negative one.
//
// A header that is missing, empty or malformed (NUL bytes, "-1", "1e309",
// "soon") asks for nothing: (0, false).
func After(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := millis(strings.TrimSpace(h.Get("Retry-After-Ms"))); ok {
		return d, true
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, ok := digits(v, int64(MaxAfter/time.Second)); ok {
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		// Time.Sub saturates instead of overflowing.
		return min(max(at.Sub(now), 0), MaxAfter), true
	}
	return 0, false
}

// millis reads "<digits>[.<digits>]" milliseconds, clamped to MaxAfter.
func millis(v string) (time.Duration, bool) {
	whole, frac, hasFrac := strings.Cut(v, ".")
	ms, ok := digits(whole, int64(MaxAfter/time.Millisecond))
	if !ok || (hasFrac && !isDigits(frac)) {
		return 0, false
	}
	d := time.Duration(ms) * time.Millisecond
	// Nanoseconds from the first six fractional digits; finer ones are
	// below the clock's resolution and dropped.
	ns := time.Duration(0)
	for i := range 6 {
		ns *= 10
		if i < len(frac) {
			ns += time.Duration(frac[i] - '0')
		}
	}
	return min(d+ns, MaxAfter), true
}

// digits reads a non-empty run of ASCII digits as a number, clamped to
// limit (so no length of digits overflows).
func digits(v string, limit int64) (int64, bool) {
	if !isDigits(v) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		n = n*10 + int64(v[i]-'0')
		if n > limit {
			return limit, true
		}
	}
	return n, true
}

func isDigits(v string) bool {
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
