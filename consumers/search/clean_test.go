package search

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
		require.Equal(t, tt.want, retryAfter(http.Header{"Retry-After": {tt.header}}, now), tt.header)
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
