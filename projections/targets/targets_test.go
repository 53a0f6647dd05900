package targets_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/targets"
)

func TestNames(t *testing.T) {
	tests := []struct {
		base string
		gen  int64
		name string
	}{
		{"serving", 1, "serving"},
		{"serving", 2, "serving_g2"},
		{"errata", 12, "errata_g12"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.name, targets.Name(tc.base, tc.gen))
		g, ok := targets.GenerationOf(tc.base, tc.name)
		require.True(t, ok)
		require.Equal(t, tc.gen, g)
	}
	for _, bad := range []string{"serving_g", "serving_g1", "serving_gx", "serving_verify", "servings", "other"} {
		_, ok := targets.GenerationOf("serving", bad)
		require.False(t, ok, bad)
	}
	require.Equal(t, int64(4), targets.Next(targets.Target{Generation: 2}, []int64{1, 2, 3}))
	require.Equal(t, int64(2), targets.Next(targets.Target{Generation: 1}, nil))
}

func TestSwitchIsCompareAndSet(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := targets.New(pool)

	// Before the control table exists, every projection is on generation 1.
	got, err := s.Active(ctx, "serving")
	require.NoError(t, err)
	require.Equal(t, int64(1), got.Generation)
	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx), "idempotent")

	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	sw, err := s.Switch(ctx, "serving", 1, 2, at)
	require.NoError(t, err)
	require.Equal(t, targets.Target{Projection: "serving", Generation: 2, Previous: 1, SwitchedAt: at}, sw)
	_, err = s.Switch(ctx, "serving", 1, 3, at)
	require.True(t, errors.Is(err, targets.ErrConflict), "a rebuild against a stale generation must not switch: %v", err)
	got, err = s.Active(ctx, "serving")
	require.NoError(t, err)
	require.Equal(t, int64(2), got.Generation)
	require.Equal(t, int64(1), got.Previous)
	got, err = s.Active(ctx, "search")
	require.NoError(t, err)
	require.Equal(t, int64(1), got.Generation, "projections switch independently")

	seen := make(chan int64, 4)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(wctx, "serving", 20*time.Millisecond, logging.Discard(), func(t targets.Target) { seen <- t.Generation })
	require.Equal(t, int64(2), <-seen)
	_, err = s.Switch(ctx, "serving", 2, 3, at.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(3), <-seen)
}

// TestWatchEndsWithItsPool: a watch whose readers closed their pool ends
// instead of logging a failed read every interval for as long as the
// process lives (errata bench opens and closes API stacks in one process).
func TestWatchEndsWithItsPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	s := targets.New(pool)
	seen := make(chan targets.Target, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, "audit", 10*time.Millisecond, logging.Discard(), func(tg targets.Target) { seen <- tg })
	}()
	require.Equal(t, int64(1), (<-seen).Generation)
	pool.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the watch outlived its pool")
	}
}
