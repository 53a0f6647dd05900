package serving

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/retry"
)

// The status cache keeps found VersionStatusByID answers in the API's
// process and drops them when the serving projector commits anything that
// may change them. The projector says so in the transaction that changes
// the rows (a NOTIFY, delivered only at commit and in commit order), on a
// channel of its schema: statusChannelSQL, the same expression on both
// sides, so the many schemas of one database (tests, benches, rebuilt
// generations) never hear each other.
//
// A payload is statusFlushAll (everything may have changed: investigations,
// claims, configurations, appeals, analyses, keys), or statusPostsPrefix and
// the comma-separated ids of the posts whose rows changed (a batch of
// registrations only). Views change no status and notify nothing.
const (
	statusChannelSQL  = `'errata_status_' || left(md5(current_schema()), 24)`
	statusFlushAll    = "*"
	statusPostsPrefix = "p:"
	statusSyncPrefix  = "sync:"
	// maxStatusPayload keeps a payload under NOTIFY's 8000-byte limit.
	maxStatusPayload = 7000
)

// statusInvalidation is the payload announcing a batch's effect on
// statuses: "" when it changes none (views only), the posts when every
// other event is a registration, else statusFlushAll.
func statusInvalidation(postIDs []string, others bool) string {
	if others {
		return statusFlushAll
	}
	if len(postIDs) == 0 {
		return ""
	}
	seen := make(map[string]struct{}, len(postIDs))
	var b strings.Builder
	b.WriteString(statusPostsPrefix)
	for _, id := range postIDs {
		if _, ok := seen[id]; ok {
			continue
		}
		seen[id] = struct{}{}
		if len(seen) > 1 {
			b.WriteByte(',')
		}
		b.WriteString(id)
		if b.Len() > maxStatusPayload {
			return statusFlushAll
		}
	}
	return b.String()
}

// queueStatusInvalidation queues the NOTIFY of a batch's invalidation in
// the batch's transaction.
func queueStatusInvalidation(b *pgx.Batch, payload string) {
	if payload != "" {
		b.Queue(`SELECT pg_notify(`+statusChannelSQL+`, $1)`, payload)
	}
}

// StatusCacheConfig bounds a StatusCache.
type StatusCacheConfig struct {
	// MaxEntries bounds the cached statuses (0: DefaultStatusCacheEntries);
	// over it, arbitrary entries are evicted.
	MaxEntries int
	// MaxPosts bounds the posts whose last invalidation is remembered (0:
	// 4 × MaxEntries); over it, they are forgotten and everything flushed.
	MaxPosts int
	// SyncTimeout bounds Sync's round trip through the listener (0: 2 s).
	SyncTimeout time.Duration
}

// DefaultStatusCacheEntries is StatusCacheConfig.MaxEntries' default.
const DefaultStatusCacheEntries = 50_000

// StatusCacheStats are a StatusCache's counters since it was built.
type StatusCacheStats struct {
	Hits, Misses, Invalidations, Reconnects uint64
}

type statusEntry struct {
	postID string
	status VersionStatus
}

// statusReader is what the cache reads on a miss (Reader).
type statusReader interface {
	VersionStatusByID(ctx context.Context, id string) (VersionStatus, error)
}

// StatusCache answers VersionStatusByID from memory when it can, kept
// current by the serving projector's commits (Run listens for them). It
// caches only versions it found, so a registration is visible at once, and
// it serves and stores nothing unless it is listening.
//
// A read that began before an invalidation never stores its answer after
// it: every invalidation takes the next sequence number; a full flush sets
// flushSeq to it, a post's invalidation postSeq[post]; a miss remembers the
// sequence when it began and stores only if neither is later.
type StatusCache struct {
	pool   *pgxpool.Pool
	reader statusReader
	cfg    StatusCacheConfig
	log    *slog.Logger

	hits, misses, invalidations, reconnects atomic.Uint64

	mu        sync.RWMutex
	listening bool
	seq       uint64
	flushSeq  uint64
	postSeq   map[string]uint64
	entries   map[string]statusEntry
	byPost    map[string][]string
	syncs     map[string]chan struct{}
	// restart ends the current listening connection (Reset); epoch counts
	// Resets, so a connection begun before one never starts serving.
	restart context.CancelFunc
	epoch   uint64

	// beforeStore, when set (tests), runs between a miss's read and its store.
	beforeStore func(id string)
}

// NewStatusCache returns a cache reading misses through reader and
// listening on a connection of pool (whose schema is the projection's).
func NewStatusCache(pool *pgxpool.Pool, reader *Reader, cfg StatusCacheConfig, log *slog.Logger) *StatusCache {
	return newStatusCache(pool, reader, cfg, log)
}

func newStatusCache(pool *pgxpool.Pool, reader statusReader, cfg StatusCacheConfig, log *slog.Logger) *StatusCache {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultStatusCacheEntries
	}
	if cfg.MaxPosts <= 0 {
		cfg.MaxPosts = 4 * cfg.MaxEntries
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = 2 * time.Second
	}
	return &StatusCache{pool: pool, reader: reader, cfg: cfg, log: log, postSeq: map[string]uint64{},
		entries: map[string]statusEntry{}, byPost: map[string][]string{}, syncs: map[string]chan struct{}{}}
}

// VersionStatusByID is Reader.VersionStatusByID, from memory when the
// version's status is cached and nothing changed it since.
func (c *StatusCache) VersionStatusByID(ctx context.Context, id string) (VersionStatus, error) {
	c.mu.RLock()
	listening := c.listening
	e, ok := c.entries[id]
	start := c.seq
	c.mu.RUnlock()
	if !listening {
		return c.reader.VersionStatusByID(ctx, id)
	}
	if ok {
		c.hits.Add(1)
		return e.status, nil
	}
	c.misses.Add(1)
	v, err := c.reader.VersionStatusByID(ctx, id)
	if err != nil {
		return v, err
	}
	if c.beforeStore != nil {
		c.beforeStore(id)
	}
	c.store(id, v, start)
	return v, nil
}

// VersionKnown is Reader.VersionKnown through the cache (api
// WithStatusCache): a version it holds is known, since a registered
// version stays registered; otherwise the version's status is read, and
// cached for the view that follows the registration.
func (c *StatusCache) VersionKnown(ctx context.Context, id string) (bool, error) {
	_, err := c.VersionStatusByID(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// store caches v, read from a start at sequence start, unless the cache
// stopped listening or v's post was invalidated since.
func (c *StatusCache) store(id string, v VersionStatus, start uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.listening || c.flushSeq > start || c.postSeq[v.PostID] > start {
		return
	}
	if _, ok := c.entries[id]; ok {
		return
	}
	for len(c.entries) >= c.cfg.MaxEntries {
		for old := range c.entries {
			c.evictLocked(old)
			break
		}
	}
	c.entries[id] = statusEntry{postID: v.PostID, status: v}
	c.byPost[v.PostID] = append(c.byPost[v.PostID], id)
}

func (c *StatusCache) evictLocked(id string) {
	e, ok := c.entries[id]
	if !ok {
		return
	}
	delete(c.entries, id)
	ids := c.byPost[e.postID]
	for i, other := range ids {
		if other == id {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(c.byPost, e.postID)
	} else {
		c.byPost[e.postID] = ids
	}
}

// flushLocked drops every entry and keeps any read in flight from storing.
func (c *StatusCache) flushLocked() {
	c.seq++
	c.flushSeq = c.seq
	clear(c.entries)
	clear(c.byPost)
	clear(c.postSeq)
}

// invalidate applies one notification's payload.
func (c *StatusCache) invalidate(payload string) {
	if token, ok := strings.CutPrefix(payload, statusSyncPrefix); ok {
		c.mu.Lock()
		if ch, ok := c.syncs[token]; ok {
			delete(c.syncs, token)
			close(ch)
		}
		c.mu.Unlock()
		return
	}
	c.invalidations.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	posts, ok := strings.CutPrefix(payload, statusPostsPrefix)
	if !ok || len(c.postSeq) > c.cfg.MaxPosts { // "*", or anything unknown
		c.flushLocked()
		return
	}
	c.seq++
	for post := range strings.SplitSeq(posts, ",") {
		c.postSeq[post] = c.seq
		for _, id := range c.byPost[post] {
			delete(c.entries, id)
		}
		delete(c.byPost, post)
	}
}

// startServing starts serving (after a successful LISTEN, with a flush)
// unless a Reset came after the connection was begun at epoch.
func (c *StatusCache) startServing(epoch uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return false
	}
	c.listening = true
	c.flushLocked()
	return true
}

// stopServing stops serving, flushes, and releases every Sync, as nothing
// is cached.
func (c *StatusCache) stopServing() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listening = false
	c.flushLocked()
	for token, ch := range c.syncs {
		delete(c.syncs, token)
		close(ch)
	}
}

// Reset flushes the cache and makes Run listen again on a new connection
// of the pool: the pool moved to another schema (a generation switch).
func (c *StatusCache) Reset() {
	c.mu.Lock()
	c.epoch++
	restart := c.restart
	c.mu.Unlock()
	c.stopServing()
	if restart != nil {
		restart()
	}
}

// Stats returns the cache's counters.
func (c *StatusCache) Stats() StatusCacheStats {
	return StatusCacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(),
		Invalidations: c.invalidations.Load(), Reconnects: c.reconnects.Load()}
}

// Sync returns once every serving commit that preceded it has reached the
// cache: it notifies a token on the projector's channel and waits for the
// listener to hear it (notifications arrive in commit order). A caller
// that saw the projector's checkpoint pass its write then reads its write
// through the cache. When the cache is not listening it returns at once
// (nothing is cached); when the round trip fails, the cache restarts
// (serving nothing until it listens again) and Sync returns nil.
func (c *StatusCache) Sync(ctx context.Context) error {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return fmt.Errorf("sync token: %w", err)
	}
	token := hex.EncodeToString(raw[:])
	done := make(chan struct{})
	c.mu.Lock()
	if !c.listening {
		c.mu.Unlock()
		return nil
	}
	c.syncs[token] = done
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.syncs, token)
		c.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(ctx, c.cfg.SyncTimeout)
	defer cancel()
	if _, err := c.pool.Exec(ctx, `SELECT pg_notify(`+statusChannelSQL+`, $1)`, statusSyncPrefix+token); err != nil {
		c.log.Warn("status cache sync failed; restarting it", "err", err)
		c.Reset()
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		c.log.Warn("status cache sync timed out; restarting it", "err", ctx.Err())
		c.Reset()
		return nil
	}
}

// Run keeps the cache listening until ctx ends: it takes a connection of
// the pool for itself, LISTENs on the projector's channel, then serves
// (after a flush) and applies every notification. When the connection
// fails it stops serving and listens again with capped backoff.
func (c *StatusCache) Run(ctx context.Context) {
	failures := 0
	for ctx.Err() == nil {
		lctx, stop := context.WithCancel(ctx)
		c.mu.Lock()
		c.restart = stop
		epoch := c.epoch
		c.mu.Unlock()
		listened, err := c.listen(lctx, epoch)
		stop()
		c.stopServing()
		if ctx.Err() != nil {
			return
		}
		if listened {
			failures = 0
		}
		failures++
		delay := retry.Exponential{Base: 50 * time.Millisecond, Max: 5 * time.Second, Jitter: 0.1}.Delay(failures)
		c.reconnects.Add(1)
		c.log.Debug("status cache listener lost; listening again", "delay", delay, "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// Start runs the cache (Run) in a goroutine until stop, which returns once
// it has ended.
func (c *StatusCache) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

var channelName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// listen runs one listening connection, begun at epoch, until it fails or
// ctx ends; listened tells whether it got as far as serving.
func (c *StatusCache) listen(ctx context.Context, epoch uint64) (listened bool, err error) {
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("status cache connection: %w", err)
	}
	conn := pc.Hijack()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	var channel string
	if err := conn.QueryRow(ctx, `SELECT `+statusChannelSQL).Scan(&channel); err != nil {
		return false, fmt.Errorf("status cache channel: %w", err)
	}
	if !channelName.MatchString(channel) {
		return false, fmt.Errorf("status cache channel %q: unexpected name", channel)
	}
	if _, err := conn.Exec(ctx, `LISTEN "`+channel+`"`); err != nil {
		return false, fmt.Errorf("status cache listen: %w", err)
	}
	if !c.startServing(epoch) {
		return false, errors.New("status cache reset while connecting")
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return true, nil
			}
			return true, fmt.Errorf("status cache notification: %w", err)
		}
		c.invalidate(n.Payload)
	}
}
