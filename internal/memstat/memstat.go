// Package memstat reads this process's live heap, for the benchmarks that
// report memory beside speed (errata bench, BenchmarkServingReplay).
package memstat

import (
	"runtime/metrics"
	"time"
)

// LiveHeap is the live heap of this process after its last GC, in bytes.
func LiveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// SamplePeak records LiveHeap every interval, and once more when stop is
// closed; the returned function waits for the sampler and gives the peak.
func SamplePeak(interval time.Duration, stop <-chan struct{}) func() uint64 {
	var peak uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			peak = max(peak, LiveHeap())
			select {
			case <-stop:
				peak = max(peak, LiveHeap())
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		<-done
		return peak
	}
}
