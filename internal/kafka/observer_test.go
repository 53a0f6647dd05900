package kafka_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/kafka"
)

// batchLog is a BatchObserver recording what it is told.
type batchLog struct {
	mu      sync.Mutex
	records map[int32]int
	groups  map[string]bool
	topics  map[string]bool
	calls   int
}

func (b *batchLog) BatchDone(group, topic string, partition int32, records int, took time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.records == nil {
		b.records, b.groups, b.topics = map[int32]int{}, map[string]bool{}, map[string]bool{}
	}
	b.records[partition] += records
	b.groups[group], b.topics[topic] = true, true
	b.calls++
	if took < 0 {
		panic("negative batch duration")
	}
}

// TestRunnerObserverSeesOnlyDurableBatches checks that the observer is told
// of every record exactly once, only after its batch succeeded: the batch
// that failed before succeeding is reported once, not per attempt.
func TestRunnerObserverSeesOnlyDurableBatches(t *testing.T) {
	t.Parallel()
	const topic, group, perPartition = "events", "g-observer", 6
	addrs := newCluster(t, 2, topic)
	produceN(t, addrs, topic, 2, perPartition)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	obs := &batchLog{}
	handled := 0
	h := &recorder{fn: func(call int, b kafka.Batch) error {
		if call == 1 {
			return errors.New("transient")
		}
		handled += len(b.Records)
		if handled == 2*perPartition {
			cancel()
		}
		return nil
	}}
	cfg := runnerConfig(addrs, group, topic)
	cfg.MaxPollRecords = 4
	cfg.Observer = obs
	require.NoError(t, run(t, ctx, cfg, h))

	require.Equal(t, map[int32]int{0: perPartition, 1: perPartition}, obs.records)
	require.Equal(t, map[string]bool{group: true}, obs.groups)
	require.Equal(t, map[string]bool{topic: true}, obs.topics)
	require.Equal(t, len(h.deliveries())-1, obs.calls, "every successful Handle is observed once; the failed attempt is not")
}
