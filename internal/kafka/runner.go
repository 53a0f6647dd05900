package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ErrRetriesExhausted means a batch kept failing: the runner stops rather than
// skip it, and a restarted process resumes at the same position.
var ErrRetriesExhausted = errors.New("retries exhausted")

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as not worth retrying (a poison record, a validation
// failure). Per-record handlers send such records to the dead-letter topic.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
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
	// MaxAttempts bounds how often one batch is tried before the runner stops.
	MaxAttempts int
	// Backoff is the first retry delay; it doubles up to MaxBackoff, jittered.
	Backoff    time.Duration
	MaxBackoff time.Duration
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
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.Backoff <= 0 {
		c.Backoff = 200 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Second
	}
	if c.BatchTimeout <= 0 {
		c.BatchTimeout = 2 * time.Minute
	}
	if c.MaxPollRecords <= 0 {
		c.MaxPollRecords = 5000
	}
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
}

// NewRunner builds a runner and its Kafka client.
func NewRunner(cfg RunnerConfig, h Handler, log *slog.Logger) (*Runner, error) {
	cfg.defaults()
	if cfg.Group == "" || len(cfg.Topics) == 0 {
		return nil, errors.New("runner needs a group and topics")
	}
	r := &Runner{cfg: cfg, handler: h, log: log.With("group", cfg.Group)}
	opts := append(ConsumerOpts(),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.RequireStableFetchOffsets(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Info("partitions assigned", "partitions", m)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Info("partitions revoked", "partitions", m)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.log.Warn("partitions lost", "partitions", m)
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

// Run consumes until ctx is done or a batch fails for good. The batch being
// processed when ctx is cancelled is finished (bounded by BatchTimeout).
func (r *Runner) Run(ctx context.Context) error {
	defer r.client.Close()
	fetchFailures := 0
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
			return fatal
		}
		// The broker is unreachable or the group is re-forming: the client
		// retries on its own; wait and poll again. Records the same poll
		// returned for other partitions are processed first: the client has
		// moved past them, so dropping them would skip them for good.
		var retryDelay time.Duration
		if transient != nil {
			fetchFailures++
			retryDelay = Backoff(r.cfg.Backoff, 5*time.Second, fetchFailures)
			r.log.Warn("fetch failed; retrying", "attempt", fetchFailures, "delay", retryDelay, "err", transient)
		} else {
			fetchFailures = 0
		}
		var runErr error
		var done []*kgo.Record
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			if runErr != nil || len(p.Records) == 0 {
				return
			}
			start := time.Now()
			runErr = r.process(ctx, Batch{Topic: p.Topic, Partition: p.Partition, Records: p.Records})
			if runErr == nil {
				done = append(done, p.Records[len(p.Records)-1])
				if r.cfg.Observer != nil {
					r.cfg.Observer.BatchDone(r.cfg.Group, p.Topic, p.Partition, len(p.Records), time.Since(start))
				}
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
		r.client.AllowRebalance()
		if errors.Is(runErr, errStopping) {
			return nil
		}
		if runErr != nil {
			return runErr
		}
		if transient != nil {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retryDelay):
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

// process handles one batch with bounded retries.
func (r *Runner) process(ctx context.Context, b Batch) error {
	log := r.log.With("topic", b.Topic, "partition", b.Partition,
		"first_offset", b.Records[0].Offset, "last_offset", b.Records[len(b.Records)-1].Offset)
	var err error
	for attempt := 1; attempt <= r.cfg.MaxAttempts; attempt++ {
		// The batch runs to completion even during shutdown: a half-applied
		// batch is rolled back anyway, but finishing saves redoing it.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.BatchTimeout)
		err = r.handler.Handle(hctx, b)
		cancel()
		if err == nil {
			return nil
		}
		if IsPermanent(err) || attempt == r.cfg.MaxAttempts {
			break
		}
		delay := Backoff(r.cfg.Backoff, r.cfg.MaxBackoff, attempt)
		log.Warn("batch failed; retrying", "attempt", attempt, "delay", delay, "err", err)
		select {
		case <-ctx.Done():
			return errStopping
		case <-time.After(delay):
		}
	}
	log.Error("batch failed; stopping without committing", "err", err)
	return fmt.Errorf("%s/%d at offset %d: %w: %w", b.Topic, b.Partition, b.Records[0].Offset, ErrRetriesExhausted, err)
}

// Backoff returns the jittered exponential delay before retry n (1-based).
func Backoff(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	jitter := time.Duration(rand.Int64N(int64(d)/5 + 1))
	return d - d/10 + jitter
}
