package websearch

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/retry"
)

func TestCleanText(t *testing.T) {
	tests := []struct {
		name, in, want string
		max            int
	}{
		{name: "brave decorations", in: "pure <strong>water</strong> boils", want: "pure water boils", max: 100},
		{name: "entities decoded after tags are stripped", in: "a &lt;b&gt; c &amp; d &#x27;e&#x27;", want: "a <b> c & d 'e'", max: 100},
		{name: "whitespace collapsed", in: "  one\n\ttwo   three ", want: "one two three", max: 100},
		{name: "truncated on runes", in: "ééééé", want: "éé…", max: 3},
		{name: "empty", in: "<b></b>", want: "", max: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, cleanText(tt.in, tt.max))
		})
	}
}

func TestFinish(t *testing.T) {
	raw := []Result{
		{Title: "ok", URL: "https://a.example/x", Snippet: "s"},
		{Title: "dup", URL: "https://a.example/x", Snippet: "again"},
		{Title: "js", URL: "javascript:alert(1)"},
		{Title: "relative", URL: "/local/path"},
		{Title: "creds", URL: "https://u:p@b.example/"},
		{Title: "", URL: " http://c.example/page ", Snippet: "<i>untitled</i>"},
		{Title: "long", URL: "https://d.example/" + strings.Repeat("a", maxURLBytes)},
		{Title: "third", URL: "https://e.example/"},
		{Title: "over the limit", URL: "https://f.example/"},
	}
	got := finish(raw, 3)
	require.Equal(t, []Result{
		{Title: "ok", URL: "https://a.example/x", Snippet: "s"},
		{Title: "http://c.example/page", URL: "http://c.example/page", Snippet: "untitled"},
		{Title: "third", URL: "https://e.example/"},
	}, got)
	require.Empty(t, finish(nil, 5))
	require.NotNil(t, finish(nil, 5), "no results is an empty list, not null")
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{header: "", want: 0},
		{header: "30", want: 30 * time.Second},
		{header: "-1", want: 0},
		{header: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second},
		{header: now.Add(-time.Minute).Format(http.TimeFormat), want: 0},
		{header: "soon", want: 0},
	}
	for _, tt := range tests {
		got, _ := retry.After(http.Header{"Retry-After": {tt.header}}, now)
		require.Equal(t, tt.want, got, tt.header)
	}
}

func TestScrub(t *testing.T) {
	secret := "sk-SECRET-123"
	got := scrub("bad key "+secret+"\r\n\x00 and "+secret+strings.Repeat(" x", 300), secret)
	require.NotContains(t, got, secret)
	require.True(t, strings.HasPrefix(got, "bad key [redacted] and [redacted] x"))
	require.LessOrEqual(t, len([]rune(got)), maxDetailRunes+1)
	require.Equal(t, "plain", scrub("plain", ""))
}

// Provider dates: RFC 3339, zone-less (UTC), bare dates and HTTP dates are
// read; anything else, or a year outside 1900-2200, is no date.
func TestParseDate(t *testing.T) {
	utc := func(y int, m time.Month, d, h, mi int) time.Time { return time.Date(y, m, d, h, mi, 0, 0, time.UTC) }
	for in, want := range map[string]time.Time{
		"2019-06-05T00:00:00":           utc(2019, 6, 5, 0, 0),
		"2026-02-11T08:14:05.5":         time.Date(2026, 2, 11, 8, 14, 5, 5e8, time.UTC),
		"2024-03-04T10:00:00+02:00":     utc(2024, 3, 4, 8, 0),
		" 2024-03-04 ":                  utc(2024, 3, 4, 0, 0),
		"Wed, 15 May 2024 10:00:00 GMT": utc(2024, 5, 15, 10, 0),
		"":                              {},
		"February 11, 2026":             {},
		"0001-01-01T00:00:00":           {},
		"9999-12-31":                    {},
		"2024-13-01":                    {},
		strings.Repeat("2", 100):        {},
	} {
		require.Equal(t, want, parseDate(in), "%q", in)
	}
}
