package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving"
)

// cachedProjection is a serving projection with a listening status cache.
type cachedProjection struct {
	*projection
	cache *serving.StatusCache
	next  int64 // the next offset of partition 0
}

func newCachedProjection(t *testing.T, cfg serving.StatusCacheConfig) *cachedProjection {
	t.Helper()
	p := newServing(t, 2)
	cache := serving.NewStatusCache(p.pool, serving.NewReader(p.pool), cfg, logging.Discard())
	t.Cleanup(cache.Start(context.Background()))
	testenv.Eventually(t, 30*time.Second, func() (bool, string) { return cache.Listening(), "the cache is not listening" })
	return &cachedProjection{projection: p, cache: cache}
}

// apply projects payloads as one batch, then syncs the cache (what the
// API's read-your-writes wait does).
func (c *cachedProjection) apply(t *testing.T, ps ...events.Payload) {
	t.Helper()
	ts := make([]timed, len(ps))
	for i, p := range ps {
		ts[i] = timed{p, base.Add(time.Duration(c.next+int64(i)) * time.Minute)}
	}
	c.handle(t, records(t, 0, c.next, ts...)...)
	c.next += int64(len(ps))
	require.NoError(t, c.cache.Sync(context.Background()))
}

func (c *cachedProjection) status(t *testing.T, id string) serving.VersionStatus {
	t.Helper()
	v, err := c.cache.VersionStatusByID(context.Background(), id)
	require.NoError(t, err)
	return v
}

// TestStatusCacheHitsAndPostInvalidation: a found status is served from
// memory; a registration invalidates its post's statuses only; a version
// not found is never cached, so its registration is visible at once.
func TestStatusCacheHitsAndPostInvalidation(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{})
	a := registration(events.PlatformX, "100", "The first version.")
	other := registration(events.PlatformX, "200", "Another post.")
	c.apply(t, a, other)

	late := registration(events.PlatformX, "300", "Registered later.")
	_, err := c.cache.VersionStatusByID(context.Background(), late.PostVersionID)
	require.ErrorIs(t, err, serving.ErrNotFound)

	require.Equal(t, a.PostVersionID, c.status(t, a.PostVersionID).ID)
	require.Equal(t, other.PostVersionID, c.status(t, other.PostVersionID).ID)
	require.Equal(t, serving.StatusCacheStats{Misses: 3, Invalidations: 1}, c.cache.Stats())
	c.status(t, a.PostVersionID)
	c.status(t, other.PostVersionID)
	require.Equal(t, uint64(2), c.cache.Stats().Hits)

	// A second version of a's post, and the late post: a's post and the
	// late version are read again, the other post is still a hit.
	b := registration(events.PlatformX, "100", "The second version.")
	c.apply(t, b, late)
	require.Equal(t, late.PostVersionID, c.status(t, late.PostVersionID).ID)
	before := c.cache.Stats()
	require.Equal(t, a.PostVersionID, c.status(t, a.PostVersionID).ID)
	require.Equal(t, other.PostVersionID, c.status(t, other.PostVersionID).ID)
	after := c.cache.Stats()
	require.Equal(t, before.Misses+1, after.Misses, "a's post was invalidated")
	require.Equal(t, before.Hits+1, after.Hits, "the other post was not")

	// Views change no status and invalidate nothing.
	c.apply(t, viewOf(a, "v1", "r1"))
	before = c.cache.Stats()
	c.status(t, a.PostVersionID)
	require.Equal(t, before.Hits+1, c.cache.Stats().Hits)
}

// TestStatusCacheSeesEveryOtherEvent: an event other than a registration
// or a view drops every cached status, and its effect is read right after
// the projector's commit and a Sync.
func TestStatusCacheSeesEveryOtherEvent(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{})
	a := registration(events.PlatformX, "100", "A version under investigation.")
	other := registration(events.PlatformX, "200", "Another post.")
	c.apply(t, a, other)
	for _, step := range []struct {
		name  string
		event events.Payload
		want  string
	}{
		{"requested", investigationOf(a), events.StatusPending},
		{"completed", completedWith(a, "boiling"), events.StatusComplete},
	} {
		c.status(t, a.PostVersionID)
		c.status(t, other.PostVersionID)
		c.apply(t, step.event)
		before := c.cache.Stats()
		require.Equal(t, step.want, c.status(t, a.PostVersionID).InvestigationStatus, step.name)
		c.status(t, other.PostVersionID)
		require.Equal(t, before.Misses+2, c.cache.Stats().Misses, "%s: everything was flushed", step.name)
	}
	require.Equal(t, []string{"boiling"}, claimSummaries(c.status(t, a.PostVersionID).Claims))
}

// TestStatusCacheStaleStore: a read that began before an invalidation does
// not store what it read, for a post's invalidation and for a full one.
func TestStatusCacheStaleStore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		between func(c *cachedProjection, a *events.PostVersionRegisteredV1) events.Payload
	}{
		{"registration of the post", func(_ *cachedProjection, a *events.PostVersionRegisteredV1) events.Payload {
			return registration(a.Platform, a.ExternalID, "Another version of the post.")
		}},
		{"investigation", func(_ *cachedProjection, a *events.PostVersionRegisteredV1) events.Payload {
			return investigationOf(a)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCachedProjection(t, serving.StatusCacheConfig{})
			a := registration(events.PlatformX, "100", "The version read.")
			c.apply(t, a)
			ev := tc.between(c, a)
			c.cache.SetBeforeStore(func(string) {
				c.cache.SetBeforeStore(nil)
				c.apply(t, ev)
			})
			c.status(t, a.PostVersionID) // read before ev, stored after: refused
			before := c.cache.Stats()
			c.status(t, a.PostVersionID)
			require.Equal(t, before.Misses+1, c.cache.Stats().Misses, "the stale read was stored")
			c.status(t, a.PostVersionID)
			require.Equal(t, before.Hits+1, c.cache.Stats().Hits, "a fresh read is stored")
		})
	}
}

// TestStatusCacheListenerLoss: while its connection is gone the cache
// serves nothing stale (a Sync after a commit sees it), then listens and
// caches again.
func TestStatusCacheListenerLoss(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{})
	a := registration(events.PlatformX, "100", "A version.")
	c.apply(t, a)
	c.status(t, a.PostVersionID)
	c.status(t, a.PostVersionID)
	require.Equal(t, uint64(1), c.cache.Stats().Hits)

	var killed bool
	require.NoError(t, c.pool.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) = 1 FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN "errata_status_%'`).Scan(&killed))
	require.True(t, killed)
	c.apply(t, investigationOf(a))
	require.Equal(t, events.StatusPending, c.status(t, a.PostVersionID).InvestigationStatus)

	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		return c.cache.Listening() && c.cache.Stats().Reconnects >= 1, "the cache did not listen again"
	})
	c.apply(t, completedWith(a, "boiling"))
	require.Equal(t, events.StatusComplete, c.status(t, a.PostVersionID).InvestigationStatus)
	before := c.cache.Stats()
	require.Equal(t, events.StatusComplete, c.status(t, a.PostVersionID).InvestigationStatus)
	require.Equal(t, before.Hits+1, c.cache.Stats().Hits)
}

// TestStatusCacheBounded: the cache holds at most MaxEntries statuses.
func TestStatusCacheBounded(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{MaxEntries: 3})
	var regs []events.Payload
	for _, ext := range []string{"1", "2", "3", "4", "5"} {
		regs = append(regs, registration(events.PlatformX, ext, "Post "+ext+"."))
	}
	c.apply(t, regs...)
	for _, r := range regs {
		id := r.(*events.PostVersionRegisteredV1).PostVersionID
		require.Equal(t, id, c.status(t, id).ID)
		require.LessOrEqual(t, c.cache.Len(), 3)
	}
	require.Equal(t, 3, c.cache.Len())
}

// TestStatusCacheReset: a Reset (the pool moved to another generation)
// drops every status and serves nothing until the cache listens again.
func TestStatusCacheReset(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{})
	a := registration(events.PlatformX, "100", "A version.")
	c.apply(t, a)
	c.status(t, a.PostVersionID)
	require.Equal(t, 1, c.cache.Len())
	c.cache.Reset()
	require.False(t, c.cache.Listening())
	require.Equal(t, 0, c.cache.Len())
	testenv.Eventually(t, 30*time.Second, func() (bool, string) { return c.cache.Listening(), "the cache did not listen again" })
	c.apply(t, investigationOf(a))
	require.Equal(t, events.StatusPending, c.status(t, a.PostVersionID).InvestigationStatus)
	require.Equal(t, events.StatusPending, c.status(t, a.PostVersionID).InvestigationStatus)
	require.Equal(t, 1, c.cache.Len())
}

// TestStatusCacheVersionKnown: a registered version is known (read once,
// then from memory), an unregistered one is not, and is never remembered
// as unknown.
func TestStatusCacheVersionKnown(t *testing.T) {
	t.Parallel()
	c := newCachedProjection(t, serving.StatusCacheConfig{})
	a := registration(events.PlatformX, "100", "A version.")
	c.apply(t, a)
	late := registration(events.PlatformX, "300", "Registered later.")
	ctx := context.Background()
	for _, tc := range []struct {
		id    string
		known bool
		stats serving.StatusCacheStats
	}{
		{a.PostVersionID, true, serving.StatusCacheStats{Misses: 1, Invalidations: 1}},
		{a.PostVersionID, true, serving.StatusCacheStats{Hits: 1, Misses: 1, Invalidations: 1}},
		{late.PostVersionID, false, serving.StatusCacheStats{Hits: 1, Misses: 2, Invalidations: 1}},
	} {
		known, err := c.cache.VersionKnown(ctx, tc.id)
		require.NoError(t, err, tc.id)
		require.Equal(t, tc.known, known, tc.id)
		require.Equal(t, tc.stats, c.cache.Stats(), tc.id)
	}
	c.apply(t, late)
	known, err := c.cache.VersionKnown(ctx, late.PostVersionID)
	require.NoError(t, err)
	require.True(t, known, "known once registered")
}
