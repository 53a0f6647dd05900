package metrics_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/metrics"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestLagCollectorOnRealKafka produces N records, commits M of them for a
// group and expects lag N-M per partition; a group that never committed
// reports nothing.
func TestLagCollectorOnRealKafka(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 2)
	topic := topics.Name(events.TopicPosts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cl, err := kafka.NewClient(brokers, append(kafka.ProducerOpts(), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	require.NoError(t, err)
	defer cl.Close()
	produced := map[int32]int{0: 10, 1: 4}
	var recs []*kgo.Record
	for p, n := range produced {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "r%d", i)})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())

	adm := kadm.NewClient(cl)
	group, idle := topics.Prefix+"projector.lagtest", topics.Prefix+"projector.never"
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer dcancel()
		_, _ = adm.DeleteGroups(dctx, group)
	})
	committed := map[int32]int64{0: 6, 1: 4}
	var offs kadm.Offsets
	for p, at := range committed {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	resp, err := adm.CommitOffsets(ctx, group, offs)
	require.NoError(t, err)
	require.NoError(t, resp.Error())

	lags, err := metrics.ConsumerLag(ctx, adm, []string{group, idle})
	require.NoError(t, err)
	require.Equal(t, []metrics.PartitionLag{
		{Group: group, Topic: topic, Partition: 0, Lag: 4},
		{Group: group, Topic: topic, Partition: 1, Lag: 0},
	}, lags)

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewLagCollector(adm, func() []string { return []string{group, idle} }, metrics.LagOptions{}, logging.Discard()))
	want := fmt.Sprintf(`
# HELP errata_consumer_lag Records not yet consumed: end offset minus committed offset, by consumer group, topic and partition.
# TYPE errata_consumer_lag gauge
errata_consumer_lag{group=%[1]q,partition="0",topic=%[2]q} 4
errata_consumer_lag{group=%[1]q,partition="1",topic=%[2]q} 0
# HELP errata_consumer_lag_up 1 when the last read of consumer lag from Kafka succeeded, 0 when it failed.
# TYPE errata_consumer_lag_up gauge
errata_consumer_lag_up 1
`, group, topic)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
}

// TestLagCollectorReportsDownWhenKafkaIsUnreachable points at a closed port.
func TestLagCollectorReportsDownWhenKafkaIsUnreachable(t *testing.T) {
	t.Parallel()
	cl, err := kafka.NewClient([]string{"127.0.0.1:1"}, kgo.RetryTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer cl.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewLagCollector(kadm.NewClient(cl), func() []string { return []string{"g"} },
		metrics.LagOptions{Timeout: 500 * time.Millisecond}, logging.Discard()))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_consumer_lag_up 1 when the last read of consumer lag from Kafka succeeded, 0 when it failed.
# TYPE errata_consumer_lag_up gauge
errata_consumer_lag_up 0
`)))
}
