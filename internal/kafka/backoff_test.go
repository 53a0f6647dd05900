package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The runner's and EachRecord's retry delays: capped exponential, ±10%
// jitter (internal/retry computes them; this pins the choice made here).
func TestBackoff(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	for _, tc := range []struct {
		name      string
		base, max time.Duration
		n         int
		want      time.Duration // before jitter
	}{
		{"first retry is the base", 100 * ms, time.Second, 1, 100 * ms},
		{"doubles", 100 * ms, time.Second, 2, 200 * ms},
		{"doubles again", 100 * ms, time.Second, 3, 400 * ms},
		{"doubles thrice", 100 * ms, time.Second, 4, 800 * ms},
		{"capped", 100 * ms, time.Second, 5, time.Second},
		{"stays capped", 100 * ms, time.Second, 60, time.Second},
		{"huge n does not overflow", 100 * ms, time.Second, 1 << 30, time.Second},
		{"base above max is capped", 5 * time.Second, time.Second, 1, time.Second},
		{"cap not a power of two", 3 * ms, 10 * ms, 3, 10 * ms},
		{"zero base", 0, time.Second, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Jitter: d - d/10 + [0, d/5]: within ±10% of d.
			lo, hi := tc.want-tc.want/10, tc.want-tc.want/10+tc.want/5
			seen := map[time.Duration]bool{}
			for i := 0; i < 500; i++ {
				d := backoff(tc.base, tc.max, tc.n)
				require.GreaterOrEqual(t, d, lo)
				require.LessOrEqual(t, d, hi)
				seen[d] = true
			}
			if tc.want > 0 {
				require.Greater(t, len(seen), 1, "delays are jittered")
			}
		})
	}
}
