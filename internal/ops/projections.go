package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ProjectorGroup is a projector as Kafka knows it: its consumer group and
// the topics it reads.
type ProjectorGroup struct {
	Name   string
	Group  string
	Topics []string
}

// ProjectorState is one projector's health as /readyz and /metrics report it.
type ProjectorState struct {
	Projector string `json:"projector"`
	// Running: its consumer group has at least one member.
	Running bool `json:"running"`
	// Lag counts the records of its topics it has not consumed: end offsets
	// minus committed offsets, or minus the log start where it never
	// committed (a projector that never ran lags by the whole log).
	Lag int64 `json:"lag"`
	// Lagging: Lag is above the configured threshold.
	Lagging bool `json:"lagging"`
}

// Projections reads the state of projectors from Kafka: group members,
// committed offsets, and the topics' start and end offsets. A read is
// reused for a second, so probes and scrapes at any rate cost Kafka at most
// four requests a second.
type Projections struct {
	adm    *kadm.Client
	groups []ProjectorGroup
	maxLag int64
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	at      time.Time
	last    []ProjectorState
	lastErr error
}

// NewProjections watches groups; a projector lagging more than maxLag
// records is Lagging.
func NewProjections(adm *kadm.Client, groups []ProjectorGroup, maxLag int64) *Projections {
	return &Projections{adm: adm, groups: groups, maxLag: maxLag, ttl: time.Second, now: time.Now}
}

// States returns every projector's state, in the order given.
func (p *Projections) States(ctx context.Context) ([]ProjectorState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && p.now().Sub(p.at) < p.ttl {
		return p.last, p.lastErr
	}
	p.last, p.lastErr = p.read(ctx)
	p.at = p.now()
	return p.last, p.lastErr
}

func (p *Projections) read(ctx context.Context) ([]ProjectorState, error) {
	names := make([]string, len(p.groups))
	var topics []string
	for i, g := range p.groups {
		names[i] = g.Group
		for _, t := range g.Topics {
			if !slices.Contains(topics, t) {
				topics = append(topics, t)
			}
		}
	}
	described, err := p.adm.DescribeGroups(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("describe groups: %w", err)
	}
	ends, err := p.adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	starts, err := p.adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("start offsets: %w", err)
	}
	committed := p.adm.FetchManyOffsets(ctx, names...)
	out := make([]ProjectorState, len(p.groups))
	for i, g := range p.groups {
		st := ProjectorState{Projector: g.Name}
		if d, ok := described[g.Group]; ok {
			if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
				return nil, fmt.Errorf("group %s: %w", g.Group, d.Err)
			}
			st.Running = len(d.Members) > 0
		}
		c := committed[g.Group]
		if c.Err != nil && !errors.Is(c.Err, kerr.GroupIDNotFound) {
			return nil, fmt.Errorf("group %s offsets: %w", g.Group, c.Err)
		}
		var errs []error
		ends.Each(func(end kadm.ListedOffset) {
			if !slices.Contains(g.Topics, end.Topic) {
				return
			}
			if end.Err != nil {
				errs = append(errs, fmt.Errorf("%s/%d: %w", end.Topic, end.Partition, end.Err))
				return
			}
			from := int64(0)
			if s, ok := starts.Lookup(end.Topic, end.Partition); ok && s.Err == nil {
				from = s.Offset
			}
			if o, ok := c.Fetched.Lookup(end.Topic, end.Partition); ok && o.Err == nil && o.At >= 0 {
				from = o.At
			}
			st.Lag += max(0, end.Offset-from)
		})
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		st.Lagging = st.Lag > p.maxLag
		out[i] = st
	}
	return out, nil
}

// Check is the degrading readiness check "projections": it fails when a
// projector has no running member or lags more than the threshold, and its
// detail lists every projector's state. The process stays ready: it still
// serves what the projections hold.
func (p *Projections) Check() Check {
	return Check{Name: "projections", Degrades: true, Run: func(ctx context.Context) error {
		states, err := p.States(ctx)
		if err != nil {
			return err
		}
		var bad []string
		for _, s := range states {
			switch {
			case !s.Running:
				bad = append(bad, s.Projector+" stopped")
			case s.Lagging:
				bad = append(bad, fmt.Sprintf("%s lags %d records", s.Projector, s.Lag))
			}
		}
		if len(bad) == 0 {
			return nil
		}
		return &DetailError{Err: errors.New(strings.Join(bad, ", ")), Detail: states}
	}}
}

// Collector exports errata_projector_running{projector} (1 or 0) and
// errata_projector_lag{projector} (records) at scrape time.
func (p *Projections) Collector() prometheus.Collector { return projectionsCollector{p} }

var (
	projectorRunningDesc = prometheus.NewDesc("errata_projector_running",
		"1 when the projector's consumer group has a member, else 0.", []string{"projector"}, nil)
	projectorLagDesc = prometheus.NewDesc("errata_projector_lag",
		"Records of the projector's topics it has not consumed (the whole log when it never ran).", []string{"projector"}, nil)
)

type projectionsCollector struct{ p *Projections }

func (c projectionsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- projectorRunningDesc
	ch <- projectorLagDesc
}

func (c projectionsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	states, err := c.p.States(ctx)
	if err != nil {
		return // errata_consumer_lag_up reports Kafka reads failing
	}
	for _, s := range states {
		running := 0.0
		if s.Running {
			running = 1
		}
		ch <- prometheus.MustNewConstMetric(projectorRunningDesc, prometheus.GaugeValue, running, s.Projector)
		ch <- prometheus.MustNewConstMetric(projectorLagDesc, prometheus.GaugeValue, float64(s.Lag), s.Projector)
	}
}
