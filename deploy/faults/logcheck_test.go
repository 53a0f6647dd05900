//go:build linux

package faults_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// logged is one record of the log: where it is and, for an event, what.
type logged struct {
	Topic     string
	Partition int32
	Offset    int64
	Event     events.Event
	Err       error // the record is not a decodable event
}

// logReader reads every record of the run's topics from offset 0, for as
// long as the test runs, through broker failures.
type logReader struct {
	cl       *kgo.Client
	registry *events.Registry
	topics   []string

	mu      sync.Mutex
	records []logged
	next    map[string]map[int32]int64 // topic, partition: next offset to read
	done    chan struct{}
}

func newLogReader(brokers []string, topics []string) (*logReader, error) {
	opts := append(kafka.ConsumerOpts(), kgo.ConsumeTopics(topics...))
	cl, err := kafka.NewClient(brokers, opts...)
	if err != nil {
		return nil, err
	}
	return &logReader{cl: cl, registry: events.NewCatalogRegistry(), topics: topics,
		next: map[string]map[int32]int64{}, done: make(chan struct{})}, nil
}

func (r *logReader) run(ctx context.Context) {
	defer close(r.done)
	for ctx.Err() == nil {
		fs := r.cl.PollFetches(ctx)
		var batch []logged
		fs.EachRecord(func(rec *kgo.Record) {
			l := logged{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset}
			if !strings.HasSuffix(rec.Topic, string(events.TopicDeadLetter)) {
				l.Event, l.Err = r.registry.Decode(rec.Value)
			}
			batch = append(batch, l)
		})
		r.mu.Lock()
		for _, l := range batch {
			r.records = append(r.records, l)
			if r.next[l.Topic] == nil {
				r.next[l.Topic] = map[int32]int64{}
			}
			r.next[l.Topic][l.Partition] = l.Offset + 1
		}
		r.mu.Unlock()
	}
}

func (r *logReader) close() {
	r.cl.Close()
}

// snapshot returns the records read so far.
func (r *logReader) snapshot() []logged {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logged(nil), r.records...)
}

// caughtUp reports whether the reader has read up to the end offsets.
func (r *logReader) caughtUp(ends kadm.ListedOffsets) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	missing := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		if n := o.Offset - r.next[o.Topic][o.Partition]; n > 0 {
			missing += n
		}
	})
	return missing == 0, fmt.Sprintf("%d records not read yet", missing)
}

// waitCaughtUp waits until the reader has read everything in the log now.
func (r *logReader) waitCaughtUp(ctx context.Context, adm *kadm.Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, r.topics...)
	if err != nil {
		return err
	}
	if err := ends.Error(); err != nil {
		return err
	}
	for {
		ok, msg := r.caughtUp(ends)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("log reader: %s", msg)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// groupLag sums the lag of every consumer group of the run (by prefix).
func groupLag(ctx context.Context, adm *kadm.Client, prefix string) (map[string]int64, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	var groups []string
	for _, g := range listed.Groups() {
		if strings.HasPrefix(g, prefix) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no consumer group named %s*", prefix)
	}
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, g := range lags.Sorted() {
		if err := g.Error(); err != nil {
			return nil, fmt.Errorf("group %s: %w", g.Group, err)
		}
		out[g.Group] = 0
		for _, l := range g.Lag.Sorted() {
			if l.Err != nil {
				return nil, fmt.Errorf("group %s %s/%d: %w", g.Group, l.Topic, l.Partition, l.Err)
			}
			out[g.Group] += l.Lag
		}
	}
	return out, nil
}
