package analytics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/analytics"
)

// TestThroughKafkaRunner appends the workload to real topics and lets the
// consumer-group runner drive the projector: the read model matches the
// model, the stored positions are the ends of the log, and the group's
// committed offsets (committed only after each batch was durable) reach
// the same ends. A second runner on the same database resumes from the
// stored positions and adds nothing.
func TestThroughKafkaRunner(t *testing.T) {
	brokers, topics := testenv.Kafka(t, 3)
	w := newWorkload(3, 120, 3) // 20 posts per platform
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()
	reg := events.NewCatalogRegistry()
	var recs []*kgo.Record
	for _, ev := range w.events {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		rec := &kgo.Record{Topic: topics.Name(msg.Topic), Key: []byte(msg.Key), Value: msg.Value}
		for k, v := range msg.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		recs = append(recs, rec)
	}
	require.NoError(t, producer.ProduceSync(ctx, recs...).FirstErr())

	f := newFixture(t, 0)
	names := []string{topics.Name(events.TopicPosts), topics.Name(events.TopicInvestigations)}
	adm := kadm.NewClient(producer)
	ends, err := adm.ListEndOffsets(ctx, names...)
	require.NoError(t, err)
	wantEnds := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			if wantEnds[o.Topic] == nil {
				wantEnds[o.Topic] = map[int32]int64{}
			}
			wantEnds[o.Topic][o.Partition] = o.Offset
		}
	})

	group := "test.metrics." + testenv.Suffix()
	run := func() {
		rctx, stop := context.WithCancel(ctx)
		r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: group, Topics: names, Positions: f.proj,
			MaxPollRecords: 200,
			ExtraOpts:      []kgo.Opt{kgo.FetchMaxWait(100 * time.Millisecond), kgo.FetchMinBytes(64 << 10)}},
			f.proj, logging.Discard())
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		testenv.Eventually(t, time.Minute, func() (bool, string) {
			got, err := f.proj.Positions(ctx, names)
			if err != nil {
				return false, err.Error()
			}
			return fmt.Sprint(got) == fmt.Sprint(wantEnds), fmt.Sprintf("positions %v, want %v", got, wantEnds)
		})
		testenv.Eventually(t, 30*time.Second, func() (bool, string) {
			committed, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				return false, err.Error()
			}
			got := map[string]map[int32]int64{}
			committed.Each(func(o kadm.OffsetResponse) {
				if got[o.Topic] == nil {
					got[o.Topic] = map[int32]int64{}
				}
				got[o.Topic][o.Partition] = o.At
			})
			return fmt.Sprint(got) == fmt.Sprint(wantEnds), fmt.Sprintf("committed %v, want %v", got, wantEnds)
		})
		stop()
		require.NoError(t, <-done)
	}
	run()
	require.Empty(t, f.dl.recs)
	before := f.dump(t)
	checkAgainstModel(t, analytics.NewReader(f.conn), buildModel(w.events))

	run() // resumes at the stored positions
	require.Equal(t, string(before), string(f.dump(t)))
	var raw, final uint64
	require.NoError(t, f.conn.QueryRow(ctx, "SELECT count() FROM investigations").Scan(&raw))
	require.NoError(t, f.conn.QueryRow(ctx, "SELECT count() FROM investigations FINAL").Scan(&final))
	require.Equal(t, final, raw, "nothing was applied twice")
}
