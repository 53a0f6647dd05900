package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Consumer measures projector and worker-group throughput. It implements
// internal/kafka's BatchObserver, so it only counts batches whose effects
// are durable.
type Consumer struct {
	records *prometheus.CounterVec
	batches *prometheus.HistogramVec
}

// NewConsumer registers the throughput metrics on reg.
func NewConsumer(reg prometheus.Registerer) *Consumer {
	c := &Consumer{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "consumer", Name: "records_total",
			Help: "Records whose effects are durable, by consumer group and topic.",
		}, []string{"group", "topic"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "consumer", Name: "batch_duration_seconds",
			Help:    "Time to make one partition's batch durable, retries included, by consumer group and topic.",
			Buckets: durationBuckets,
		}, []string{"group", "topic"}),
	}
	reg.MustRegister(c.records, c.batches)
	return c
}

// BatchDone implements kafka.BatchObserver.
func (c *Consumer) BatchDone(group, topic string, _ int32, records int, took time.Duration) {
	c.records.WithLabelValues(group, topic).Add(float64(records))
	c.batches.WithLabelValues(group, topic).Observe(took.Seconds())
}
