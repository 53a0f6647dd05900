package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/metrics"
)

func TestHTTPCountsByRouteMethodCode(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	h := metrics.NewHTTP(reg)
	h.Observe("/trpc/post.batchStatus", "GET", 200, 3*time.Millisecond)
	h.Observe("/trpc/post.batchStatus", "GET", 200, 30*time.Millisecond)
	h.Observe("/trpc/:path", "POST", 404, time.Millisecond)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_http_requests_total HTTP requests answered, by route template, method and status code.
# TYPE errata_http_requests_total counter
errata_http_requests_total{code="200",method="GET",route="/trpc/post.batchStatus"} 2
errata_http_requests_total{code="404",method="POST",route="/trpc/:path"} 1
`), "errata_http_requests_total"))
	require.Equal(t, 2, seriesCount(t, reg, "errata_http_request_duration_seconds"))
}

// seriesCount is the number of series of the metric family name in reg.
func seriesCount(t *testing.T, reg prometheus.Gatherer, name string) int {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

func TestConsumerCountsRecordsAndBatches(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := metrics.NewConsumer(reg)
	c.BatchDone("errata.projector.serving", "errata.posts", 0, 7, 10*time.Millisecond)
	c.BatchDone("errata.projector.serving", "errata.posts", 1, 3, 20*time.Millisecond)
	c.BatchDone("errata.validator", "errata.investigations", 0, 1, time.Millisecond)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_consumer_records_total Records whose effects are durable, by consumer group and topic.
# TYPE errata_consumer_records_total counter
errata_consumer_records_total{group="errata.projector.serving",topic="errata.posts"} 10
errata_consumer_records_total{group="errata.validator",topic="errata.investigations"} 1
`), "errata_consumer_records_total"))
	fams, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "errata_consumer_batch_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == "errata.projector.serving" {
				require.Equal(t, uint64(2), m.GetHistogram().GetSampleCount())
				require.InDelta(t, 0.03, m.GetHistogram().GetSampleSum(), 1e-9)
			}
		}
	}
}

func TestCost(t *testing.T) {
	t.Parallel()
	price := config.LLMPrice{Input: 1.25, Output: 10, CachedInput: 0.125}
	for _, tc := range []struct {
		name string
		u    metrics.Usage
		want float64
	}{
		{"nothing", metrics.Usage{}, 0},
		{"a million uncached input", metrics.Usage{Input: 1_000_000}, 1.25},
		{"cached input is cheaper", metrics.Usage{Input: 1_000_000, Cached: 1_000_000}, 0.125},
		{"mixed", metrics.Usage{Input: 2000, Cached: 1000, Output: 500, Reasoning: 400}, (1000*1.25 + 1000*0.125 + 500*10) / 1e6},
		{"cached beyond input is clamped", metrics.Usage{Input: 10, Cached: 50}, 10 * 0.125 / 1e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.InDelta(t, tc.want, metrics.Cost(price, tc.u), 1e-12)
		})
	}
}

func TestLLMCountsTokensAndCostAndWarnsOncePerUnpricedModel(t *testing.T) {
	t.Parallel()
	prices, err := config.ParseLLMPrices("gpt-5=1.25:10:0.125")
	require.NoError(t, err)
	var logs bytes.Buffer
	log, err := logging.New(&logs, "json", "info")
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	m := metrics.NewLLM(reg, prices, log)
	m.Record("openai-responses", "gpt-5-2025-08-07", "investigator", metrics.Usage{Input: 1_000_000, Cached: 200_000, Output: 100_000, Reasoning: 60_000})
	m.Record("openai-responses", "local-llama", "validator", metrics.Usage{Input: 10, Output: 5})
	m.Record("openai-responses", "local-llama", "validator", metrics.Usage{Input: 10, Output: 5})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_llm_cost_usd_total Estimated model cost in US dollars from ERRATA_LLM_PRICES, by provider, model and stage (unpriced models are not counted).
# TYPE errata_llm_cost_usd_total counter
errata_llm_cost_usd_total{model="gpt-5-2025-08-07",provider="openai-responses",stage="investigator"} 2.025
# HELP errata_llm_tokens_total Model tokens by provider, model, stage and kind (input includes cached, output includes reasoning).
# TYPE errata_llm_tokens_total counter
errata_llm_tokens_total{kind="cached",model="gpt-5-2025-08-07",provider="openai-responses",stage="investigator"} 200000
errata_llm_tokens_total{kind="input",model="gpt-5-2025-08-07",provider="openai-responses",stage="investigator"} 1e+06
errata_llm_tokens_total{kind="output",model="gpt-5-2025-08-07",provider="openai-responses",stage="investigator"} 100000
errata_llm_tokens_total{kind="reasoning",model="gpt-5-2025-08-07",provider="openai-responses",stage="investigator"} 60000
errata_llm_tokens_total{kind="input",model="local-llama",provider="openai-responses",stage="validator"} 20
errata_llm_tokens_total{kind="output",model="local-llama",provider="openai-responses",stage="validator"} 10
`), "errata_llm_tokens_total", "errata_llm_cost_usd_total"))
	require.Equal(t, 1, strings.Count(logs.String(), "no price for model"), logs.String())
	require.Contains(t, logs.String(), `"model":"local-llama"`)
}

func TestInvestigationsCollectorReportsEveryStateAndCaches(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	fail := false
	c := metrics.NewInvestigationsCollector(func(ctx context.Context) (map[string]int64, error) {
		calls.Add(1)
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("read without a deadline")
		}
		if fail {
			return nil, errors.New("postgres down")
		}
		return map[string]int64{"PENDING": 3, "COMPLETE": 9}, nil
	}, metrics.LagOptions{Cache: 5 * time.Second, Now: clock}, logging.Discard())
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	want := `
# HELP errata_investigations Investigations by state in the serving projection.
# TYPE errata_investigations gauge
errata_investigations{state="COMPLETE"} 9
errata_investigations{state="FAILED"} 0
errata_investigations{state="PENDING"} 3
errata_investigations{state="PROCESSING"} 0
# HELP errata_investigations_up 1 when the last read of investigations by state succeeded, 0 when it failed.
# TYPE errata_investigations_up gauge
errata_investigations_up 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
	require.Equal(t, int32(1), calls.Load(), "a second scrape within the cache period reuses the read")

	fail = true
	now = now.Add(6 * time.Second)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_investigations_up 1 when the last read of investigations by state succeeded, 0 when it failed.
# TYPE errata_investigations_up gauge
errata_investigations_up 0
`)))
	require.Equal(t, int32(2), calls.Load())
}

func TestNewRegistryHasRuntimeCollectors(t *testing.T) {
	t.Parallel()
	fams, err := metrics.NewRegistry().Gather()
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
	}
	require.True(t, names["go_goroutines"])
	require.True(t, names["process_start_time_seconds"], "process collector (Linux)")
}
