package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// PartitionLag is how far one group is behind on one partition: the end
// offset minus the committed offset (or minus the log start when the group
// has not committed there yet).
type PartitionLag struct {
	Group, Topic string
	Partition    int32
	Lag          int64
}

// ConsumerLag reads the lag of groups from Kafka. Groups that never
// committed and have no members have no lag to report.
func ConsumerLag(ctx context.Context, adm *kadm.Client, groups []string) ([]PartitionLag, error) {
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		return nil, fmt.Errorf("consumer lag: %w", err)
	}
	var out []PartitionLag
	var errs []error
	for _, g := range lags.Sorted() {
		if err := g.Error(); errors.Is(err, kerr.GroupIDNotFound) {
			continue // not started yet: nothing consumed, nothing to report
		} else if err != nil {
			errs = append(errs, fmt.Errorf("group %s: %w", g.Group, err))
			continue
		}
		for _, l := range g.Lag.Sorted() {
			if l.Err != nil || l.Lag < 0 {
				continue
			}
			out = append(out, PartitionLag{Group: g.Group, Topic: l.Topic, Partition: l.Partition, Lag: l.Lag})
		}
	}
	return out, errors.Join(errs...)
}

// LagCollector exports errata_consumer_lag{group,topic,partition} computed at
// scrape time (at most once per cache period, bounded by a timeout), and
// errata_consumer_lag_up, 0 when the last read failed.
type LagCollector struct {
	groups func() []string
	read   cached[[]PartitionLag]
	log    *slog.Logger
	lag    *prometheus.Desc
	up     *prometheus.Desc
}

// LagOptions tune a LagCollector; zero values mean 5 s cache, 3 s timeout.
type LagOptions struct {
	Cache, Timeout time.Duration
	Now            func() time.Time
}

// NewLagCollector returns a collector of the lag of groups (called at every
// read, so the set may change); register it on a registry.
func NewLagCollector(adm *kadm.Client, groups func() []string, opts LagOptions, log *slog.Logger) *LagCollector {
	if opts.Cache <= 0 {
		opts.Cache = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &LagCollector{groups: groups, log: log,
		lag: prometheus.NewDesc(namespace+"_consumer_lag",
			"Records not yet consumed: end offset minus committed offset, by consumer group, topic and partition.",
			[]string{"group", "topic", "partition"}, nil),
		up: prometheus.NewDesc(namespace+"_consumer_lag_up",
			"1 when the last read of consumer lag from Kafka succeeded, 0 when it failed.", nil, nil),
	}
	c.read = cached[[]PartitionLag]{ttl: opts.Cache, timeout: opts.Timeout, now: opts.Now,
		read: func(ctx context.Context) ([]PartitionLag, error) {
			return ConsumerLag(ctx, adm, slices.Clone(c.groups()))
		}}
	return c
}

// Describe implements prometheus.Collector.
func (c *LagCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.lag; ch <- c.up }

// Collect implements prometheus.Collector.
func (c *LagCollector) Collect(ch chan<- prometheus.Metric) {
	lags, err := c.read.get()
	up := 1.0
	if err != nil {
		up = 0
		c.log.Warn("consumer lag unavailable", "err", err)
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up)
	for _, l := range lags {
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(l.Lag),
			l.Group, l.Topic, strconv.Itoa(int(l.Partition)))
	}
}
