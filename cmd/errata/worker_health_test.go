package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// fixedStatus is a runner whose status a test sets.
type fixedStatus struct {
	mu sync.Mutex
	st kafka.RunnerStatus
}

func (f *fixedStatus) Status() kafka.RunnerStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

// TestWorkerHealthChecks: a consumer is ready while it runs or retries a
// transient failure for less than stuckAfter, and unready (named, with its
// state in the detail and the reason in the error) when it retries for
// longer, retries a permanent failure, or is stopped.
func TestWorkerHealthChecks(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	boom := errors.New("dial tcp: connection refused")
	p, o := int32(2), int64(40)
	for _, tc := range []struct {
		name       string
		st         kafka.RunnerStatus
		wantErr    string
		wantDetail *consumerDetail
	}{
		{name: "starting", st: kafka.RunnerStatus{State: kafka.RunnerStarting}},
		{name: "running", st: kafka.RunnerStatus{State: kafka.RunnerRunning}},
		{name: "retrying briefly",
			st: kafka.RunnerStatus{State: kafka.RunnerRetrying, Since: now.Add(-stuckAfter + time.Second), Attempts: 9, Topic: "t", Partition: 2, Offset: 40, Err: boom}},
		{name: "retrying too long",
			st:      kafka.RunnerStatus{State: kafka.RunnerRetrying, Since: now.Add(-stuckAfter - time.Second), Attempts: 12, Topic: "t", Partition: 2, Offset: 40, Err: boom},
			wantErr: "projector:serving retrying a failure for 1m1s (12 attempts, t/2 at offset 40): dial tcp: connection refused",
			wantDetail: &consumerDetail{Consumer: "projector:serving", State: "retrying", Since: now.Add(-stuckAfter - time.Second),
				Attempts: 12, Topic: "t", Partition: &p, Offset: &o}},
		{name: "retrying a permanent failure",
			st:      kafka.RunnerStatus{State: kafka.RunnerRetrying, Since: now, Attempts: 1, Topic: "t", Partition: 2, Offset: 40, Err: kafka.Permanent(boom), Permanent: true},
			wantErr: "projector:serving retrying a permanent failure (1 attempts, t/2 at offset 40): dial tcp: connection refused",
			wantDetail: &consumerDetail{Consumer: "projector:serving", State: "retrying", Since: now, Attempts: 1, Permanent: true,
				Topic: "t", Partition: &p, Offset: &o}},
		{name: "fetching fails too long",
			st:         kafka.RunnerStatus{State: kafka.RunnerRetrying, Since: now.Add(-2 * stuckAfter), Attempts: 30, Partition: -1, Offset: -1, Err: boom},
			wantErr:    "projector:serving retrying a failure for 2m0s (30 attempts, fetching from Kafka): dial tcp: connection refused",
			wantDetail: &consumerDetail{Consumer: "projector:serving", State: "retrying", Since: now.Add(-2 * stuckAfter), Attempts: 30}},
		{name: "stopped",
			st:         kafka.RunnerStatus{State: kafka.RunnerStopped, Since: now, Partition: -1, Err: boom},
			wantErr:    "projector:serving stopped since 2026-11-22T10:00:00Z: dial tcp: connection refused",
			wantDetail: &consumerDetail{Consumer: "projector:serving", State: "stopped", Since: now}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newWorkerHealth()
			h.now = func() time.Time { return now }
			h.running("projector:serving", &fixedStatus{st: tc.st})
			err := h.check("projector:serving")
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.wantErr)
			var de *ops.DetailError
			require.ErrorAs(t, err, &de)
			require.Equal(t, *tc.wantDetail, de.Detail)
		})
	}

	t.Run("down, restarted, then running again", func(t *testing.T) {
		t.Parallel()
		h := newWorkerHealth()
		h.now = func() time.Time { return now }
		h.watch("projector:audit")
		require.NoError(t, h.check("projector:audit"), "watched, not started yet")
		h.stopped("projector:audit", errors.New("start generation 1: postgres ping: connection refused"))
		h.now = func() time.Time { return now.Add(time.Minute) }
		h.stopped("projector:audit", errors.New("start generation 1: postgres ping: connection refused"))
		err := h.check("projector:audit")
		require.EqualError(t, err, "projector:audit stopped since 2026-11-22T10:00:00Z (1 restarts tried): start generation 1: postgres ping: connection refused")
		var de *ops.DetailError
		require.ErrorAs(t, err, &de)
		require.Equal(t, consumerDetail{Consumer: "projector:audit", State: "stopped", Since: now, Attempts: 1}, de.Detail)
		h.running("projector:audit", &fixedStatus{st: kafka.RunnerStatus{State: kafka.RunnerRunning}})
		require.NoError(t, h.check("projector:audit"))
		require.EqualError(t, h.check("projector:nope"), "consumer projector:nope is not run by this worker")
	})
}

// TestWorkerReadyzNamesTheConsumer serves the checks through the worker's
// readiness handler: 503 while one consumer is stopped, with its name and
// state in the body but not the error text (which may name hosts); 200
// once it runs.
func TestWorkerReadyzNamesTheConsumer(t *testing.T) {
	t.Parallel()
	h := newWorkerHealth()
	st := &fixedStatus{st: kafka.RunnerStatus{State: kafka.RunnerRunning}}
	h.running(projectorCheckName("serving"), st)
	h.stopped(projectorCheckName("search"), errors.New("dial tcp 10.1.2.3:5432: connection refused"))
	srv := httptest.NewServer(ops.NewReadiness(h.checks(), time.Second, logging.Discard()))
	defer srv.Close()
	get := func() (int, ops.Report) {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		var rep ops.Report
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
		return resp.StatusCode, rep
	}
	code, rep := get()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.False(t, rep.Ready)
	require.Len(t, rep.Checks, 2)
	require.Equal(t, "projector:search", rep.Checks[0].Name)
	require.False(t, rep.Checks[0].OK)
	detail, ok := rep.Checks[0].Detail.(map[string]any)
	require.True(t, ok, "%#v", rep.Checks[0].Detail)
	require.Equal(t, "projector:search", detail["consumer"])
	require.Equal(t, "stopped", detail["state"])
	body, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NotContains(t, string(body), "10.1.2.3", "error text stays in the log")
	require.NotContains(t, string(body), "connection refused")
	require.Equal(t, "projector:serving", rep.Checks[1].Name)
	require.True(t, rep.Checks[1].OK)

	h.running(projectorCheckName("search"), st)
	code, rep = get()
	require.Equal(t, http.StatusOK, code)
	require.True(t, rep.Ready)
}

// TestSupervisorRestartsAStoppedProjector: a projector that cannot be
// started (its store is down), and then whose runner stops for good (a
// fatal fetch error: the broker refuses the topic once), never ends the
// supervisor: each time health reports it stopped, naming why, and it is
// started again with backoff, until it runs and consumes every record
// exactly once; health is then ready. The supervisor returns nil when
// its context ends.
func TestSupervisorRestartsAStoppedProjector(t *testing.T) {
	if !testenv.Integration() {
		t.Skip("ERRATA_INTEGRATION=1 runs this against the local Postgres (the targets store)")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const topic = "events"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	require.NoError(t, err)
	defer c.Close()
	prod, err := kafka.NewClient(c.ListenAddrs(), kgo.DefaultProduceTopic(topic))
	require.NoError(t, err)
	defer prod.Close()
	for i := range 3 {
		require.NoError(t, prod.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr())
	}
	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: topic, Err: kerr.TopicAuthorizationFailed, Count: 1})

	cfg := testenv.Config(t)
	e := newEnv(cfg, logging.Discard())
	name := "supervised-" + testenv.Suffix()
	var mu sync.Mutex
	starts := 0
	var consumed []int64
	all := make(chan struct{})
	factory := func(context.Context, int64) (*kafka.Runner, func(), error) {
		mu.Lock()
		defer mu.Unlock()
		starts++
		if starts == 1 {
			return nil, nil, errors.New("postgres ping: connection refused")
		}
		r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: c.ListenAddrs(), Group: name, Topics: []string{topic},
			Backoff: time.Millisecond, MaxBackoff: time.Millisecond},
			kafka.HandlerFunc(func(_ context.Context, b kafka.Batch) error {
				mu.Lock()
				defer mu.Unlock()
				for _, rec := range b.Records {
					consumed = append(consumed, rec.Offset)
				}
				if len(consumed) == 3 {
					close(all)
				}
				return nil
			}), logging.Discard())
		return r, func() {}, err
	}
	h := newWorkerHealth()
	check := projectorCheckName(name)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- superviseProjector(runCtx, e, name, factory, h) }()

	// Record every distinct reason health gives until every record is in.
	var reasons []string
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-all:
			waiting = false
		case err := <-done:
			t.Fatalf("the supervisor returned: %v", err)
		case <-ctx.Done():
			t.Fatalf("not every record arrived; reasons so far %q", reasons)
		case <-tick.C:
			err := h.check(check)
			if err != nil && len(reasons) == 0 && strings.HasSuffix(err.Error(), " is not run by this worker") {
				continue // the supervisor has not registered its check yet
			}
			if err != nil && (len(reasons) == 0 || reasons[len(reasons)-1] != err.Error()) {
				reasons = append(reasons, err.Error())
			}
		}
	}
	require.Len(t, reasons, 2, "%q", reasons)
	require.Regexp(t, `^projector:supervised-\S+ stopped since \S+ \(0 restarts tried\): start generation 1: postgres ping: connection refused$`, reasons[0])
	// The runner had started: its stop begins a new streak.
	require.Regexp(t, `^projector:supervised-\S+ stopped since \S+ \(0 restarts tried\): generation 1: fetch events/0: TOPIC_AUTHORIZATION_FAILED`, reasons[1])
	require.Equal(t, 1, fault.Hits())
	testenv.Eventually(t, 10*time.Second, func() (bool, string) {
		err := h.check(check)
		return err == nil, fmt.Sprint(err)
	})
	mu.Lock()
	require.Equal(t, 3, starts)
	require.Equal(t, []int64{0, 1, 2}, consumed)
	mu.Unlock()

	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the supervisor did not return after its context ended")
	}
}
