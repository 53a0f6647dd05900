package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ops"
)

// stuckAfter is how long a consumer may keep retrying a transient failure
// (a store away, a lost connection) before the worker's /readyz fails. A
// failure marked Permanent, or a stopped consumer, fails it at once.
const stuckAfter = time.Minute

// runnerStatus is what the health of a consumer is read from
// (*kafka.Runner).
type runnerStatus interface {
	Status() kafka.RunnerStatus
}

// workerHealth is what the worker's /readyz knows about the consumers it
// runs: for each, the runner now running it, or why it is down.
type workerHealth struct {
	mu        sync.Mutex
	consumers map[string]*consumerHealth
	now       func() time.Time
}

// consumerHealth is one consumer's state.
type consumerHealth struct {
	runner runnerStatus
	// down is set while the consumer is not running because it failed:
	// its runner stopped with an error, or it could not be started.
	down     error
	since    time.Time
	restarts int
}

func newWorkerHealth() *workerHealth {
	return &workerHealth{consumers: map[string]*consumerHealth{}, now: time.Now}
}

func (h *workerHealth) entry(name string) *consumerHealth {
	c := h.consumers[name]
	if c == nil {
		c = &consumerHealth{}
		h.consumers[name] = c
	}
	return c
}

// watch registers a consumer before it starts (it is healthy until told
// otherwise), so /readyz names every consumer of the worker.
func (h *workerHealth) watch(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entry(name)
}

// running records that r now runs consumer name.
func (h *workerHealth) running(name string, r runnerStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.entry(name)
	c.runner, c.down = r, nil
}

// stopped records that consumer name is down because of err (its runner
// returned, or it could not be started); the first failure of a streak
// sets since.
func (h *workerHealth) stopped(name string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.entry(name)
	if c.down == nil {
		c.since = h.now()
	} else {
		c.restarts++
	}
	c.runner, c.down = nil, err
}

// consumerDetail is the public /readyz detail of an unhealthy consumer:
// names, states and counts; the error text goes to the log only.
type consumerDetail struct {
	Consumer  string    `json:"consumer"`
	State     string    `json:"state"`
	Since     time.Time `json:"since"`
	Attempts  int       `json:"attempts,omitempty"`
	Permanent bool      `json:"permanent,omitempty"`
	Topic     string    `json:"topic,omitempty"`
	Partition *int32    `json:"partition,omitempty"`
	Offset    *int64    `json:"offset,omitempty"`
}

// check reports consumer name: nil while it runs (or retries a transient
// failure for less than stuckAfter), else an error naming it and why.
func (h *workerHealth) check(name string) error {
	h.mu.Lock()
	c, ok := h.consumers[name]
	var down error
	var since time.Time
	var restarts int
	var r runnerStatus
	if ok {
		down, since, restarts, r = c.down, c.since, c.restarts, c.runner
	}
	now := h.now()
	h.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("consumer %s is not run by this worker", name)
	case down != nil:
		return &ops.DetailError{
			Err:    fmt.Errorf("%s stopped since %s (%d restarts tried): %w", name, since.UTC().Format(time.RFC3339), restarts, down),
			Detail: consumerDetail{Consumer: name, State: string(kafka.RunnerStopped), Since: since.UTC(), Attempts: restarts},
		}
	case r == nil:
		return nil // being started
	}
	st := r.Status()
	detail := consumerDetail{Consumer: name, State: string(st.State), Since: st.Since.UTC(), Attempts: st.Attempts, Permanent: st.Permanent}
	switch st.State {
	case kafka.RunnerStopped:
		err := st.Err
		if err == nil {
			err = errors.New("its runner returned")
		}
		return &ops.DetailError{Err: fmt.Errorf("%s stopped since %s: %w", name, st.Since.UTC().Format(time.RFC3339), err), Detail: detail}
	case kafka.RunnerRetrying:
		if !st.Permanent && now.Sub(st.Since) < stuckAfter {
			return nil
		}
		where := "fetching from Kafka"
		if st.Partition >= 0 {
			detail.Topic, detail.Partition, detail.Offset = st.Topic, &st.Partition, &st.Offset
			where = fmt.Sprintf("%s/%d at offset %d", st.Topic, st.Partition, st.Offset)
		}
		what := "a permanent failure"
		if !st.Permanent {
			what = fmt.Sprintf("a failure for %s", now.Sub(st.Since).Round(time.Second))
		}
		return &ops.DetailError{
			Err:    fmt.Errorf("%s retrying %s (%d attempts, %s): %w", name, what, st.Attempts, where, st.Err),
			Detail: detail,
		}
	}
	return nil
}

// checks are the readiness checks of every watched consumer, one per
// consumer ("projector:serving", "stage:investigator").
func (h *workerHealth) checks() []ops.Check {
	h.mu.Lock()
	names := make([]string, 0, len(h.consumers))
	for n := range h.consumers {
		names = append(names, n)
	}
	h.mu.Unlock()
	slices.Sort(names)
	out := make([]ops.Check, len(names))
	for i, n := range names {
		out[i] = ops.Check{Name: n, Run: func(context.Context) error { return h.check(n) }}
	}
	return out
}

// projectorCheckName is the readiness check of projector name.
func projectorCheckName(name string) string { return "projector:" + name }

// stageCheckName is the readiness check of investigation stage name.
func stageCheckName(name string) string { return "stage:" + name }
