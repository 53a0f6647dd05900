package eval

import (
	"context"
	"sync"

	"github.com/errata-dev/errata/consumers/llm"
)

// Meter is an llm.Provider that forwards every call to another and sums
// the tokens the provider reports, so a run can say what it cost whatever
// calls the stancer makes. It is safe for concurrent use.
type Meter struct {
	p      llm.Provider
	mu     sync.Mutex
	tokens Tokens
}

// NewMeter meters p.
func NewMeter(p llm.Provider) *Meter { return &Meter{p: p} }

// Name is the metered provider's name.
func (m *Meter) Name() string { return m.p.Name() }

// Create forwards one turn and counts its usage.
func (m *Meter) Create(ctx context.Context, cred llm.Credentials, req llm.Request) (*llm.Response, error) {
	res, err := m.p.Create(ctx, cred, req)
	m.add(res)
	return res, err
}

// Continue forwards the next turn and counts its usage.
func (m *Meter) Continue(ctx context.Context, cred llm.Credentials, req llm.Request, prev *llm.Response, outputs []llm.ToolOutput) (*llm.Response, error) {
	res, err := m.p.Continue(ctx, cred, req, prev, outputs)
	m.add(res)
	return res, err
}

// add counts a response's usage; an answer next to an error was billed
// too, so it counts.
func (m *Meter) add(res *llm.Response) {
	if res == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u := res.Usage
	m.tokens.Calls++
	m.tokens.Input += u.InputTokens
	m.tokens.CachedInput += u.CachedInputTokens
	m.tokens.Output += u.OutputTokens
	m.tokens.Reasoning += u.ReasoningTokens
	m.tokens.Total += u.TotalTokens
}

// Tokens is the sum so far.
func (m *Meter) Tokens() Tokens {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tokens
}
