package runstate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// ExecutorConfig tunes an Executor.
type ExecutorConfig struct {
	// Owner names this worker instance in leases (unique per process).
	Owner string
	// Concurrency bounds the units of work run at once (default 4).
	Concurrency int
	// Poll is the pause between looks for work when there was none (default 250ms).
	Poll time.Duration
	// LeaseTTL is how long a lease lasts without renewal (default 30s); it
	// is renewed every LeaseTTL/3 while the work runs. A worker that dies
	// loses its leases after at most LeaseTTL.
	LeaseTTL time.Duration
	// CatchUpTimeout bounds the wait for the state to reach the log's end
	// before a unit of work starts (default 30s).
	CatchUpTimeout time.Duration
}

func (c *ExecutorConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Poll <= 0 {
		c.Poll = 250 * time.Millisecond
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.CatchUpTimeout <= 0 {
		c.CatchUpTimeout = 30 * time.Second
	}
}

// ListFunc lists due, unleased work (at most limit units).
type ListFunc func(ctx context.Context, now time.Time, limit int) ([]Work, error)

// DoFunc runs one unit of work under its lease, after the state caught up
// with the log. It must re-read the state it acts on: the listing may be
// stale. A returned error is logged; the work becomes available again when
// the lease is released.
type DoFunc func(ctx context.Context, w Work) error

// leaser is what an Executor needs of its Store.
type leaser interface {
	Lease(ctx context.Context, w Work, owner string, now time.Time, ttl time.Duration) (bool, error)
	Release(ctx context.Context, w Work, owner string) error
	CatchUp(ctx context.Context, timeout time.Duration) error
}

// Executor runs work from the run state: it leases each unit before
// running it, renews the lease while it runs, and releases it after.
type Executor struct {
	cfg   ExecutorConfig
	store leaser
	list  ListFunc
	do    DoFunc
	log   *slog.Logger
	now   func() time.Time
}

// NewExecutor returns an executor.
func NewExecutor(cfg ExecutorConfig, store *Store, list ListFunc, do DoFunc, log *slog.Logger, now func() time.Time) *Executor {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Executor{cfg: cfg, store: store, list: list, do: do, log: log.With("owner", cfg.Owner), now: now}
}

// Run works until ctx ends, then waits for running work to stop.
func (e *Executor) Run(ctx context.Context) error {
	slots := make(chan struct{}, e.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	running := map[string]bool{}
	var mu sync.Mutex
	for {
		free := e.cfg.Concurrency - len(slots)
		var work []Work
		var err error
		if free > 0 {
			work, err = e.list(ctx, e.now(), free+len(slots))
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("listing work failed", "err", err)
		}
		started := 0
		for _, w := range work {
			mu.Lock()
			busy := running[w.ID()]
			mu.Unlock()
			if busy || len(slots) == cap(slots) {
				continue
			}
			ok, err := e.store.Lease(ctx, w, e.cfg.Owner, e.now(), e.cfg.LeaseTTL)
			if err != nil || !ok {
				continue
			}
			slots <- struct{}{}
			mu.Lock()
			running[w.ID()] = true
			mu.Unlock()
			started++
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				e.runOne(ctx, w)
				mu.Lock()
				delete(running, w.ID())
				mu.Unlock()
			}()
		}
		if started > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(e.cfg.Poll):
		}
	}
}

// runOne runs w under its lease.
func (e *Executor) runOne(ctx context.Context, w Work) {
	workCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lost := make(chan struct{})
	go func() {
		t := time.NewTicker(e.cfg.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-workCtx.Done():
				return
			case <-t.C:
				ok, err := e.store.Lease(workCtx, w, e.cfg.Owner, e.now(), e.cfg.LeaseTTL)
				if err == nil && !ok {
					e.log.Warn("lease lost; stopping the work", "work", w.ID())
					close(lost)
					cancel()
					return
				}
			}
		}
	}()
	err := e.store.CatchUp(workCtx, e.cfg.CatchUpTimeout)
	if err == nil {
		err = e.do(workCtx, w)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		e.log.Error("work failed", "work", w.ID(), "err", err)
	}
	select {
	case <-lost:
		return // someone else owns it now
	default:
	}
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer rcancel()
	if err := e.store.Release(rctx, w, e.cfg.Owner); err != nil {
		e.log.Warn("releasing a lease failed", "work", w.ID(), "err", fmt.Errorf("release: %w", err))
	}
}
