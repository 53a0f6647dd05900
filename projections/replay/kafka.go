package replay

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// KafkaLog is the Log of a Kafka cluster.
type KafkaLog struct {
	brokers []string
	admin   *kadm.Client
	log     *slog.Logger
}

// NewKafkaLog reads the log from brokers and its end offsets through admin.
func NewKafkaLog(brokers []string, admin *kadm.Client, log *slog.Logger) *KafkaLog {
	return &KafkaLog{brokers: brokers, admin: admin, log: log}
}

// EndOffsets implements Log.
func (k *KafkaLog) EndOffsets(ctx context.Context, topics []string) (Offsets, error) {
	return EndOffsets(ctx, k.admin, topics)
}

// CatchUp implements Log, reporting progress about twice a second. A
// ParallelProjector's partitions are applied at once.
func (k *KafkaLog) CatchUp(ctx context.Context, until Offsets, p Projector, progress func(Progress)) (int64, error) {
	partitions := 1
	if pp, ok := p.(ParallelProjector); ok {
		partitions = pp.Partitions()
	}
	return CatchUp(ctx, Config{Brokers: k.brokers, Until: until, Handler: p, Positions: p, Partitions: partitions,
		OnProgress: progress, ProgressEvery: 500 * time.Millisecond}, k.log)
}

// ParallelProjector is a Projector that may apply several partitions at
// once (Config.Partitions): its Handle is safe for concurrent calls on
// different partitions, and their effects commute (shared rows are written
// by order-independent upserts; a deadlock between two partitions'
// transactions is transient, and the batch is retried).
type ParallelProjector interface {
	Projector
	Partitions() int
}

// parallel marks a Projector as a ParallelProjector of n partitions.
type parallel struct {
	Projector
	n int
}

// Partitions implements ParallelProjector.
func (p parallel) Partitions() int { return p.n }
