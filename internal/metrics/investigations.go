package metrics

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// InvestigationStates are the states every scrape reports, 0 when none.
var InvestigationStates = []string{"PENDING", "PROCESSING", "COMPLETE", "FAILED"}

// InvestigationsCollector exports errata_investigations{state} read at scrape
// time (cached for a few seconds, bounded by a timeout) from the serving
// projection.
type InvestigationsCollector struct {
	read cached[map[string]int64]
	log  *slog.Logger
	desc *prometheus.Desc
	up   *prometheus.Desc
}

// NewInvestigationsCollector reads counts by state through count (e.g.
// serving.Reader.InvestigationsByStatus); opts as for the lag collector.
func NewInvestigationsCollector(count func(ctx context.Context) (map[string]int64, error), opts LagOptions, log *slog.Logger) *InvestigationsCollector {
	if opts.Cache <= 0 {
		opts.Cache = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &InvestigationsCollector{log: log,
		read: cached[map[string]int64]{ttl: opts.Cache, timeout: opts.Timeout, now: opts.Now, read: count},
		desc: prometheus.NewDesc(namespace+"_investigations", "Investigations by state in the serving projection.",
			[]string{"state"}, nil),
		up: prometheus.NewDesc(namespace+"_investigations_up",
			"1 when the last read of investigations by state succeeded, 0 when it failed.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *InvestigationsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; ch <- c.up }

// Collect implements prometheus.Collector.
func (c *InvestigationsCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.read.get()
	if err != nil {
		c.log.Warn("investigations by state unavailable", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	all := map[string]int64{}
	for _, s := range InvestigationStates {
		all[s] = 0
	}
	maps.Copy(all, counts)
	for _, s := range slices.Sorted(maps.Keys(all)) {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(all[s]), s)
	}
}
