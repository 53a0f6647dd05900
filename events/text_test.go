package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"plain":            "plain",
		"a\x00b\x00":       "ab",
		"bad \xff\xfe end": "bad \uFFFD end",
		"é\x00\xc3":        "é\uFFFD",
	} {
		require.Equal(t, want, events.Clean(in), "%q", in)
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exact", 5, "exact"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes: never cut inside it
		{"aé", 3, "aé"},
		{"€uro", 2, ""},
		{"abc", 0, ""},
	} {
		require.Equal(t, tc.want, events.Clip(tc.in, tc.n), "%q %d", tc.in, tc.n)
	}
}
