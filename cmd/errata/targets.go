package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/retry"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/targets"
)

// targetPollInterval is how often readers and projectors look for a switch.
const targetPollInterval = 2 * time.Second

// migrateTargets creates the control schema of active generations.
func migrateTargets(ctx context.Context, e *env) error {
	pool, err := e.controlPool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	return targets.New(pool).Migrate(ctx)
}

// controlPool opens a small pool for the control schema (names are qualified).
func (e *env) controlPool(ctx context.Context) (*pgxpool.Pool, error) {
	cfg, err := postgres.PoolConfig(e.cfg.DatabaseURL, targets.Schema)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	return pool, nil
}

// followingServingPool opens a pool on the active generation of the serving
// projection that follows `errata replay` switches (see followingPool).
func (e *env) followingServingPool(ctx context.Context) (*pgxpool.Pool, error) {
	return e.followingPool(ctx, serving.ProjectorName, e.cfg.ServingSchema, nil)
}

// followingPool opens a pool on the active generation of the Postgres
// projection named projection (generation 1 in schema base) and moves it
// when `errata replay` switches generations: the pool's connections take
// their search_path from the active target when they connect, and a switch
// resets the pool, so every request after the switch reads the new schema
// while requests in flight finish on the old. onSwitch, when set, runs
// after each such reset (what the process keeps of the old schema is
// dropped there: the API's status cache).
func (e *env) followingPool(ctx context.Context, projection, base string, onSwitch func()) (*pgxpool.Pool, error) {
	cfg, err := postgres.PoolConfig(e.cfg.DatabaseURL, base)
	if err != nil {
		return nil, err
	}
	var schema atomic.Value
	schema.Store(base)
	cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error {
		cc.RuntimeParams["search_path"] = schema.Load().(string)
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres pool: %w", err)
	}
	store := targets.New(pool)
	t, err := store.Active(ctx, projection)
	if err != nil {
		pool.Close()
		return nil, err
	}
	schema.Store(targets.Name(base, t.Generation))
	pool.Reset()
	go store.Watch(ctx, projection, targetPollInterval, e.log, func(t targets.Target) {
		name := targets.Name(base, t.Generation)
		if name == schema.Load().(string) {
			return
		}
		e.log.Info("projection switched: readers move", "projection", projection, "generation", t.Generation, "schema", name)
		schema.Store(name)
		pool.Reset()
		if onSwitch != nil {
			onSwitch()
		}
	})
	return pool, nil
}

// Restart backoff of a projector that stopped or could not be started.
const (
	restartBackoff    = time.Second
	restartMaxBackoff = time.Minute
)

// superviseProjector runs the projector name on its active generation and,
// when a replay switches the projection, stops it and starts it again on
// the new generation (whose stored positions continue where the replay
// stopped).
//
// A projector's failure never ends the worker: a runner retries failing
// batches itself (see kafka.Runner), and when one stops for good (a fatal
// fetch error) or cannot be started (a store down at start-up), the
// supervisor reports it to health (the worker's /readyz then fails, naming
// it) and starts it again with capped exponential backoff. It returns only
// when ctx ends (nil) or the control schema cannot even be configured.
func superviseProjector(ctx context.Context, e *env, name string, start projectorFactory, health *workerHealth) error {
	control, err := e.controlPool(ctx)
	if err != nil {
		return err
	}
	defer control.Close()
	store := targets.New(control)
	check := projectorCheckName(name)
	health.watch(check)
	failures := 0
	fail := func(err error) bool {
		failures++
		health.stopped(check, err)
		delay := retry.Exponential{Base: restartBackoff, Max: restartMaxBackoff, Jitter: 0.1}.Delay(failures)
		e.log.Error("projector down; restarting", "projector", name, "attempt", failures, "delay", delay, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(delay):
			return true
		}
	}
	for ctx.Err() == nil {
		t, err := store.Active(ctx, name)
		if err != nil {
			if !fail(err) {
				return nil
			}
			continue
		}
		runCtx, stop := context.WithCancel(ctx)
		r, closeFn, err := start(runCtx, t.Generation)
		if err != nil {
			stop()
			if !fail(fmt.Errorf("start generation %d: %w", t.Generation, err)) {
				return nil
			}
			continue
		}
		e.log.Info("projector running", "projector", name, "generation", t.Generation)
		health.running(check, r)
		started := time.Now()
		done := make(chan error, 1)
		go func() { done <- r.Run(runCtx) }()
		switched := make(chan int64, 1)
		go store.Watch(runCtx, name, targetPollInterval, e.log, func(nt targets.Target) {
			if nt.Generation != t.Generation {
				select {
				case switched <- nt.Generation:
				default:
				}
			}
		})
		select {
		case err := <-done:
			stop()
			closeFn()
			if ctx.Err() != nil {
				return nil
			}
			if err == nil {
				err = errors.New("its runner returned")
			}
			if time.Since(started) > restartMaxBackoff {
				failures = 0 // it ran well for a while: a fresh streak
			}
			if !fail(fmt.Errorf("generation %d: %w", t.Generation, err)) {
				return nil
			}
		case gen := <-switched:
			e.log.Info("projection switched: projector moves to the new generation", "projector", name, "from", t.Generation, "to", gen)
			stop()
			// A stopped runner returns nil; an error here is a failure that
			// raced the switch. The new generation starts either way.
			if err := <-done; err != nil {
				e.log.Warn("projector failed while switching generations", "projector", name, "generation", t.Generation, "err", err)
			}
			closeFn()
		}
	}
	return nil
}
