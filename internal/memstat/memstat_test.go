package memstat

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var keep [][]byte

// A heap grown while sampling shows in the peak, which is never below
// what the heap held when sampling began.
func TestSamplePeak(t *testing.T) {
	runtime.GC()
	start := LiveHeap()
	require.Positive(t, start)
	stop := make(chan struct{})
	peak := SamplePeak(time.Millisecond, stop)
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	runtime.GC()
	close(stop)
	require.GreaterOrEqual(t, peak(), start+60<<20)
	keep = nil
}
