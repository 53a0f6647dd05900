package replay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// now stamps every switch of these tests.
var now = time.Date(2026, 11, 5, 12, 0, 0, 0, time.UTC)

// bundle is one test's rebuilder over a log and one projection "p" that
// reads topics "a" and "b"; its generation 1 is live and has applied the
// whole log as it was at setup.
type bundle struct {
	j       *journal
	log     *memLog
	store   *memStore
	targets *memTargets
	meter   *meter
	r       *replay.Rebuilder
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{j: &journal{}, log: newMemLog(), meter: &meter{}}
	b.log.add("a", 0, "a0", "a1", "a2")
	b.log.add("a", 1, "a3")
	b.log.add("b", 0, "b0", "b1")
	b.store = newMemStore(b.j, "a", "b")
	b.targets = &memTargets{active: map[string]int64{}, j: b.j}
	b.r = replay.NewRebuilder(replay.RebuilderConfig{
		Projections: map[string]replay.Rebuildable{"p": b.store},
		Targets:     b.targets,
		Log:         b.log,
		Meter:       b.meter.start,
		Now:         func() time.Time { return now },
		Logger:      logging.Discard(),
	})
	b.live(t)
	return b
}

// live makes generation 1 apply the log up to its current end, as the
// live projector would, and clears the journal.
func (b *bundle) live(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	p, release, err := b.store.Open(ctx, 1)
	require.NoError(t, err)
	until, err := b.log.EndOffsets(ctx, b.store.Topics())
	require.NoError(t, err)
	_, err = b.log.CatchUp(ctx, until, p, func(replay.Progress) {})
	require.NoError(t, err)
	release()
	b.log.runs = 0
	b.j.entries = nil
}

func TestReplayBuildsSwitchesAndKeepsTheOldGeneration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.log.add("b", 1, "b2") // the live copy has not seen it yet

	plan, err := b.r.Plan(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, replay.Plan{Projection: "p", Live: 1, Generation: 2}, plan)
	res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{})
	require.NoError(t, err)
	require.Equal(t, replay.ReplayResult{Plan: plan, Events: 7, Switched: true}, res)
	require.Equal(t, []string{"open g2", "release g2", "activate g2", "switch p g1->g2 at 2026-11-05T12:00:00Z"}, b.j.all())
	require.Equal(t, []string{"a0", "a1", "a2", "a3"}, b.store.rows(2, "a"))
	require.Equal(t, []string{"b0", "b1", "b2"}, b.store.rows(2, "b"))
	at, err := b.store.Positions(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, replay.Offsets{"a": {0: 3, 1: 1}, "b": {0: 2, 1: 1}}, at)
	active, err := b.targets.Active(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, int64(2), active.Generation)
	gens, err := b.store.Generations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, gens, "generation 1 is kept")
	require.Equal(t, []string{"p g2 done"}, b.meter.labels)
	require.Equal(t, replay.Progress{Done: 7}, b.meter.last[0])
}

func TestReplayWithoutSwitch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	plan, err := b.r.Plan(ctx, "p")
	require.NoError(t, err)
	res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{NoSwitch: true, DropOld: true})
	require.NoError(t, err)
	require.Equal(t, replay.ReplayResult{Plan: plan, Events: 6}, res)
	require.Equal(t, []string{"open g2", "release g2"}, b.j.all(), "neither activated, switched nor dropped")
	active, err := b.targets.Active(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, int64(1), active.Generation)
}

func TestReplayDropsTheOldGeneration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	plan, err := b.r.Plan(ctx, "p")
	require.NoError(t, err)
	res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{DropOld: true})
	require.NoError(t, err)
	require.Equal(t, replay.ReplayResult{Plan: plan, Events: 6, Switched: true, Dropped: true}, res)
	require.Equal(t, []string{"open g2", "release g2", "activate g2", "switch p g1->g2 at 2026-11-05T12:00:00Z", "drop g1"}, b.j.all())
	gens, err := b.store.Generations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{2}, gens)
}

// A rebuild never reuses the stores of an abandoned one, nor the live one.
func TestPlanBuildsAboveEveryExistingGeneration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		active   int64
		existing []int64
		want     int64
	}{
		{"first rebuild", 1, []int64{1}, 2},
		{"leftover of an abandoned rebuild", 1, []int64{1, 3}, 4},
		{"after switches and drops", 5, []int64{5}, 6},
		{"nothing built yet", 1, nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.store.gens = map[int64]*memGen{}
			for _, g := range tc.existing {
				b.store.gens[g] = &memGen{rows: map[string][]string{}, at: replay.Offsets{}}
			}
			b.targets.active["p"] = tc.active
			plan, err := b.r.Plan(ctx, "p")
			require.NoError(t, err)
			require.Equal(t, replay.Plan{Projection: "p", Live: tc.active, Generation: tc.want}, plan)
		})
	}
}

// While the log grows, a build runs further passes to the new end, until
// one applies fewer than 500 records or five have run.
func TestReplayCatchesUpWithAGrowingLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name   string
		before int   // records appended before the build
		grow   []int // records appended after each pass
		passes int
		events int64
	}{
		{"a quiet log: one pass", 0, nil, 1, 6},
		{"a long first pass, then quiet", 600, nil, 2, 606},
		{"growing, then calm", 500, []int{600, 499}, 3, 506 + 600 + 499},
		{"never calm: five passes at most", 500, []int{500, 500, 500, 500, 500, 500}, 5, 506 + 4*500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.log.addN("a", 1, tc.before, "before")
			b.log.afterRun = func(n int) {
				if n <= len(tc.grow) {
					b.log.addN("a", 1, tc.grow[n-1], "more")
				}
			}
			plan, err := b.r.Plan(ctx, "p")
			require.NoError(t, err)
			res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{NoSwitch: true})
			require.NoError(t, err)
			require.Equal(t, tc.events, res.Events)
			require.Equal(t, tc.passes, b.log.runs)
			require.Len(t, b.meter.labels, tc.passes)
			for _, l := range b.meter.labels {
				require.Equal(t, "p g2 done", l)
			}
			require.Len(t, b.store.rows(2, "a"), int(tc.events)-2)
		})
	}
}

func TestReplayFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	boom := errors.New("boom")

	t.Run("the build fails", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.store.failHandle = boom
		plan, err := b.r.Plan(ctx, "p")
		require.NoError(t, err)
		res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{DropOld: true})
		require.EqualError(t, err, "p: boom")
		require.False(t, res.Switched)
		require.Equal(t, []string{"open g2", "release g2"}, b.j.all())
	})
	t.Run("the stores cannot be opened", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.store.failOpen = boom
		plan, err := b.r.Plan(ctx, "p")
		require.NoError(t, err)
		_, err = b.r.Replay(ctx, plan, replay.ReplayOptions{})
		require.EqualError(t, err, "p: boom")
		require.Empty(t, b.j.all())
	})
	t.Run("activation fails: no switch", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.store.failActive = boom
		plan, err := b.r.Plan(ctx, "p")
		require.NoError(t, err)
		res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{})
		require.EqualError(t, err, "p: activate generation 2: boom")
		require.Equal(t, replay.ReplayResult{Plan: plan, Events: 6}, res)
		require.Equal(t, []string{"open g2", "release g2", "activate g2"}, b.j.all())
		active, err := b.targets.Active(ctx, "p")
		require.NoError(t, err)
		require.Equal(t, int64(1), active.Generation)
	})
	t.Run("another switch happened meanwhile", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		plan, err := b.r.Plan(ctx, "p")
		require.NoError(t, err)
		b.targets.active["p"] = 7
		res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{DropOld: true})
		require.ErrorIs(t, err, targets.ErrConflict)
		require.False(t, res.Switched)
		require.NotContains(t, b.j.all(), "drop g1")
	})
	t.Run("the old generation cannot be dropped", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.store.failDrop = boom
		plan, err := b.r.Plan(ctx, "p")
		require.NoError(t, err)
		res, err := b.r.Replay(ctx, plan, replay.ReplayOptions{DropOld: true})
		require.EqualError(t, err, "p: drop generation 1: boom")
		require.Equal(t, replay.ReplayResult{Plan: plan, Events: 6, Switched: true}, res, "the switch happened")
	})
	t.Run("an unknown projection", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.r.Plan(ctx, "q")
		require.EqualError(t, err, `unknown projection "q" (known: p)`)
		_, err = b.r.Replay(ctx, replay.Plan{Projection: "q", Live: 1, Generation: 2}, replay.ReplayOptions{})
		require.EqualError(t, err, `unknown projection "q" (known: p)`)
	})
}

// Verify rebuilds exactly to the positions the live dump reflects: records
// the live copy has not applied yet (a later offset, a partition it has not
// touched) stay out of the rebuild, and the copies are identical.
func TestVerifyIdentical(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.log.add("a", 0, "a4")
	b.log.add("b", 1, "b2")

	res, err := b.r.Verify(ctx, "p", replay.VerifyOptions{MaxDiffs: 20})
	require.NoError(t, err)
	require.True(t, res.Identical)
	require.Equal(t, "p", res.Projection)
	require.Equal(t, int64(1), res.Live)
	require.Equal(t, int64(2), res.Generation)
	require.Equal(t, int64(6), res.Events)
	require.Empty(t, res.Diffs)
	require.Len(t, res.Tables, 2)
	for i, table := range []string{"a", "b"} {
		c := res.Tables[i]
		require.Equal(t, table, c.Table)
		require.True(t, c.Identical(), table)
		require.Equal(t, c.TableSum, *c.Rebuilt)
	}
	require.Equal(t, int64(4), res.Tables[0].Rows)
	require.Equal(t, []string{"open g2", "release g2", "drop g2"}, b.j.all(), "the scratch generation is dropped")
	require.Equal(t, []string{"p verify g2 done"}, b.meter.labels)
}

// A store that cannot name its dump's positions is rebuilt to the end of
// the log (exact while the system is quiet).
func TestVerifyToTheEndWhenTheStoreCannotSay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.store.noPositions = true
	res, err := b.r.Verify(context.Background(), "p", replay.VerifyOptions{MaxDiffs: 20})
	require.NoError(t, err)
	require.True(t, res.Identical)
	require.Equal(t, int64(6), res.Events)
}

func TestVerifyKeepsTheScratchGeneration(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	res, err := b.r.Verify(ctx, "p", replay.VerifyOptions{Keep: true, MaxDiffs: 20})
	require.NoError(t, err)
	require.True(t, res.Identical)
	gens, err := b.store.Generations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, gens)
	require.Equal(t, []string{"a0", "a1", "a2", "a3"}, b.store.rows(2, "a"))
}

// A live copy that differs from the log: a lost row and a made-up one in
// table a, a table the rebuild does not have.
func TestVerifyReportsDifferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tamper := func(b *bundle) {
		live := b.store.gens[1]
		live.rows["a"] = []string{"a0", "a2", "a3", "zz", "a0"}
		live.rows["c"] = []string{"c0"}
	}
	b := setup(t)
	tamper(b)
	res, err := b.r.Verify(ctx, "p", replay.VerifyOptions{MaxDiffs: 20})
	require.NoError(t, err)
	require.False(t, res.Identical)
	require.Len(t, res.Tables, 3)
	a, bt, c := res.Tables[0], res.Tables[1], res.Tables[2]
	require.Equal(t, "a", a.Table)
	require.False(t, a.Identical())
	require.Equal(t, int64(5), a.Rows)
	require.Equal(t, int64(4), a.Rebuilt.Rows)
	require.NotEqual(t, a.SHA256, a.Rebuilt.SHA256)
	require.True(t, bt.Identical())
	require.Equal(t, "c", c.Table)
	require.Nil(t, c.Rebuilt, "missing in the rebuild")
	require.False(t, c.Identical())
	// Repeated lines count: the second a0 is the live copy's alone.
	require.Equal(t, []replay.DiffLine{
		{Live: true, Line: "a: a0"}, {Live: true, Line: "a: zz"}, {Live: true, Line: "c: c0"},
		{Live: false, Line: "a: a1"},
	}, res.Diffs)
	require.Equal(t, []string{"open g2", "release g2", "drop g2"}, b.j.all())

	b = setup(t)
	tamper(b)
	res, err = b.r.Verify(ctx, "p", replay.VerifyOptions{MaxDiffs: 2})
	require.NoError(t, err)
	require.Equal(t, []replay.DiffLine{{Live: true, Line: "a: a0"}, {Live: true, Line: "a: zz"}}, res.Diffs)
}

// A rebuild with a table the live copy lacks differs too.
func TestVerifyExtraTableInTheRebuild(t *testing.T) {
	t.Parallel()
	b := setup(t)
	delete(b.store.gens[1].rows, "b")
	res, err := b.r.Verify(context.Background(), "p", replay.VerifyOptions{MaxDiffs: 20})
	require.NoError(t, err)
	require.False(t, res.Identical)
	require.Len(t, res.Tables, 1)
	require.True(t, res.Tables[0].Identical())
	require.Equal(t, []replay.DiffLine{{Live: false, Line: "b: b0"}, {Live: false, Line: "b: b1"}}, res.Diffs)
}

func TestVerifyFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.store.failHandle = errors.New("boom")
	_, err := b.r.Verify(ctx, "p", replay.VerifyOptions{})
	require.EqualError(t, err, "boom")
	require.Equal(t, []string{"open g2", "release g2", "drop g2"}, b.j.all(), "the scratch generation is dropped")

	b = setup(t)
	b.targets.active["p"] = 3 // no such generation: its dump fails
	_, err = b.r.Verify(ctx, "p", replay.VerifyOptions{})
	require.EqualError(t, err, "dump live generation 3: generation 3 does not exist")
	require.Empty(t, b.j.all())
}

func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.log.add("a", 1, "a4", "a5")
	st, err := b.r.Status(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, replay.Status{Projection: "p", Active: 1, Generations: []int64{1}, Applied: 6, Total: 8}, st)
	require.Equal(t, int64(2), st.Lag())

	// Positions past the end (a log truncated under a stale copy) count as
	// the end, never as negative lag.
	b.store.gens[1].at["b"][0] = 9
	st, err = b.r.Status(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, int64(6), st.Applied)

	b.store.gens = map[int64]*memGen{}
	st, err = b.r.Status(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, replay.Status{Projection: "p", Active: 1}, st, "nothing built yet")
}

func TestDrop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	b.store.gens[2] = &memGen{rows: map[string][]string{}, at: replay.Offsets{}}

	err := b.r.Drop(ctx, "p", 1)
	require.ErrorIs(t, err, replay.ErrActive)
	require.EqualError(t, err, "generation 1 of p is active; switch with errata replay first")
	require.EqualError(t, b.r.Drop(ctx, "q", 2), `unknown projection "q" (known: p)`)
	require.Empty(t, b.j.all())

	require.NoError(t, b.r.Drop(ctx, "p", 2))
	require.Equal(t, []string{"drop g2"}, b.j.all())
	gens, err := b.store.Generations(ctx)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, gens)
}

func TestSelectAndNames(t *testing.T) {
	t.Parallel()
	known := []string{"audit", "metrics", "search", "serving"}
	got, err := replay.Select("all", known)
	require.NoError(t, err)
	require.Equal(t, known, got)
	got[0] = "changed"
	require.Equal(t, "audit", known[0], "Select returns a copy")
	got, err = replay.Select("search", known)
	require.NoError(t, err)
	require.Equal(t, []string{"search"}, got)
	_, err = replay.Select("index", known)
	require.EqualError(t, err, `unknown projection "index" (known: audit, metrics, search, serving, all)`)

	r := replay.NewRebuilder(replay.RebuilderConfig{Projections: map[string]replay.Rebuildable{
		"serving": nil, "audit": nil, "search": nil, "metrics": nil}})
	require.Equal(t, known, r.Names())
}
