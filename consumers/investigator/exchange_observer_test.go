package investigator_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
)

// The exchange observer of the event log sees exactly the exchanges the log
// holds, of both stages, with their usage.
func TestExchangeObserverSeesEveryRecordedExchange(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	var mu sync.Mutex
	var seen []events.InvestigationExchangeRecordedV1
	h.eventLog.WithExchangeObserver(func(ex *events.InvestigationExchangeRecordedV1) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, *ex)
	})
	b := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	b.install(h.fake)
	p := h.register("observe01", false, body...)
	h.startWorkers("worker-obs")
	h.request(p, events.RequestSourceInvestigateNow)
	h.waitStatus(p, 30*time.Second, events.StatusComplete)

	var logged []events.InvestigationExchangeRecordedV1
	for _, ev := range h.trail(p.investigationID) {
		if ex, ok := ev.Payload.(*events.InvestigationExchangeRecordedV1); ok {
			logged = append(logged, *ex)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, logged)
	require.ElementsMatch(t, logged, seen)
	stages := map[string]int{}
	for _, ex := range seen {
		stages[ex.Stage]++
	}
	require.Positive(t, stages[events.StageInvestigator])
	require.Positive(t, stages[events.StageValidator])
}
