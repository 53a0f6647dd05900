package textdiff

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// lcsLength is the textbook O(N·M) dynamic program, the reference the
// Myers implementation must agree with.
func lcsLength(a, b []int) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// checkScript verifies that the kept elements of a and b are the same
// sequence (so the script turns a into b) and that the script is minimal.
func checkScript(t *testing.T, a, b []int) {
	t.Helper()
	deleted, inserted := editScript(a, b)
	var keptA, keptB []int
	for i, x := range a {
		if !deleted[i] {
			keptA = append(keptA, x)
		}
	}
	for j, y := range b {
		if !inserted[j] {
			keptB = append(keptB, y)
		}
	}
	require.Equal(t, keptA, keptB, "a=%v b=%v", a, b)
	require.Equal(t, lcsLength(a, b), len(keptA), "not minimal: a=%v b=%v", a, b)
}

func TestEditScriptCases(t *testing.T) {
	tests := []struct {
		name string
		a, b []int
	}{
		{"both empty", nil, nil},
		{"insert all", nil, []int{1, 2, 3}},
		{"delete all", []int{1, 2, 3}, nil},
		{"equal", []int{1, 2, 3}, []int{1, 2, 3}},
		{"disjoint", []int{1, 2, 3}, []int{4, 5, 6, 7}},
		{"middle change", []int{1, 2, 3, 4, 5}, []int{1, 2, 9, 4, 5}},
		{"classic", []int{1, 2, 3, 1, 2, 2, 1}, []int{3, 2, 1, 2, 1, 3}},
		{"repeated", []int{1, 1, 1, 1}, []int{1, 1}},
		{"swap", []int{1, 2}, []int{2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkScript(t, tc.a, tc.b)
		})
	}
}

// TestEditScriptRandom compares against the dynamic program on many random
// inputs over small alphabets, where repeated elements make the search
// hard.
func TestEditScriptRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func(n, alphabet int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = rng.IntN(alphabet)
		}
		return s
	}
	for range 3000 {
		alphabet := 1 + rng.IntN(6)
		checkScript(t, gen(rng.IntN(40), alphabet), gen(rng.IntN(40), alphabet))
	}
	// Larger, mostly similar inputs: an edited copy.
	for range 50 {
		a := gen(300+rng.IntN(300), 50)
		b := append([]int(nil), a...)
		for range 1 + rng.IntN(30) {
			p := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b = append(b[:p], b[p+1:]...)
			case 1:
				b = append(b[:p], append([]int{rng.IntN(60)}, b[p:]...)...)
			default:
				b[p] = rng.IntN(60)
			}
		}
		checkScript(t, a, b)
	}
}
