package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/targets"
)

// migrateMetrics creates the analysts' metrics projection's first
// database in ClickHouse if missing and migrates it.
func migrateMetrics(ctx context.Context, e *env) error {
	conn, err := e.analyticsStore().Conn(ctx, 1)
	if err != nil {
		return err
	}
	defer conn.Close()
	return analytics.Migrate(ctx, conn, e.log)
}

// metricsReader opens the metrics reader on the projection's active
// generation and moves it when `errata replay` switches generations
// (publicMetrics resolves through its Incidence method). The caller calls
// the release function.
func (e *env) metricsReader(ctx context.Context) (*analytics.Reader, func(), error) {
	control, err := e.controlPool(ctx)
	if err != nil {
		return nil, nil, err
	}
	store := targets.New(control)
	active, err := store.Active(ctx, analytics.ProjectorName)
	if err != nil {
		control.Close()
		return nil, nil, err
	}
	conn, err := e.metricsReadConn(active.Generation)
	if err != nil {
		control.Close()
		return nil, nil, err
	}
	r := analytics.NewReader(conn)
	watchCtx, stop := context.WithCancel(ctx)
	gen := active.Generation // read and written by the watch goroutine only
	done := make(chan struct{})
	go func() {
		defer close(done)
		store.Watch(watchCtx, analytics.ProjectorName, targetPollInterval, e.log, func(t targets.Target) {
			if t.Generation == gen {
				return
			}
			next, err := e.metricsReadConn(t.Generation)
			if err != nil {
				e.log.Warn("metrics projection switched but its database cannot be opened; readers stay", "generation", t.Generation, "err", err)
				return
			}
			old := r.Swap(next)
			gen = t.Generation
			e.log.Info("projection switched: readers move", "projection", analytics.ProjectorName, "generation", t.Generation)
			// Queries in flight on the old database finish first.
			time.AfterFunc(30*time.Second, func() { _ = old.Close() })
		})
	}()
	return r, func() {
		stop()
		<-done // no swap can happen after this
		control.Close()
		_ = r.Swap(nil).Close()
	}, nil
}

// metricsReadConn connects to generation gen's database for reading. It
// neither creates the database nor dials (clickhouse-go dials on first
// use): `errata serve` starts while ClickHouse is down (readiness reports
// it) and reads once it is up.
func (e *env) metricsReadConn(gen int64) (driver.Conn, error) {
	opts, err := analytics.Options(e.cfg.ClickHouseURL, targets.Name(e.cfg.ClickHouseDatabase, gen))
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return conn, nil
}
