package content

import (
	"strconv"
	"testing"
)

func itoa(i int) string { return strconv.Itoa(i) }

func ptr[T any](v T) *T { return &v }

// requireSameText compares long texts and, on mismatch, reports the first
// differing byte with some context instead of dumping both documents.
func requireSameText(t testing.TB, want, got, label string) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-80)
	t.Fatalf("%s differs at byte %d (want %d bytes, got %d)\nwant: %q\n got: %q",
		label, i, len(want), len(got), want[from:min(len(want), i+120)], got[from:min(len(got), i+120)])
}
