package events

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestDeriveIsUUIDv5 checks derive against its definition: the UUIDv5 of
// the kind and parts joined by NUL, as uuid.NewSHA1 computes it.
func TestDeriveIsUUIDv5(t *testing.T) {
	long := strings.Repeat("é0", 300)
	for _, tc := range []struct {
		kind  string
		parts []string
	}{
		{"post", []string{"LESSWRONG", "ioZxrP7BhS5ArK59w"}},
		{"post-version", []string{"17a0713b-41a3-5519-bfd9-1e43b3af9683", strings.Repeat("ab", 32)}},
		{"post", nil},
		{"", []string{""}},
		{"claim", []string{"a\x00b", "", "c"}},
		{"post", []string{"X", long}},
		{long, []string{long, long}},
	} {
		name := tc.kind
		for _, p := range tc.parts {
			name += "\x00" + p
		}
		want := uuid.NewSHA1(namespace, []byte(name)).String()
		if got := derive(tc.kind, tc.parts...); got != want {
			t.Errorf("derive(%q, %q) = %s, want %s", tc.kind, tc.parts, got, want)
		}
	}
}

// FuzzDeriveIsUUIDv5 compares derive with its definition on any input.
func FuzzDeriveIsUUIDv5(f *testing.F) {
	f.Add("post", "LESSWRONG", "ioZxrP7BhS5ArK59w")
	f.Fuzz(func(t *testing.T, kind, a, b string) {
		want := uuid.NewSHA1(namespace, []byte(kind+"\x00"+a+"\x00"+b)).String()
		if got := derive(kind, a, b); got != want {
			t.Fatalf("derive(%q, %q, %q) = %s, want %s", kind, a, b, got, want)
		}
	})
}
