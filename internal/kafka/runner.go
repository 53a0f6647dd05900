package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/retry"
)

// Failure classes of records that can never be processed: the value of the
// dead-letter header HeaderDLQClass and of a projection's parked rows.
const (
	// ClassDeterministic: processing the record fails the same way every
	// time (a constraint, an invalid encoding, a value too large, a
	// document the search store refuses, an error marked Permanent).
	ClassDeterministic = "deterministic"
	// ClassDecode: the record is not an event this binary can read (an
	// invalid envelope or payload, or a type or version it does not know).
	ClassDecode = "decode"
)

// permanent marks an error that retrying cannot fix.
type permanent struct {
	err   error
	class string
}

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying (a poison record, a validation
// failure) with class ClassDeterministic. Per-record handlers send such
// records to the dead-letter topic; projectors park them.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err: err, class: ClassDeterministic}
}

// Undecodable marks err as a record that cannot be decoded: Permanent, with
// class ClassDecode.
func Undecodable(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err: err, class: ClassDecode}
}

// IsPermanent reports whether err was marked with Permanent or Undecodable.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// PermanentClass is the class err was marked with (ClassDeterministic or
// ClassDecode), or "" when it is not permanent.
func PermanentClass(err error) string {
	var p permanent
	if errors.As(err, &p) {
		return p.class
	}
	return ""
}

// Batch is the records of one partition from one poll, in offset order.
type Batch struct {
	Topic     string
	Partition int32
	Records   []*kgo.Record
}

// Handler processes batches. Handle returns nil only once the batch's effects
// are durable; the runner commits offsets after that and never before.
type Handler interface {
	Handle(ctx context.Context, b Batch) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, b Batch) error

// Handle implements Handler.
func (f HandlerFunc) Handle(ctx context.Context, b Batch) error { return f(ctx, b) }

// PositionStore is implemented by handlers that store their own consumed
// positions next to their effects (exactly-once projections). The runner then
// starts every assigned partition at the stored next offset, or at the start
// of the log when none is stored, whatever Kafka's committed offset says.
type PositionStore interface {
	Positions(ctx context.Context, topics []string) (map[string]map[int32]int64, error)
}

// RunnerConfig configures a consumer-group runner.
type RunnerConfig struct {
	Brokers []string
	Group   string
	Topics  []string
	// Backoff is the first retry delay of a failing batch; it doubles up to
	// MaxBackoff, jittered. A failing batch is retried for as long as it
	// fails: the runner never skips it and never gives up on it.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// RetryHold bounds how long one poll keeps retrying a failing batch in
	// place, holding back rebalances (default 15s, well under the group's
	// rebalance timeout). Past it the runner rewinds the partition to the
	// batch, lets the group rebalance and shut down, and retries after the
	// backoff on the next poll.
	RetryHold time.Duration
	// BatchTimeout bounds one Handle call.
	BatchTimeout time.Duration
	// MaxPollRecords bounds the records taken per poll.
	MaxPollRecords int
	// InstanceID, when set, makes this member static (KIP-345).
	InstanceID string
	// SessionTimeout bounds how long a dead member keeps its partitions.
	SessionTimeout time.Duration
	// Positions, when set, makes the handler's store the source of positions.
	Positions PositionStore
	// ExtraOpts are appended to the client options (tests).
	ExtraOpts []kgo.Opt
	// Observer, when set, learns of every batch whose effects are durable
	// (throughput metrics). Nil observes nothing.
	Observer BatchObserver
}

// BatchObserver is told about each batch once its handler has made its
// effects durable, with the time the batch took, retries included.
type BatchObserver interface {
	BatchDone(group, topic string, partition int32, records int, took time.Duration)
}

func (c *RunnerConfig) defaults() {
	if c.Backoff <= 0 {
		c.Backoff = 200 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Second
	}
	if c.RetryHold <= 0 {
		c.RetryHold = 15 * time.Second
	}
	if c.BatchTimeout <= 0 {
		c.BatchTimeout = 2 * time.Minute
	}
	if c.MaxPollRecords <= 0 {
		c.MaxPollRecords = 5000
	}
}

// RunnerState is what a runner is doing.
type RunnerState string

// Runner states.
const (
	// RunnerStarting: Run has not been called yet.
	RunnerStarting RunnerState = "starting"
	// RunnerRunning: consuming, and no batch or fetch is failing.
	RunnerRunning RunnerState = "running"
	// RunnerRetrying: a batch (or fetching) keeps failing and is retried
	// with backoff; nothing after it in its partition is processed.
	RunnerRetrying RunnerState = "retrying"
	// RunnerStopped: Run returned (Err says why; nil after a shutdown).
	RunnerStopped RunnerState = "stopped"
)

// RunnerStatus is a runner's health at one moment.
type RunnerStatus struct {
	Group string
	State RunnerState
	// Since is when the state began: for RunnerRetrying the first failure
	// of the longest-failing partition, for RunnerStopped when Run returned.
	Since time.Time
	// Attempts counts that partition's failed tries so far.
	Attempts int
	// Topic and Partition locate the failing batch and Offset is its first
	// offset (Partition -1: fetching from Kafka fails).
	Topic     string
	Partition int32
	Offset    int64
	// Err is the last failure (retrying) or what stopped Run.
	Err error
	// Permanent reports a failure marked Permanent: retrying cannot fix it,
	// an operator must (see process).
	Permanent bool
}

// Runner consumes topics as a member of a consumer group and feeds each
// partition's records to a Handler. Rebalances are held back while a poll is
// being processed (BlockRebalanceOnPoll), so offsets are only ever committed
// for partitions this member still owns, and a revoked partition never has
// work in flight.
type Runner struct {
	cfg     RunnerConfig
	handler Handler
	log     *slog.Logger
	client  *kgo.Client

	mu       sync.Mutex
	started  bool
	stopped  *RunnerStatus
	failures map[partitionKey]*failure
}

type partitionKey struct {
	topic     string
	partition int32
}

// fetchKey is the failures entry of failing fetches.
var fetchKey = partitionKey{partition: -1}

// failure is one partition's current streak of failed attempts.
type failure struct {
	since    time.Time
	attempts int
	offset   int64
	err      error
	logged   time.Time
}

// retryLogEvery throttles the warnings of a long failure streak: its first
// retryLogFirst attempts are logged, then one line per interval.
const (
	retryLogFirst = 3
	retryLogEvery = 30 * time.Second
)

// NewRunner builds a runner and its Kafka client.
func NewRunner(cfg RunnerConfig, h Handler, log *slog.Logger) (*Runner, error) {
	cfg.defaults()
	if cfg.Group == "" || len(cfg.Topics) == 0 {
		return nil, errors.New("runner needs a group and topics")
	}
	r := &Runner{cfg: cfg, handler: h, log: log.With("group", cfg.Group), failures: map[partitionKey]*failure{}}
	opts := append(ConsumerOpts(),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		// Committed offsets are fetched with RequireStable: franz-go always
		// asks it for group consumers (its old option for it is a no-op).
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Info("partitions assigned", "partitions", m)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Info("partitions revoked", "partitions", m)
			r.forget(m)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Warn("partitions lost", "partitions", m)
			r.forget(m)
		}),
	)
	if cfg.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cfg.InstanceID))
	}
	if cfg.SessionTimeout > 0 {
		opts = append(opts, kgo.SessionTimeout(cfg.SessionTimeout), kgo.HeartbeatInterval(cfg.SessionTimeout/10))
	}
	if cfg.Positions != nil {
		opts = append(opts, kgo.AdjustFetchOffsetsFn(r.adjustOffsets))
	}
	opts = append(opts, cfg.ExtraOpts...)
	cl, err := NewClient(cfg.Brokers, opts...)
	if err != nil {
		return nil, err
	}
	r.client = cl
	return r, nil
}

// Group is the runner's consumer group.
func (r *Runner) Group() string { return r.cfg.Group }

// Status reports what the runner is doing: stopped (Run returned), retrying
// (the partition failing the longest, since its first failure), running, or
// starting.
func (r *Runner) Status() RunnerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped != nil {
		return *r.stopped
	}
	st := RunnerStatus{Group: r.cfg.Group, State: RunnerStarting}
	if r.started {
		st.State = RunnerRunning
	}
	// The oldest streak, ties broken by topic and partition.
	keys := make([]partitionKey, 0, len(r.failures))
	for k := range r.failures {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := r.failures[keys[i]], r.failures[keys[j]]
		if !a.since.Equal(b.since) {
			return a.since.Before(b.since)
		}
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].partition < keys[j].partition
	})
	if len(keys) > 0 {
		k, f := keys[0], r.failures[keys[0]]
		st.State, st.Since, st.Attempts, st.Err = RunnerRetrying, f.since, f.attempts, f.err
		st.Topic, st.Partition, st.Offset = k.topic, k.partition, f.offset
		st.Permanent = IsPermanent(f.err)
	}
	return st
}

// fail records a failed attempt of partition k's batch at offset and
// returns the streak.
func (r *Runner) fail(k partitionKey, offset int64, err error) failure {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[k]
	if f == nil {
		f = &failure{since: time.Now()}
		r.failures[k] = f
	}
	f.attempts++
	f.offset, f.err = offset, err
	return *f
}

// succeed ends partition k's failure streak and returns it (zero: none).
func (r *Runner) succeed(k partitionKey) failure {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[k]
	delete(r.failures, k)
	if f == nil {
		return failure{}
	}
	return *f
}

// shouldLog reports whether attempt of k's streak is logged (throttled).
func (r *Runner) shouldLog(k partitionKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.failures[k]
	if f == nil {
		return false
	}
	if f.attempts <= retryLogFirst || time.Since(f.logged) >= retryLogEvery {
		f.logged = time.Now()
		return true
	}
	return false
}

// forget drops the failure streaks of partitions this member lost.
func (r *Runner) forget(m map[string][]int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for topic, parts := range m {
		for _, p := range parts {
			delete(r.failures, partitionKey{topic, p})
		}
	}
}

func (r *Runner) markStarted() {
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
}

func (r *Runner) markStopped(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = &RunnerStatus{Group: r.cfg.Group, State: RunnerStopped, Since: time.Now(), Err: err, Partition: -1}
}

// adjustOffsets replaces Kafka's committed offsets with the handler's stored
// positions, the authority for exactly-once projections.
func (r *Runner) adjustOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	topics := make([]string, 0, len(offsets))
	for t := range offsets {
		topics = append(topics, t)
	}
	stored, err := r.cfg.Positions.Positions(ctx, topics)
	if err != nil {
		r.log.Error("load stored positions", "err", err)
		return nil, fmt.Errorf("load stored positions: %w", err)
	}
	for topic, parts := range offsets {
		for p := range parts {
			if next, ok := stored[topic][p]; ok {
				parts[p] = kgo.NewOffset().At(next).WithEpoch(-1)
			} else {
				parts[p] = kgo.NewOffset().AtStart()
			}
			r.log.Debug("start position", "topic", topic, "partition", p, "offset", parts[p])
		}
	}
	return offsets, nil
}

// Run consumes until ctx is done or fetching fails fatally (lost data,
// missing permissions). A failing batch never makes it return: it is
// retried with capped backoff for as long as it fails (see process), and
// Status reports it meanwhile. The batch being processed when ctx is
// cancelled is finished (bounded by BatchTimeout).
func (r *Runner) Run(ctx context.Context) (err error) {
	defer func() { r.markStopped(err) }()
	defer r.client.Close()
	r.markStarted()
	for {
		fetches := r.client.PollRecords(ctx, r.cfg.MaxPollRecords)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			r.client.AllowRebalance()
			return nil
		}
		var fatal, transient error
		fetches.EachError(func(topic string, p int32, err error) {
			switch {
			case errors.Is(err, context.Canceled):
			case isFatalFetchError(err):
				fatal = errors.Join(fatal, fmt.Errorf("fetch %s/%d: %w", topic, p, err))
			default:
				transient = errors.Join(transient, fmt.Errorf("fetch %s/%d: %w", topic, p, err))
			}
		})
		if fatal != nil {
			r.client.AllowRebalance()
			r.log.Error("fetch failed for good; stopping", "err", fatal)
			return fatal
		}
		// The broker is unreachable or the group is re-forming: the client
		// retries on its own; wait and poll again. Records the same poll
		// returned for other partitions are processed first: the client has
		// moved past them, so dropping them would skip them for good.
		var wait time.Duration
		if transient != nil {
			f := r.fail(fetchKey, -1, transient)
			wait = backoff(r.cfg.Backoff, min(r.cfg.MaxBackoff, 5*time.Second), f.attempts)
			if r.shouldLog(fetchKey) {
				r.log.Warn("fetch failed; retrying", "attempt", f.attempts, "failing_since", f.since, "delay", wait, "err", transient)
			}
		} else {
			r.succeed(fetchKey)
		}
		var (
			stopping bool
			held     bool
			done     []*kgo.Record
			rewind   = map[string]map[int32]kgo.EpochOffset{}
		)
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			if stopping || len(p.Records) == 0 {
				return
			}
			// Once a batch of this poll is held, the others get one try
			// each: the poll must end soon so the group can rebalance.
			hold := r.cfg.RetryHold
			if held {
				hold = 0
			}
			b := Batch{Topic: p.Topic, Partition: p.Partition, Records: p.Records}
			took, delay, err := r.process(ctx, b, hold)
			switch {
			case err == nil:
				done = append(done, p.Records[len(p.Records)-1])
				if r.cfg.Observer != nil {
					r.cfg.Observer.BatchDone(r.cfg.Group, p.Topic, p.Partition, len(p.Records), took)
				}
			case errors.Is(err, errStopping):
				stopping = true
			default:
				// Still failing: consume the batch again on a later poll.
				held = true
				wait = max(wait, delay)
				if rewind[p.Topic] == nil {
					rewind[p.Topic] = map[int32]kgo.EpochOffset{}
				}
				rewind[p.Topic][p.Partition] = kgo.EpochOffset{Epoch: -1, Offset: p.Records[0].Offset}
			}
		})
		// Effects of the processed partitions are durable; only now may their
		// positions move, in one commit for the whole poll. A failed commit
		// only means redelivery, which handlers tolerate.
		if len(done) > 0 {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if err := r.client.CommitRecords(cctx, done...); err != nil {
				r.log.Warn("commit offsets", "err", err)
			}
			cancel()
		}
		// While rebalances are still blocked (this member owns these
		// partitions), move the failing ones back to their batch so the
		// next poll delivers it again; nothing of them is committed.
		if held && !stopping {
			r.client.SetOffsets(rewind)
		}
		r.client.AllowRebalance()
		if stopping {
			return nil
		}
		if wait > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(wait):
			}
		}
	}
}

// isFatalFetchError reports errors that waiting cannot fix and that must not
// be skipped: lost data, an offset outside the log (with infinite retention
// only loss explains it), and missing permissions.
func isFatalFetchError(err error) bool {
	var loss *kgo.ErrDataLoss
	var tooLarge *kgo.ErrDecompressTooLarge
	return errors.As(err, &loss) || errors.As(err, &tooLarge) ||
		errors.Is(err, kerr.OffsetOutOfRange) ||
		errors.Is(err, kerr.TopicAuthorizationFailed) ||
		errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.SaslAuthenticationFailed)
}

// errStopping means shutdown interrupted a batch's retries; it is not
// committed and will be redelivered.
var errStopping = errors.New("stopping")

// errHeld means a batch still fails after the poll's retry hold.
var errHeld = errors.New("batch still failing; retried on a later poll")

// stopKey carries the runner's shutdown signal into Handle, whose context
// deliberately outlives a cancel (see process): handlers that wait between
// their own retries (EachRecord) stop waiting when it closes.
type stopKey struct{}

// stopSignal is closed when the runner calling Handle shuts down (nil
// outside a runner).
func stopSignal(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return ch
}

// process handles one batch, retrying it with capped exponential backoff
// while it fails, for up to hold; it returns how long the batch took since
// its first failed attempt, or errHeld with the delay before the next try,
// or errStopping when ctx ends first.
//
// Every failure is retried, whatever its kind: a transient one (a lost
// connection, a restarting store, a timeout) clears by itself, and skipping
// a batch would lose its effects for good. Handlers deal with what can never
// succeed themselves (projectors park such events, EachRecord dead-letters
// them), so a batch-level Permanent error reaching the runner is a bug or
// a misconfiguration: it is retried too (a fix and a restart resume at the
// same batch), logged at ERROR, and Status reports it as Permanent so
// readiness fails at once.
func (r *Runner) process(ctx context.Context, b Batch, hold time.Duration) (time.Duration, time.Duration, error) {
	k := partitionKey{b.Topic, b.Partition}
	first := b.Records[0].Offset
	start := time.Now()
	stop := ctx.Done()
	for {
		// The batch runs to completion even during shutdown: a half-applied
		// batch is rolled back anyway, but finishing saves redoing it.
		hctx, cancel := context.WithTimeout(context.WithValue(context.WithoutCancel(ctx), stopKey{}, stop), r.cfg.BatchTimeout)
		err := r.handler.Handle(hctx, b)
		cancel()
		if err == nil {
			streak := r.succeed(k)
			took := time.Since(start)
			if streak.attempts > 0 {
				took = time.Since(streak.since)
				r.log.Info("batch succeeded after retries", "topic", b.Topic, "partition", b.Partition,
					"first_offset", first, "failed_attempts", streak.attempts, "failing_for", took.Round(time.Millisecond))
			}
			return took, 0, nil
		}
		if errors.Is(err, errStopping) {
			return 0, 0, errStopping
		}
		streak := r.fail(k, first, err)
		delay := backoff(r.cfg.Backoff, r.cfg.MaxBackoff, streak.attempts)
		if r.shouldLog(k) {
			level, msg := slog.LevelWarn, "batch failed; retrying"
			if IsPermanent(err) {
				level, msg = slog.LevelError, "batch failed permanently; retrying until an operator fixes it"
			}
			r.log.Log(ctx, level, msg, "topic", b.Topic, "partition", b.Partition,
				"first_offset", first, "last_offset", b.Records[len(b.Records)-1].Offset,
				"attempt", streak.attempts, "failing_since", streak.since, "delay", delay, "err", err)
		}
		if time.Since(start)+delay > hold {
			return 0, delay, errHeld
		}
		select {
		case <-ctx.Done():
			return 0, 0, errStopping
		case <-time.After(delay):
		}
	}
}

// jitter spreads the retry delays of the runner and of EachRecord by ±10%,
// so partitions that fail together do not retry in step.
const jitter = 0.1

// backoff is the delay before retry n (1-based): base doubling up to
// ceiling, jittered.
func backoff(base, ceiling time.Duration, n int) time.Duration {
	return retry.Exponential{Base: base, Max: ceiling, Jitter: jitter}.Delay(n)
}
