package retry_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/retry"
)

func TestAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	nowFrac := now.Add(400 * time.Millisecond)
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Add(kv[i], kv[i+1])
		}
		return h
	}
	const day = retry.MaxAfter
	for _, tc := range []struct {
		name string
		h    http.Header
		now  time.Time
		want time.Duration
		ok   bool
	}{
		// Nothing asked.
		{"no header", header(), now, 0, false},
		{"empty", header("Retry-After", ""), now, 0, false},
		{"blank", header("Retry-After", "   "), now, 0, false},

		// delay-seconds.
		{"zero seconds", header("Retry-After", "0"), now, 0, true},
		{"seconds", header("Retry-After", "30"), now, 30 * time.Second, true},
		{"seconds, spaces trimmed", header("Retry-After", " 2 "), now, 2 * time.Second, true},
		{"leading zeros", header("Retry-After", "007"), now, 7 * time.Second, true},
		{"lower-case name", http.Header{"retry-after": {"5"}}, now, 0, false}, // Go canonicalises names; a raw map key is not a header
		{"canonical name via Set", func() http.Header { h := http.Header{}; h.Set("retry-after", "5"); return h }(), now, 5 * time.Second, true},
		{"first of several values", header("Retry-After", "3", "Retry-After", "9"), now, 3 * time.Second, true},
		{"a day exactly", header("Retry-After", "86400"), now, day, true},

		// delay-seconds that are not: refused.
		{"negative", header("Retry-After", "-1"), now, 0, false},
		{"plus sign", header("Retry-After", "+5"), now, 0, false},
		{"fraction", header("Retry-After", "1.5"), now, 0, false},
		{"exponent", header("Retry-After", "1e3"), now, 0, false},
		{"float overflow", header("Retry-After", "1e309"), now, 0, false},
		{"NaN", header("Retry-After", "NaN"), now, 0, false},
		{"Inf", header("Retry-After", "Inf"), now, 0, false},
		{"hex", header("Retry-After", "0x10"), now, 0, false},
		{"underscore", header("Retry-After", "1_000"), now, 0, false},
		{"NUL", header("Retry-After", "\x00"), now, 0, false},
		{"digits then NUL", header("Retry-After", "30\x00"), now, 0, false},
		{"NUL then digits", header("Retry-After", "\x0030"), now, 0, false},
		{"inner space", header("Retry-After", "3 0"), now, 0, false},
		{"unit", header("Retry-After", "30s"), now, 0, false},
		{"non-ASCII digits", header("Retry-After", "٣٠"), now, 0, false},
		{"word", header("Retry-After", "soon"), now, 0, false},

		// Huge delay-seconds: clamped, never wrapped.
		{"over a day", header("Retry-After", "86401"), now, day, true},
		{"int32 overflow", header("Retry-After", "4294967296"), now, day, true},
		{"int64 overflow", header("Retry-After", "9223372036854775808"), now, day, true},
		{"a thousand digits", header("Retry-After", strings.Repeat("9", 1000)), now, day, true},

		// HTTP dates: the three formats of http.ParseTime.
		{"IMF-fixdate", header("Retry-After", "Sun, 01 Mar 2026 12:00:03 GMT"), now, 3 * time.Second, true},
		{"RFC 850", header("Retry-After", "Sunday, 01-Mar-26 12:01:30 GMT"), now, 90 * time.Second, true},
		{"asctime", header("Retry-After", "Sun Mar  1 12:00:10 2026"), now, 10 * time.Second, true},
		{"date, exact wait from a fractional now", header("Retry-After", "Sun, 01 Mar 2026 12:00:03 GMT"), nowFrac, 2600 * time.Millisecond, true},
		{"date now", header("Retry-After", "Sun, 01 Mar 2026 12:00:00 GMT"), now, 0, true},
		{"date in the past: no wait", header("Retry-After", "Sun, 01 Mar 2026 11:00:00 GMT"), now, 0, true},
		{"date long past", header("Retry-After", "Mon, 01 Jan 0001 00:00:00 GMT"), now, 0, true},
		{"date far ahead: clamped", header("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"), now, day, true},
		{"date, the weekday is not checked", header("Retry-After", "Mon, 01 Mar 2026 12:00:03 GMT"), now, 3 * time.Second, true},
		{"date, impossible day", header("Retry-After", "Sun, 31 Feb 2026 12:00:03 GMT"), now, 0, false},
		{"date with trailing junk", header("Retry-After", "Sun, 01 Mar 2026 12:00:03 GMT\x00"), now, 0, false},
		{"date in another zone", header("Retry-After", "Sun, 01 Mar 2026 13:00:03 CET"), now, 0, false},

		// retry-after-ms.
		{"ms", header("Retry-After-Ms", "1500"), now, 1500 * time.Millisecond, true},
		{"ms, lower-case name set", func() http.Header { h := http.Header{}; h.Set("retry-after-ms", "20"); return h }(), now, 20 * time.Millisecond, true},
		{"ms zero", header("Retry-After-Ms", "0"), now, 0, true},
		{"ms fraction", header("Retry-After-Ms", "1500.5"), now, 1500*time.Millisecond + 500*time.Microsecond, true},
		{"ms fraction to the nanosecond", header("Retry-After-Ms", "0.000001"), now, time.Nanosecond, true},
		{"ms fraction finer than ns dropped", header("Retry-After-Ms", "1.0000009"), now, time.Millisecond, true},
		{"ms wins over seconds", header("Retry-After-Ms", "250", "Retry-After", "1"), now, 250 * time.Millisecond, true},
		{"bad ms falls back to seconds", header("Retry-After-Ms", "soon", "Retry-After", "2"), now, 2 * time.Second, true},
		{"ms negative", header("Retry-After-Ms", "-5"), now, 0, false},
		{"ms trailing dot", header("Retry-After-Ms", "5."), now, 0, false},
		{"ms leading dot", header("Retry-After-Ms", ".5"), now, 0, false},
		{"ms two dots", header("Retry-After-Ms", "1.2.3"), now, 0, false},
		{"ms exponent", header("Retry-After-Ms", "1e309"), now, 0, false},
		{"ms NaN", header("Retry-After-Ms", "NaN"), now, 0, false},
		{"ms NUL", header("Retry-After-Ms", "10\x00"), now, 0, false},
		{"ms over a day", header("Retry-After-Ms", "86400001"), now, day, true},
		{"ms a day plus a fraction", header("Retry-After-Ms", "86400000.5"), now, day, true},
		{"ms overflow", header("Retry-After-Ms", "99999999999999999999999"), now, day, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := retry.After(tc.h, tc.now)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
			require.GreaterOrEqual(t, got, time.Duration(0))
			require.LessOrEqual(t, got, retry.MaxAfter)
		})
	}
}
