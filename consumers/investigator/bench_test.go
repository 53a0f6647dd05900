package investigator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
)

// BenchmarkOrchestrationOverhead measures what an investigation costs
// outside the provider: request to published result through the real
// Kafka and Postgres (snapshot, run state, leases, catch-up, every event
// appended and folded, one claim validated), minus the time the provider
// exchanges themselves took (recorded in the exchange events). The fake
// answers at once, so nearly all of the wall time is orchestration.
func BenchmarkOrchestrationOverhead(b *testing.B) {
	h := newHarness(b, investigator.Config{})
	brain := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	brain.install(h.fake)
	h.startWorkers("bench")
	b.ResetTimer()
	var wall, provider time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := h.register(fmt.Sprintf("bench%06d", i), false, body...)
		b.StartTimer()
		start := time.Now()
		h.request(p, events.RequestSourceInvestigateNow)
		h.waitStatus(p, time.Minute, events.StatusComplete)
		wall += time.Since(start)
		b.StopTimer()
		for _, ev := range h.trail(p.investigationID) {
			if ex, ok := ev.Payload.(*events.InvestigationExchangeRecordedV1); ok {
				provider += time.Duration(ex.DurationMS) * time.Millisecond
			}
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(wall.Seconds()*1000/n, "ms-wall/inv")
	b.ReportMetric(provider.Seconds()*1000/n, "ms-provider/inv")
	b.ReportMetric((wall-provider).Seconds()*1000/n, "ms-overhead/inv")
}
