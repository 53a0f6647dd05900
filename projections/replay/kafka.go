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

// CatchUp implements Log, reporting progress about twice a second.
func (k *KafkaLog) CatchUp(ctx context.Context, until Offsets, p Projector, progress func(Progress)) (int64, error) {
	return CatchUp(ctx, Config{Brokers: k.brokers, Until: until, Handler: p, Positions: p,
		OnProgress: progress, ProgressEvery: 500 * time.Millisecond}, k.log)
}
