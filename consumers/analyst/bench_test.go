package analyst

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
)

// timed wraps a provider and counts the time spent inside its calls.
type timed struct {
	llm.Provider
	spent *atomic.Int64
}

func (p timed) Create(ctx context.Context, cred llm.Credentials, req llm.Request) (*llm.Response, error) {
	start := time.Now()
	defer func() { p.spent.Add(int64(time.Since(start))) }()
	return p.Provider.Create(ctx, cred, req)
}

// timedSearch wraps a searcher and counts the time spent inside it.
type timedSearch struct {
	websearch.Searcher
	spent *atomic.Int64
}

func (s timedSearch) Search(ctx context.Context, q string, limit int) ([]websearch.Result, error) {
	start := time.Now()
	defer func() { s.spent.Add(int64(time.Since(start))) }()
	return s.Searcher.Search(ctx, q, limit)
}

// BenchmarkAttempt is one whole analysis of the false post (extraction,
// two queries, three passages judged, the claim verdicts, the summary, the
// post verdict; 18 events) against the scripted fake and the search
// stand-in on loopback, appended to the in-memory log. orchestration-ns/op
// is the analyst's own share: the total less the time inside the provider
// and search calls (the fake answers at once; a real provider's seconds
// come on top and are not ours).
func BenchmarkAttempt(b *testing.B) {
	bn := setup(b)
	var inProvider, inSearch atomic.Int64
	bn.deps.Provider = timed{Provider: llm.OpenAIResponses{}, spent: &inProvider}
	bn.deps.Stance = stance.New(timed{Provider: llm.OpenAIResponses{}, spent: &inProvider}, stance.Config{Model: "gpt-test-stance"})
	bn.deps.Search = timedSearch{Searcher: bn.deps.Search, spent: &inSearch}
	bn.rebuild()
	req := request(falsePost)
	b.ReportAllocs()
	for b.Loop() {
		bn.log.evs = bn.log.evs[:0]
		if err := bn.w.attempt(context.Background(), Run{AnalysisID: req.AnalysisID, Request: req, Status: events.StatusPending}); err != nil {
			b.Fatal(err)
		}
		if last := bn.log.evs[len(bn.log.evs)-1]; last.Payload.EventType() != events.TypeAnalysisCompletedV1 {
			b.Fatalf("the attempt ended with %s", last.Payload.EventType())
		}
	}
	total := b.Elapsed().Nanoseconds()
	b.ReportMetric(float64(inProvider.Load())/float64(b.N), "provider-ns/op")
	b.ReportMetric(float64(inSearch.Load())/float64(b.N), "search-ns/op")
	b.ReportMetric(float64(total-inProvider.Load()-inSearch.Load())/float64(b.N), "orchestration-ns/op")
}
