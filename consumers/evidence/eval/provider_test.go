package eval

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

func scriptedFake(t *testing.T) *fakeopenai.Server {
	t.Helper()
	sc, err := fakeopenai.LoadScript("testdata/stance-script.json")
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	return fake
}

// TestProviderLane runs the provider lane on the hand-labelled
// Factcheck-Bench files against the scripted fake provider
// (testdata/stance-script.json), whose stances differ from the gold ones:
//
//	F1 P1 c0.9, P2 c0.8, P3 -         REFUTED, flagged          TP
//	F2 P1 c0.95, P4 -, P3 -           REFUTED, one source        FN (no_authority + gate)
//	F3 P1 c0.9, P2 c0.85, P4 -        REFUTED, flagged          TP (gold: withheld)
//	F4 P5 e0.9, P6 e0.8               SUPPORTED                 TN
//	F5 P1 e0.9, P7 -                  NOT_ENOUGH (one source)   TN (gold: FP)
//	F6 (unscripted: neutral)          NOT_ENOUGH                TN
//
// TP 2, FN 1, FP 0, TN 3: precision 1, recall 2/3, F1 4/5, false-positive
// rate 0, coverage 4/6. One stance call per claim (≤ 8 passages).
func TestProviderLane(t *testing.T) {
	fake := scriptedFake(t)
	set, err := Load(FCBFactuality, "testdata/fcb-factuality.hand.jsonl", LoadOptions{EvidenceFile: "testdata/fcb-stance.hand.jsonl"})
	require.NoError(t, err)
	meter := NewMeter(llm.ChatCompletions{})
	judge := stance.New(meter, stance.Config{Model: "gpt-5-mini"})
	var calls []int
	r, err := Evaluate(context.Background(), set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy(),
		Stancer:  judge.Stancer(llm.Credentials{BaseURL: fake.URL, APIKey: logging.Secret("sk-test")}),
		Progress: func(done, total int) { calls = append(calls, done*10+total) }})
	require.NoError(t, err)
	require.Equal(t, Counts{TP: 2, FP: 0, FN: 1, TN: 3, Positives: 3, Negatives: 3, Flagged: 2, Definite: 4, RefutedPositives: 3}, r.Counts)
	require.Equal(t, 1.0, r.Precision)
	require.Equal(t, 2.0/3.0, r.Recall)
	require.Equal(t, 4.0/5.0, r.F1)
	require.Equal(t, 0.0, r.FalsePositiveRate)
	require.Equal(t, 4.0/6.0, r.Coverage)
	require.Equal(t, map[string]int{"no_authoritative_contradiction+gate4_below_minimum": 1}, r.WithheldByRules)
	require.Equal(t, []int{16, 26, 36, 46, 56, 66}, calls)
	require.Zero(t, r.StanceErrors)
	require.Zero(t, r.StanceNotes)
	require.Equal(t, LaneProvider, r.Lane)

	reqs := fake.RequestsTo(fakeopenai.ChatCompletions)
	require.Len(t, reqs, 6)
	var input int64
	for _, q := range reqs {
		input += int64(len(q.Body)/4 + 1) // the fake's usage: a token per 4 bytes
	}
	tok := meter.Tokens()
	require.Equal(t, 6, tok.Calls)
	require.Equal(t, input, tok.Input)
	require.Positive(t, tok.Output)
	require.Equal(t, tok.Input+tok.Output, tok.Total)
	require.Equal(t, (float64(input)*0.25+float64(tok.Output)*2)/1e6,
		Cost(tok, Price{Input: 0.25, CachedInput: 0.025, Output: 2}))
}

// A key the provider refuses ends the run at once with the provider's
// error: nothing is measured on no evidence.
func TestProviderLaneRefusedKey(t *testing.T) {
	fake := scriptedFake(t)
	fake.RequireAPIKey("sk-right")
	set, err := Load(FCBStance, "testdata/fcb-stance.hand.jsonl", LoadOptions{})
	require.NoError(t, err)
	judge := stance.New(llm.ChatCompletions{}, stance.Config{Model: "gpt-5-mini"})
	_, err = Evaluate(context.Background(), set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy(), Parallel: 2,
		Stancer: judge.Stancer(llm.Credentials{BaseURL: fake.URL, APIKey: logging.Secret("sk-wrong")})})
	var le *llm.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, 401, le.StatusCode)
	require.ErrorContains(t, err, "provider lane: claim line ")
	require.LessOrEqual(t, len(fake.RequestsTo(fakeopenai.ChatCompletions)), 2, "no claim starts after the refusal")
}

// flaky is a Stancer for the retry rules: per claim, the errors to return
// before answering (a nil entry answers).
type flaky struct {
	mu    sync.Mutex
	plan  map[string][]error
	calls map[string]int
	short bool // answer one result too few
}

func (f *flaky) Stance(_ context.Context, claim string, passages []string) ([]evidence.StanceResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls[claim]
	f.calls[claim]++
	if plan := f.plan[claim]; n < len(plan) && plan[n] != nil {
		return nil, plan[n]
	}
	out := make([]evidence.StanceResult, len(passages))
	for i := range out {
		out[i] = evidence.StanceResult{Stance: evidence.Stance{Contradict: 1}}
	}
	if f.short {
		out = out[1:]
	}
	if claim == "Claim F4." {
		out[0] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: "stance answer broke the schema 3 times"}
	}
	if claim == "Claim F6." && !f.short {
		out[1] = evidence.StanceResult{Stance: evidence.Stance{Entail: math.NaN()}} // counted neutral by the engine
	}
	return out, nil
}

func TestProviderLaneRetries(t *testing.T) {
	set, err := Load(FCBStance, "testdata/fcb-stance.hand.jsonl", LoadOptions{})
	require.NoError(t, err)
	transient := &llm.Error{Class: llm.Transient, Kind: "server_error", StatusCode: 503}
	f := &flaky{calls: map[string]int{}, plan: map[string][]error{
		"Claim F1.": {transient, transient},            // answers on the third attempt
		"Claim F2.": {transient, transient, transient}, // never within 3 attempts
		"Claim F3.": {errors.New("connection reset")},
	}}
	r, err := Evaluate(context.Background(), set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy(), Stancer: f,
		Backoff: time.Millisecond, Attempts: 3})
	require.NoError(t, err)
	require.Equal(t, 3, f.calls["Claim F1."])
	require.Equal(t, 3, f.calls["Claim F2."])
	require.Equal(t, 2, f.calls["Claim F3."])
	require.Equal(t, 1, r.StanceErrors)
	require.Equal(t, 7, r.Records)
	require.Equal(t, 6, r.Evaluated)
	require.Equal(t, 2, r.StanceNotes)
	require.Equal(t, r.Evaluated, r.Counts.TP+r.Counts.FP+r.Counts.FN+r.Counts.TN)

	// An answer with the wrong number of results is retried like an error,
	// and a run where no claim could be judged is an error.
	short := &flaky{calls: map[string]int{}, short: true}
	_, err = Evaluate(context.Background(), set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy(), Stancer: short,
		Backoff: time.Millisecond, Attempts: 2})
	require.Error(t, err)
	require.Contains(t, err.Error(), "provider lane: no claim could be judged: stancer answered ")
	for claim, n := range short.calls {
		require.Equal(t, 2, n, claim)
	}

	// A cancelled run stops.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Evaluate(ctx, set, Options{Lane: LaneProvider, Policy: evidence.DefaultPolicy(), Stancer: &flaky{calls: map[string]int{}}})
	require.ErrorIs(t, err, context.Canceled)
	_, err = Evaluate(ctx, set, Options{Lane: LaneGold, Policy: evidence.DefaultPolicy()})
	require.ErrorIs(t, err, context.Canceled)
}

// TestPause: the wait between attempts grows from the backoff, jittered
// by ±10%, up to 30s; a provider's longer Retry-After wins, up to 30s too.
func TestPause(t *testing.T) {
	for _, tc := range []struct {
		n          int
		retryAfter time.Duration
		lo, hi     time.Duration
	}{
		{1, 0, 1800 * time.Millisecond, 2200 * time.Millisecond},
		{3, 0, 7200 * time.Millisecond, 8800 * time.Millisecond},
		{10, 0, 27 * time.Second, 33 * time.Second},
		{1, time.Second, 1800 * time.Millisecond, 2200 * time.Millisecond},
		{1, 10 * time.Second, 10 * time.Second, 10 * time.Second},
		{1, time.Hour, 30 * time.Second, 30 * time.Second},
	} {
		var le *llm.Error
		if tc.retryAfter > 0 {
			le = &llm.Error{RetryAfter: tc.retryAfter}
		}
		for range 50 {
			d := pause(2*time.Second, tc.n, le)
			require.GreaterOrEqual(t, d, tc.lo, "n=%d retry-after=%s", tc.n, tc.retryAfter)
			require.LessOrEqual(t, d, tc.hi, "n=%d retry-after=%s", tc.n, tc.retryAfter)
		}
	}
}
