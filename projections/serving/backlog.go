package serving

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/retry"
)

// VersionRef is what a view event needs to know about a registered version:
// its post (the partition key that orders the view after the registration)
// and where its first registration not yet applied sits on the log.
type VersionRef struct {
	PostVersionID string
	PostID        string
	Platform      string
	ExternalID    string
	Partition     int32
	Offset        int64
}

// ErrBacklogBehind is returned by Backlog.Lookup when the backlog could not
// read up to the end of the log in time, so it cannot say whether a version
// was registered.
var ErrBacklogBehind = errors.New("the registration backlog has not read the log up to its end")

// BacklogConfig configures a Backlog.
type BacklogConfig struct {
	Brokers []string
	// Topic is the Kafka name of the posts topic.
	Topic    string
	Registry *events.Registry
	// Pool's search_path is the serving schema readers use (the active
	// generation): its checkpoints say what the projection has applied.
	Pool *pgxpool.Pool
	// Wait bounds how long a lookup of an unknown id waits for the backlog
	// to read the log up to the end it had when the lookup began (3 s).
	Wait time.Duration
	// EvictEvery is how often registrations the projection has applied are
	// dropped (1 s).
	EvictEvery time.Duration
	Log        *slog.Logger
}

// Backlog indexes, in memory, the version registrations on the log that the
// serving projection has not applied yet. It lets the API record a view of
// a version registered moments ago, or during a worker outage, on the
// version's post: a view keyed by its post lands in the registration's
// partition after it, so the projector always applies the registration
// first, however far it lags.
//
// It reads the posts topic from the projection's checkpoints (no consumer
// group: every API process reads every partition) and keeps only
// registrations, by post version id, until the projection has applied them.
// Its size is bounded by the projection's lag; views never add to it, so an
// id a client makes up costs a lookup, not memory. Partitions added to the
// topic after start-up are not read until the process restarts.
type Backlog struct {
	cfg   BacklogConfig
	admin *kgo.Client
	adm   *kadm.Client

	mu       sync.Mutex
	versions map[string]VersionRef
	// read is the next offset to read per partition; nil until the backlog
	// knows where it starts.
	read map[int32]int64
	// progress is closed and replaced whenever read or versions change.
	progress chan struct{}

	roundMu  sync.Mutex
	next     *endRound // joinable: its request is not sent yet
	inflight *endRound
}

// NewBacklog returns a backlog; Run fills it. It does not dial Kafka until
// used.
func NewBacklog(cfg BacklogConfig) (*Backlog, error) {
	if cfg.Wait <= 0 {
		cfg.Wait = 3 * time.Second
	}
	if cfg.EvictEvery <= 0 {
		cfg.EvictEvery = time.Second
	}
	if cfg.Pool == nil || cfg.Registry == nil || cfg.Topic == "" || cfg.Log == nil {
		return nil, errors.New("backlog: pool, registry, topic and log are required")
	}
	admin, err := kafka.NewClient(cfg.Brokers)
	if err != nil {
		return nil, err
	}
	return &Backlog{cfg: cfg, admin: admin, adm: kadm.NewClient(admin),
		versions: map[string]VersionRef{}, progress: make(chan struct{})}, nil
}

// Close releases the admin client (after Run returned).
func (b *Backlog) Close() { b.admin.Close() }

// Len is the number of versions the backlog holds.
func (b *Backlog) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.versions)
}

// Add records a registration the caller appended itself, so its own next
// lookup does not depend on reading it back.
func (b *Backlog) Add(r VersionRef) {
	r.PostVersionID = strings.ToLower(r.PostVersionID)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addLocked(r)
}

func (b *Backlog) addLocked(r VersionRef) {
	if old, ok := b.versions[r.PostVersionID]; ok && old.Partition == r.Partition && old.Offset <= r.Offset {
		return
	}
	b.versions[r.PostVersionID] = r
	b.notifyLocked()
}

func (b *Backlog) notifyLocked() {
	close(b.progress)
	b.progress = make(chan struct{})
}

// Lookup finds a registered version the projection has not applied yet.
// found is false when no registration of id was on the log when the lookup
// began and the projection has not applied one either (the caller reads the
// projection again: an entry is dropped only once the projection has it).
func (b *Backlog) Lookup(ctx context.Context, id string) (ref VersionRef, found bool, err error) {
	id = strings.ToLower(id)
	b.mu.Lock()
	ref, found = b.versions[id]
	b.mu.Unlock()
	if found {
		return ref, true, nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Wait)
	defer cancel()
	ends, err := b.endOffsets(ctx)
	if err != nil {
		return VersionRef{}, false, fmt.Errorf("%w: end offsets: %w", ErrBacklogBehind, err)
	}
	for {
		b.mu.Lock()
		ref, found = b.versions[id]
		caughtUp := b.caughtUpLocked(ends)
		progress := b.progress
		b.mu.Unlock()
		switch {
		case found:
			return ref, true, nil
		case caughtUp:
			return VersionRef{}, false, nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return VersionRef{}, false, fmt.Errorf("%w: %w", ErrBacklogBehind, ctx.Err())
		}
	}
}

func (b *Backlog) caughtUpLocked(ends map[int32]int64) bool {
	if b.read == nil {
		return false
	}
	for p, end := range ends {
		if next, ok := b.read[p]; ok && next < end {
			return false
		}
	}
	return true
}

// endRound is one ListOffsets request shared by the lookups that joined it.
type endRound struct {
	done chan struct{}
	ends map[int32]int64
	err  error
}

// endOffsets lists the topic's end offsets with a request sent after the
// call began, so every registration acknowledged before it is below them.
// While one request is in flight, every new caller joins the single next
// one: lookups of made-up ids cost at most one request per round trip to
// the broker, whatever their rate.
func (b *Backlog) endOffsets(ctx context.Context) (map[int32]int64, error) {
	b.roundMu.Lock()
	r := b.next
	if r == nil {
		r = &endRound{done: make(chan struct{})}
		b.next = r
		go b.runRound(b.inflight, r) //nolint:gosec // G118: not ctx: the round answers every caller that joins it, so one leaving must not end it; cfg.Wait bounds it
	}
	b.roundMu.Unlock()
	select {
	case <-r.done:
		return r.ends, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *Backlog) runRound(prev, r *endRound) {
	if prev != nil {
		<-prev.done
	}
	b.roundMu.Lock()
	b.next, b.inflight = nil, r
	b.roundMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Wait)
	defer cancel()
	r.ends, r.err = b.listOffsets(ctx, b.adm.ListEndOffsets)
	close(r.done)
}

func (b *Backlog) listOffsets(ctx context.Context, list func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
	listed, err := list(ctx, b.cfg.Topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	var errs []error
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s/%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		out[o.Partition] = o.Offset
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("topic %s has no partitions", b.cfg.Topic)
	}
	return out, nil
}

// checkpoints are the projection's next offsets on the posts topic.
func (b *Backlog) checkpoints(ctx context.Context) (map[int32]int64, error) {
	rows, err := b.cfg.Pool.Query(ctx, `SELECT partition, next_offset FROM projection_checkpoints
		WHERE projector = $1 AND topic = $2`, ProjectorName, b.cfg.Topic)
	if err != nil {
		return nil, fmt.Errorf("read checkpoints: %w", err)
	}
	defer rows.Close()
	out := map[int32]int64{}
	for rows.Next() {
		var p int32
		var next int64
		if err := rows.Scan(&p, &next); err != nil {
			return nil, err
		}
		out[p] = next
	}
	return out, rows.Err()
}

// start is where reading begins: each partition's checkpoint, or the start
// of the log where the projection has none.
func (b *Backlog) start(ctx context.Context) (map[int32]int64, error) {
	starts, err := b.listOffsets(ctx, b.adm.ListStartOffsets)
	if err != nil {
		return nil, fmt.Errorf("start offsets: %w", err)
	}
	cps, err := b.checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	for p, cp := range cps {
		if s, ok := starts[p]; ok && cp > s {
			starts[p] = cp
		}
	}
	return starts, nil
}

// Run reads registrations from the projection's checkpoints on until ctx
// ends, and drops those the projection has applied. Kafka or Postgres being
// away at start-up is waited out.
func (b *Backlog) Run(ctx context.Context) error {
	var start map[int32]int64
	wait := retry.Exponential{Base: 100 * time.Millisecond, Max: 5 * time.Second}
	for attempt := 1; ; attempt++ {
		var err error
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start, err = b.start(sctx)
		cancel()
		if err == nil {
			break
		}
		b.cfg.Log.Warn("registration backlog cannot start yet", "err", err)
		if retry.Sleep(ctx, wait.Delay(attempt)) != nil {
			return nil
		}
	}
	offsets := make(map[int32]kgo.Offset, len(start))
	for p, o := range start {
		offsets[p] = kgo.NewOffset().At(o)
	}
	consumer, err := kafka.NewClient(b.cfg.Brokers, append(kafka.ConsumerOpts(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{b.cfg.Topic: offsets}))...)
	if err != nil {
		return err
	}
	defer consumer.Close()
	b.mu.Lock()
	b.read = start
	b.notifyLocked()
	b.mu.Unlock()
	b.cfg.Log.Info("registration backlog reading", "topic", b.cfg.Topic, "from", start)

	evicted := make(chan struct{})
	go func() { defer close(evicted); b.evictLoop(ctx) }()
	defer func() { <-evicted }()
	for {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				b.cfg.Log.Warn("registration backlog fetch", "topic", topic, "partition", p, "err", err)
			}
		})
		fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
			if len(fp.Records) == 0 {
				return
			}
			var found []VersionRef
			for _, rec := range fp.Records {
				if r, ok := b.registration(rec); ok {
					found = append(found, r)
				}
			}
			b.mu.Lock()
			for _, r := range found {
				b.addLocked(r)
			}
			b.read[fp.Partition] = fp.Records[len(fp.Records)-1].Offset + 1
			b.notifyLocked()
			b.mu.Unlock()
		})
	}
}

// registration decodes rec if it is a version registration. A record that
// does not decode is the projector's to park; here it is skipped.
func (b *Backlog) registration(rec *kgo.Record) (VersionRef, bool) {
	if headerOf(rec, events.HeaderType) != events.TypePostVersionRegisteredV1 {
		return VersionRef{}, false
	}
	ev, err := b.cfg.Registry.Decode(rec.Value)
	if err != nil {
		return VersionRef{}, false
	}
	p, ok := ev.Payload.(*events.PostVersionRegisteredV1)
	if !ok {
		return VersionRef{}, false
	}
	return VersionRef{PostVersionID: strings.ToLower(p.PostVersionID), PostID: p.PostID, Platform: p.Platform,
		ExternalID: p.ExternalID, Partition: rec.Partition, Offset: rec.Offset}, true
}

func headerOf(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// evictLoop drops the registrations the projection has applied.
func (b *Backlog) evictLoop(ctx context.Context) {
	t := time.NewTicker(b.cfg.EvictEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, b.cfg.EvictEvery+2*time.Second)
		cps, err := b.checkpoints(cctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				b.cfg.Log.Warn("registration backlog cannot read checkpoints", "err", err)
			}
			continue
		}
		b.mu.Lock()
		for id, r := range b.versions {
			if cp, ok := cps[r.Partition]; ok && r.Offset < cp {
				delete(b.versions, id)
			}
		}
		b.mu.Unlock()
	}
}
