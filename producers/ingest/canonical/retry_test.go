package canonical

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/retry"
)

// step is one scripted answer of a flaky platform.
type step struct {
	status     int
	retryAfter string
	hangUp     bool // close the connection without answering
}

const okLessWrong = `{"data":{"post":{"result":{"_id":"abc123","contents":{"html":"<p>Hello world</p>"}}}}}`

// scripted answers with steps in order, then with okLessWrong.
func scripted(steps ...step) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(steps) {
			_, _ = io.WriteString(w, okLessWrong)
			return
		}
		s := steps[i]
		if s.hangUp {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(s.status)
		_, _ = io.WriteString(w, `{"error":"try later"}`)
	}
}

func TestRetries(t *testing.T) {
	base := DefaultRetryPolicy().BaseDelay
	tests := []struct {
		name       string
		steps      []step
		wantErr    error
		wantHits   int
		wantSleeps []time.Duration
		wantInErr  string
	}{
		{name: "503 then 200", steps: []step{{status: 503}}, wantHits: 2, wantSleeps: []time.Duration{base}},
		{name: "502, 504 then 200", steps: []step{{status: 502}, {status: 504}}, wantHits: 3, wantSleeps: []time.Duration{base, 2 * base}},
		{name: "connection dropped then 200", steps: []step{{hangUp: true}}, wantHits: 2, wantSleeps: []time.Duration{base}},
		{name: "429 honours Retry-After", steps: []step{{status: 429, retryAfter: "1"}}, wantHits: 2, wantSleeps: []time.Duration{time.Second}},
		{name: "429 shorter Retry-After than backoff", steps: []step{{status: 429, retryAfter: "0"}}, wantHits: 2, wantSleeps: []time.Duration{base}},
		{name: "408 retried", steps: []step{{status: 408}}, wantHits: 2, wantSleeps: []time.Duration{base}},
		{
			name: "three 500s", steps: []step{{status: 500}, {status: 500}, {status: 500}},
			wantErr: ErrUpstreamStatus, wantHits: 3, wantSleeps: []time.Duration{base, 2 * base},
			wantInErr: "gave up after 3 attempts: POST {url}: HTTP 500 Internal Server Error",
		},
		{
			name: "Retry-After beyond the cap", steps: []step{{status: 429, retryAfter: "3600"}},
			wantErr: ErrUpstreamStatus, wantHits: 1, wantInErr: "abc123: POST {url}: HTTP 429 Too Many Requests (Retry-After 1h0m0s)",
		},
		{
			name: "Retry-After as a distant date", steps: []step{{status: 503, retryAfter: time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}},
			wantErr: ErrUpstreamStatus, wantHits: 1,
		},
		{name: "403 not retried", steps: []step{{status: 403}}, wantErr: ErrUpstreamStatus, wantHits: 1},
		{name: "404 not retried", steps: []step{{status: 404}}, wantErr: ErrNotFound, wantHits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakePlatform(t, scripted(tc.steps...))
			f := loopbackFetcher(t, p)
			res, err := f.LessWrong(context.Background(), "abc123")
			require.Len(t, p.recorded(), tc.wantHits)
			require.Equal(t, tc.wantSleeps, f.sleeps.recorded())
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Contains(t, err.Error(), "lesswrong canonical fetch of abc123: ")
				require.Contains(t, err.Error(), "POST "+p.URL+fakeLessWrongPath+": HTTP ")
				require.Contains(t, err.Error(), strings.ReplaceAll(tc.wantInErr, "{url}", p.URL+fakeLessWrongPath))
				require.Contains(t, f.logs.String(), "canonical fetch failed")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "Hello world", res.Text)
			require.Contains(t, f.logs.String(), "canonical fetch retrying")
		})
	}
}

func TestRetryAfterStatusError(t *testing.T) {
	p := newFakePlatform(t, scripted(step{status: 429, retryAfter: "120"}))
	_, err := loopbackFetcher(t, p).LessWrong(context.Background(), "abc123")
	var serr *StatusError
	require.ErrorAs(t, err, &serr)
	require.Equal(t, http.StatusTooManyRequests, serr.StatusCode)
	require.Equal(t, 2*time.Minute, serr.RetryAfter)
}

func TestRetryPolicyConfigurable(t *testing.T) {
	p := newFakePlatform(t, scripted(step{status: 500}, step{status: 500}, step{status: 500}, step{status: 500}))
	policy := RetryPolicy{Attempts: 5, BaseDelay: 10 * time.Millisecond, MaxRetryAfter: time.Second}
	f := loopbackFetcher(t, p, WithRetryPolicy(policy))
	_, err := f.LessWrong(context.Background(), "abc123")
	require.NoError(t, err)
	require.Len(t, p.recorded(), 5)
	require.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond}, f.sleeps.recorded())

	// The doubling wait stops at MaxDelay, and a zero MaxDelay is the
	// default cap.
	capped := loopbackFetcher(t, newFakePlatform(t, scripted(step{status: 500}, step{status: 500}, step{status: 500})),
		WithRetryPolicy(RetryPolicy{Attempts: 4, BaseDelay: time.Second, MaxDelay: 1500 * time.Millisecond}))
	_, err = capped.LessWrong(context.Background(), "abc123")
	require.NoError(t, err)
	require.Equal(t, []time.Duration{time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond}, capped.sleeps.recorded())
	zeroCap := loopbackFetcher(t, newFakePlatform(t, scripted(step{status: 500}, step{status: 500}, step{status: 500})),
		WithRetryPolicy(RetryPolicy{Attempts: 4, BaseDelay: time.Second}))
	_, err = zeroCap.LessWrong(context.Background(), "abc123")
	require.NoError(t, err)
	require.Equal(t, []time.Duration{time.Second, DefaultMaxDelay, DefaultMaxDelay}, zeroCap.sleeps.recorded())

	one := loopbackFetcher(t, newFakePlatform(t, scripted(step{status: 503})), WithRetryPolicy(RetryPolicy{Attempts: 1}))
	_, err = one.LessWrong(context.Background(), "abc123")
	require.ErrorIs(t, err, ErrUpstreamStatus)
	require.Empty(t, one.sleeps.recorded())
}

// TestRetryWaitsForReal: the default wait really sleeps, and a cancelled
// caller stops the retries.
func TestRetryWaitsForReal(t *testing.T) {
	p := newFakePlatform(t, scripted(step{status: 503}))
	f := loopbackFetcher(t, p, WithRetryPolicy(RetryPolicy{Attempts: 2, BaseDelay: 50 * time.Millisecond}))
	f.sleep = retry.Sleep
	start := time.Now()
	_, err := f.LessWrong(context.Background(), "abc123")
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)

	p2 := newFakePlatform(t, scripted(step{status: 503}, step{status: 503}))
	f2 := loopbackFetcher(t, p2, WithRetryPolicy(RetryPolicy{Attempts: 3, BaseDelay: time.Hour}))
	f2.sleep = retry.Sleep
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = f2.LessWrong(ctx, "abc123")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "HTTP 503")
	require.Len(t, p2.recorded(), 1)
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 2 ", 2 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"Sun, 01 Mar 2026 12:00:03 GMT", 3 * time.Second, true},
		{"Sun, 01 Mar 2026 11:00:00 GMT", 0, true},
		// Hostile: refused, or clamped (so a huge wait ends the retries).
		{"\x00", 0, false},
		{"1e309", 0, false},
		{"4294967296", retry.MaxAfter, true},
	}
	for _, tc := range tests {
		got, ok := retry.After(http.Header{"Retry-After": {tc.in}}, now)
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
}
