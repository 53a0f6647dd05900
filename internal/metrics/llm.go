package metrics

import (
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/errata-dev/errata/internal/config"
)

// Usage is one model exchange's token counts as providers report them:
// Cached is part of Input, Reasoning part of Output.
type Usage struct {
	Input, Cached, Output, Reasoning int64
}

// LLM counts model tokens and estimates their cost from a price table.
// Tokens of a model without a price are counted; their cost is not, and
// the model is named once in a warning.
type LLM struct {
	prices config.LLMPrices
	log    *slog.Logger
	tokens *prometheus.CounterVec
	cost   *prometheus.CounterVec

	mu     sync.Mutex
	warned map[string]bool
}

// NewLLM registers the model metrics on reg.
func NewLLM(reg prometheus.Registerer, prices config.LLMPrices, log *slog.Logger) *LLM {
	m := &LLM{prices: prices, log: log, warned: map[string]bool{},
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "llm", Name: "tokens_total",
			Help: "Model tokens by provider, model, stage and kind (input includes cached, output includes reasoning).",
		}, []string{"provider", "model", "stage", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "llm", Name: "cost_usd_total",
			Help: "Estimated model cost in US dollars from ERRATA_LLM_PRICES, by provider, model and stage (unpriced models are not counted).",
		}, []string{"provider", "model", "stage"}),
	}
	reg.MustRegister(m.tokens, m.cost)
	return m
}

// Record counts one exchange.
func (m *LLM) Record(provider, model, stage string, u Usage) {
	for kind, n := range map[string]int64{"input": u.Input, "cached": u.Cached, "output": u.Output, "reasoning": u.Reasoning} {
		if n > 0 {
			m.tokens.WithLabelValues(provider, model, stage, kind).Add(float64(n))
		}
	}
	price, ok := m.prices.Lookup(model)
	if !ok {
		m.mu.Lock()
		first := !m.warned[model]
		m.warned[model] = true
		m.mu.Unlock()
		if first {
			m.log.Warn("no price for model: tokens are counted, cost is not (set ERRATA_LLM_PRICES)", "model", model)
		}
		return
	}
	m.cost.WithLabelValues(provider, model, stage).Add(Cost(price, u))
}

// Cost is the dollar cost of usage at price: uncached input, cached input
// and output (reasoning is billed as output and already part of it).
func Cost(price config.LLMPrice, u Usage) float64 {
	cached := min(max(u.Cached, 0), max(u.Input, 0))
	uncached := max(u.Input, 0) - cached
	return (float64(uncached)*price.Input + float64(cached)*price.CachedInput + float64(max(u.Output, 0))*price.Output) / 1e6
}
