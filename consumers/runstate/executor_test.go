package runstate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
)

// leaseCall is one Lease call an executor made.
type leaseCall struct {
	work  string
	owner string
	now   time.Time
	ttl   time.Duration
}

// fakeLeases is the executor's side of a Store. Like the store it keeps
// one live lease per unit: one held by another owner is refused, our own
// is renewed (renew, when set, answers the n-th renewal of a unit, n from
// 1; a renewal answering false means another owner took it). Every call
// is recorded; like the store's queries, calls fail once their context
// ended.
type fakeLeases struct {
	mu       sync.Mutex
	others   map[string]bool // units another owner holds
	live     map[string]bool // units we hold
	leases   []leaseCall
	released []string
	renew    func(work string, n int) (bool, error)
	renewals map[string]int
	// catchUpErr is what CatchUp answers.
	catchUpErr error
	// onRelease, when set, is called on each release before the lease
	// is given up.
	onRelease func(work string)
}

func newFakeLeases() *fakeLeases {
	return &fakeLeases{others: map[string]bool{}, live: map[string]bool{}, renewals: map[string]int{}}
}

func (f *fakeLeases) Lease(ctx context.Context, w Work, owner string, now time.Time, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err // as a query on an ended context
	}
	id := w.ID()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leases = append(f.leases, leaseCall{work: id, owner: owner, now: now, ttl: ttl})
	switch {
	case f.others[id]:
		return false, nil
	case !f.live[id]:
		f.live[id] = true
		return true, nil
	}
	f.renewals[id]++
	if f.renew == nil {
		return true, nil
	}
	ok, err := f.renew(id, f.renewals[id])
	if err == nil && !ok {
		f.live[id], f.others[id] = false, true
	}
	return ok, err
}

func (f *fakeLeases) Release(_ context.Context, w Work, owner string) error {
	if f.onRelease != nil {
		f.onRelease(w.ID())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = append(f.released, w.ID())
	delete(f.live, w.ID())
	return nil
}

func (f *fakeLeases) CatchUp(ctx context.Context, _ time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.catchUpErr
}

func (f *fakeLeases) leased(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.others[id] || f.live[id]
}

func (f *fakeLeases) calls() ([]leaseCall, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]leaseCall(nil), f.leases...), append([]string(nil), f.released...)
}

// leaseCalls counts the Lease calls per unit.
func leaseCalls(calls []leaseCall) map[string]int {
	out := map[string]int{}
	for _, c := range calls {
		out[c.work]++
	}
	return out
}

// backlog is a ListFunc over a set of units listed, in the order given,
// until they are done. With leases set it skips units under a live lease,
// as the store's listings do; without, it is a listing that lags behind
// the leases. Each call's limit and time are recorded.
type backlog struct {
	mu     sync.Mutex
	work   []Work
	leases *fakeLeases
	done   map[string]bool
	limits []int
	nows   []time.Time
	// failFirst makes the first listing fail.
	failFirst bool
	// passes, when set, receives a value on each listing (never blocking).
	passes chan struct{}
}

func newBacklog(leases *fakeLeases, work ...Work) *backlog {
	return &backlog{work: work, leases: leases, done: map[string]bool{}}
}

func (b *backlog) list(ctx context.Context, now time.Time, limit int) ([]Work, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limits = append(b.limits, limit)
	b.nows = append(b.nows, now)
	if b.passes != nil {
		select {
		case b.passes <- struct{}{}:
		default:
		}
	}
	if b.failFirst && len(b.limits) == 1 {
		return nil, errors.New("listing failed")
	}
	var out []Work
	for _, w := range b.work {
		if !b.done[w.ID()] && (b.leases == nil || !b.leases.leased(w.ID())) && len(out) < limit {
			out = append(out, w)
		}
	}
	return out, nil
}

func (b *backlog) finish(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done[id] = true
}

func (b *backlog) isDone(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done[id]
}

var executorClock = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

func newTestExecutor(cfg ExecutorConfig, store leaser, list ListFunc, do DoFunc) *Executor {
	cfg.defaults()
	if cfg.Owner == "" {
		cfg.Owner = "worker-1"
	}
	return &Executor{cfg: cfg, store: store, list: list, do: do, log: logging.Discard(),
		now: func() time.Time { return executorClock }}
}

// run runs e until stop is called; stop returns Run's error after Run
// returned.
func run(e *Executor) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return func() error { cancel(); return <-done }
}

func attempt(id string) Work { return Work{Kind: WorkAttempt, InvestigationID: id} }

func TestExecutorConfigDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		in, want ExecutorConfig
	}{
		{"zero", ExecutorConfig{Owner: "w"},
			ExecutorConfig{Owner: "w", Concurrency: 4, Poll: 250 * time.Millisecond, LeaseTTL: 30 * time.Second, CatchUpTimeout: 30 * time.Second}},
		{"negative", ExecutorConfig{Concurrency: -1, Poll: -time.Second, LeaseTTL: -time.Second, CatchUpTimeout: -time.Second},
			ExecutorConfig{Concurrency: 4, Poll: 250 * time.Millisecond, LeaseTTL: 30 * time.Second, CatchUpTimeout: 30 * time.Second}},
		{"set", ExecutorConfig{Concurrency: 9, Poll: time.Millisecond, LeaseTTL: 3 * time.Second, CatchUpTimeout: time.Minute},
			ExecutorConfig{Concurrency: 9, Poll: time.Millisecond, LeaseTTL: 3 * time.Second, CatchUpTimeout: time.Minute}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			got.defaults()
			require.Equal(t, tc.want, got)
		})
	}
}

// A unit validation and the assessment of the same submission share a
// lease; stage-1 and finishing work share the run's.
func TestWorkID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w    Work
		want string
	}{
		{Work{Kind: WorkAttempt, InvestigationID: "i1", SubmissionID: "s9"}, "run:i1"},
		{Work{Kind: WorkFinish, InvestigationID: "i1"}, "run:i1"},
		{Work{Kind: WorkValidate, InvestigationID: "i1", SubmissionID: "s1"}, "validate:s1"},
		{Work{Kind: WorkAssess, InvestigationID: "i1", SubmissionID: "s1"}, "validate:s1"},
		{Work{Kind: "analysis", InvestigationID: "a7"}, "run:a7"},
	} {
		require.Equal(t, tc.want, tc.w.ID(), "%+v", tc.w)
	}
}

// Each listed unit is leased with the executor's clock and TTL, run
// after the catch-up, and released; the listing asks for as many units as
// the executor runs at once.
func TestExecutorRunsListedWork(t *testing.T) {
	t.Parallel()
	leases := newFakeLeases()
	work := newBacklog(leases, attempt("a"), attempt("b"))
	var mu sync.Mutex
	ran := map[string]int{}
	allDone := make(chan struct{})
	leases.onRelease = func(string) {
		if _, released := leases.calls(); len(released) == 1 {
			close(allDone) // the second release
		}
	}
	e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: time.Hour}, leases, work.list,
		func(_ context.Context, w Work) error {
			mu.Lock()
			ran[w.ID()]++
			mu.Unlock()
			work.finish(w.ID())
			return nil
		})
	stop := run(e)
	<-allDone
	require.NoError(t, stop())

	require.Equal(t, map[string]int{"run:a": 1, "run:b": 1}, ran)
	calls, released := leases.calls()
	require.ElementsMatch(t, []string{"run:a", "run:b"}, released)
	require.ElementsMatch(t, []leaseCall{
		{work: "run:a", owner: "worker-1", now: executorClock, ttl: time.Hour},
		{work: "run:b", owner: "worker-1", now: executorClock, ttl: time.Hour},
	}, calls, "one lease each, no renewal within the TTL")
	work.mu.Lock()
	defer work.mu.Unlock()
	for i := range work.limits {
		require.Equal(t, 4, work.limits[i])
		require.Equal(t, executorClock, work.nows[i])
	}
}

// A listing that lags behind the leases names a unit another worker
// holds: it is neither run nor released. It names the unit this executor
// is running: it is not leased again, nor started twice.
func TestExecutorSkipsUnitsItCannotTake(t *testing.T) {
	t.Parallel()
	leases := newFakeLeases()
	leases.others["run:c"] = true
	work := newBacklog(nil, attempt("a"), attempt("c"))
	work.passes = make(chan struct{}, 1)
	var mu sync.Mutex
	var ran []string
	leasedWhileRunning := -1
	e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: time.Hour}, leases, work.list,
		func(_ context.Context, w Work) error {
			mu.Lock()
			ran = append(ran, w.ID())
			mu.Unlock()
			if work.isDone(w.ID()) {
				return nil // a stale listing: the work re-reads its state and finds it done
			}
			for range 3 {
				<-work.passes // the listing names a again while it runs
			}
			calls, _ := leases.calls()
			leasedWhileRunning = leaseCalls(calls)["run:a"]
			work.finish(w.ID())
			return nil
		})
	stop := run(e)
	for !work.isDone("run:a") {
		<-work.passes
	}
	for range 3 {
		<-work.passes
	}
	require.NoError(t, stop())

	require.Equal(t, 1, leasedWhileRunning, "a running unit is not leased again")
	calls, released := leases.calls()
	for _, id := range ran {
		require.Equal(t, "run:a", id, "c is never run")
	}
	for _, r := range released {
		require.Equal(t, "run:a", r, "c is not ours to release")
	}
	require.Equal(t, len(ran), len(released), "every run gives its lease up")
	require.Equal(t, len(ran), leaseCalls(calls)["run:a"])
	require.Greater(t, leaseCalls(calls)["run:c"], 1, "c is tried on every pass")
}

// At most Concurrency units run at once; a freed slot takes the next
// unit while the others still run.
func TestExecutorBoundsConcurrency(t *testing.T) {
	t.Parallel()
	leases := newFakeLeases()
	work := newBacklog(leases, attempt("a"), attempt("b"), attempt("c"), attempt("d"), attempt("e"))
	gate := map[string]chan struct{}{}
	for _, id := range []string{"run:a", "run:b", "run:c", "run:d", "run:e"} {
		gate[id] = make(chan struct{})
	}
	var mu sync.Mutex
	running, most := 0, 0
	started := make(chan string, 10)
	e := newTestExecutor(ExecutorConfig{Concurrency: 2, Poll: time.Millisecond, LeaseTTL: time.Hour}, leases, work.list,
		func(_ context.Context, w Work) error {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			started <- w.ID()
			<-gate[w.ID()]
			mu.Lock()
			running--
			mu.Unlock()
			work.finish(w.ID())
			return nil
		})
	stop := run(e)
	first, second := <-started, <-started
	require.Equal(t, []string{"run:a", "run:b"}, []string{min(first, second), max(first, second)})
	close(gate["run:a"])
	require.Equal(t, "run:c", <-started, "a's slot takes c while b still runs")
	for _, id := range []string{"run:b", "run:c"} {
		close(gate[id])
	}
	rest := []string{<-started, <-started}
	require.ElementsMatch(t, []string{"run:d", "run:e"}, rest)
	for _, id := range rest {
		close(gate[id])
	}
	require.NoError(t, stop()) // waits for the running work to end

	require.Equal(t, 2, most)
	calls, released := leases.calls()
	require.Equal(t, map[string]int{"run:a": 1, "run:b": 1, "run:c": 1, "run:d": 1, "run:e": 1}, leaseCalls(calls))
	require.ElementsMatch(t, []string{"run:a", "run:b", "run:c", "run:d", "run:e"}, released)
	work.mu.Lock()
	defer work.mu.Unlock()
	for _, l := range work.limits {
		require.Equal(t, 2, l)
	}
}

// Work whose state cannot catch up with the log, or that fails, is not
// done but released, so it is listed and tried again.
func TestExecutorReleasesWhatFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		catchUpErr error
		doErr      error
		wantRuns   int
	}{
		{name: "catch-up fails: the work is not run", catchUpErr: errors.New("watermark timeout"), wantRuns: 0},
		{name: "the work fails", doErr: errors.New("provider down"), wantRuns: 2},
		{name: "the work is cancelled", doErr: context.Canceled, wantRuns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			leases := newFakeLeases()
			leases.catchUpErr = tc.catchUpErr
			work := newBacklog(leases, attempt("a"))
			twice := make(chan struct{})
			leases.onRelease = func(id string) {
				if _, released := leases.calls(); len(released) == 1 {
					// the second release: done while still leased, so
					// never listed again
					work.finish(id)
					close(twice)
				}
			}
			var mu sync.Mutex
			runs := 0
			e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: time.Hour}, leases, work.list,
				func(context.Context, Work) error {
					mu.Lock()
					defer mu.Unlock()
					runs++
					return tc.doErr
				})
			stop := run(e)
			<-twice
			require.NoError(t, stop())
			calls, released := leases.calls()
			require.Equal(t, []string{"run:a", "run:a"}, released)
			require.Equal(t, map[string]int{"run:a": 2}, leaseCalls(calls))
			require.Equal(t, tc.wantRuns, runs)
		})
	}
}

// The lease is renewed every LeaseTTL/3 while the work runs; a renewal
// that fails to reach the store changes nothing, but one that finds
// another owner stops the work, which then is not released (it is not
// ours any more).
func TestExecutorRenewsAndStopsOnALostLease(t *testing.T) {
	t.Parallel()
	t.Run("renewal errors are tolerated", func(t *testing.T) {
		t.Parallel()
		leases := newFakeLeases()
		renewed := make(chan int, 100)
		leases.renew = func(_ string, n int) (bool, error) {
			select {
			case renewed <- n:
			default:
			}
			if n == 1 {
				return false, errors.New("connection reset")
			}
			return true, nil
		}
		work := newBacklog(leases, attempt("a"))
		released := make(chan struct{})
		leases.onRelease = func(string) { close(released) }
		var workErr error
		e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: 3 * time.Millisecond}, leases, work.list,
			func(ctx context.Context, w Work) error {
				for n := range renewed {
					if n == 2 {
						break
					}
				}
				workErr = ctx.Err()
				work.finish(w.ID())
				return nil
			})
		stop := run(e)
		<-released
		require.NoError(t, stop())
		require.NoError(t, workErr, "a renewal error does not stop the work")
		calls, rel := leases.calls()
		require.Equal(t, []string{"run:a"}, rel)
		for _, c := range calls {
			require.Equal(t, leaseCall{work: "run:a", owner: "worker-1", now: executorClock, ttl: 3 * time.Millisecond}, c)
		}
	})
	t.Run("a lost lease stops the work", func(t *testing.T) {
		t.Parallel()
		leases := newFakeLeases()
		leases.renew = func(_ string, n int) (bool, error) { return n < 3, nil }
		work := newBacklog(leases, attempt("a"))
		stopped := make(chan error, 1)
		e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: 3 * time.Millisecond}, leases, work.list,
			func(ctx context.Context, w Work) error {
				<-ctx.Done()
				work.finish(w.ID())
				stopped <- ctx.Err()
				return ctx.Err()
			})
		stop := run(e)
		require.ErrorIs(t, <-stopped, context.Canceled)
		require.NoError(t, stop())
		calls, released := leases.calls()
		require.Empty(t, released, "a lost lease is not released")
		require.Len(t, calls, 4, "the lease, two renewals, the renewal that found it lost")
	})
}

// A failed listing is retried on the next pass; Run returns nil once its
// context ends, after the running work stopped.
func TestExecutorListingFailureAndShutdown(t *testing.T) {
	t.Parallel()
	leases := newFakeLeases()
	work := newBacklog(leases, attempt("a"))
	work.failFirst = true
	running := make(chan struct{})
	var finished bool
	e := newTestExecutor(ExecutorConfig{Poll: time.Millisecond, LeaseTTL: time.Hour}, leases, work.list,
		func(ctx context.Context, w Work) error {
			close(running)
			<-ctx.Done()
			finished = true
			return ctx.Err()
		})
	stop := run(e)
	<-running
	require.NoError(t, stop())
	require.True(t, finished, "Run returns after its work stopped")
	_, released := leases.calls()
	require.Equal(t, []string{"run:a"}, released, "work stopped by shutdown gives its lease up")
	work.mu.Lock()
	defer work.mu.Unlock()
	require.GreaterOrEqual(t, len(work.limits), 2)
}
