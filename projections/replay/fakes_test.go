package replay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// journal records, in order, what the fakes were asked to do.
type journal struct {
	mu      sync.Mutex
	entries []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, fmt.Sprintf(format, args...))
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

// memLog is an event log in memory: each record's value is a row.
type memLog struct {
	mu    sync.Mutex
	parts map[string]map[int32][]*kgo.Record
	// afterRun runs after each catch-up run n (from 1): a live system
	// appending meanwhile.
	afterRun func(n int)
	runs     int
}

func newMemLog() *memLog { return &memLog{parts: map[string]map[int32][]*kgo.Record{}} }

// add appends values to topic's partition p.
func (l *memLog) add(topic string, p int32, values ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parts[topic] == nil {
		l.parts[topic] = map[int32][]*kgo.Record{}
	}
	for _, v := range values {
		recs := l.parts[topic][p]
		l.parts[topic][p] = append(recs, &kgo.Record{Topic: topic, Partition: p, Offset: int64(len(recs)), Value: []byte(v)})
	}
}

// addN appends n numbered values to topic's partition p.
func (l *memLog) addN(topic string, p int32, n int, prefix string) {
	for i := range n {
		l.add(topic, p, fmt.Sprintf("%s%d", prefix, i))
	}
}

func (l *memLog) EndOffsets(_ context.Context, topics []string) (replay.Offsets, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := replay.Offsets{}
	for _, t := range topics {
		if len(l.parts[t]) == 0 {
			return nil, fmt.Errorf("topic %s has no partitions (does it exist?)", t)
		}
		out[t] = map[int32]int64{}
		for p, recs := range l.parts[t] {
			out[t][p] = int64(len(recs))
		}
	}
	return out, nil
}

// CatchUp feeds p, partition by partition, what lies between its stored
// positions and until, as replay.CatchUp does over Kafka.
func (l *memLog) CatchUp(ctx context.Context, until replay.Offsets, p replay.Projector, progress func(replay.Progress)) (int64, error) {
	stored, err := p.Positions(ctx, slices.Sorted(maps.Keys(until)))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, topic := range slices.Sorted(maps.Keys(until)) {
		for _, part := range slices.Sorted(maps.Keys(until[topic])) {
			start, end := stored[topic][part], until[topic][part]
			if start >= end {
				continue
			}
			l.mu.Lock()
			recs := l.parts[topic][part][start:end]
			l.mu.Unlock()
			if err := p.Handle(ctx, kafka.Batch{Topic: topic, Partition: part, Records: recs}); err != nil {
				return n, err
			}
			n += int64(len(recs))
			progress(replay.Progress{Done: n})
		}
	}
	l.runs++
	if l.afterRun != nil {
		l.afterRun(l.runs)
	}
	return n, nil
}

// memGen is one generation of memStore: rows by topic, and positions.
type memGen struct {
	rows map[string][]string
	at   replay.Offsets
}

// memStore is a read model in memory: one table per topic, whose rows are
// the records' values.
type memStore struct {
	topics []string
	gens   map[int64]*memGen
	j      *journal
	// noPositions: Checksum cannot name the positions of its dump.
	noPositions bool
	failOpen    error
	failHandle  error
	failDrop    error
	failActive  error
}

func newMemStore(j *journal, topics ...string) *memStore {
	return &memStore{topics: topics, gens: map[int64]*memGen{}, j: j}
}

func (s *memStore) Topics() []string { return s.topics }

func (s *memStore) Open(_ context.Context, gen int64) (replay.Projector, func(), error) {
	if s.failOpen != nil {
		return nil, nil, s.failOpen
	}
	s.j.add("open g%d", gen)
	g := s.gens[gen]
	if g == nil {
		g = &memGen{rows: map[string][]string{}, at: replay.Offsets{}}
		s.gens[gen] = g
	}
	return &memProjector{gen: g, fail: s.failHandle}, func() { s.j.add("release g%d", gen) }, nil
}

func (s *memStore) Generations(context.Context) ([]int64, error) {
	return slices.Sorted(maps.Keys(s.gens)), nil
}

func (s *memStore) Activate(_ context.Context, gen int64) error {
	s.j.add("activate g%d", gen)
	return s.failActive
}

func (s *memStore) Drop(_ context.Context, gen int64) error {
	s.j.add("drop g%d", gen)
	if s.failDrop != nil {
		return s.failDrop
	}
	delete(s.gens, gen)
	return nil
}

func (s *memStore) Positions(_ context.Context, gen int64) (replay.Offsets, error) {
	g := s.gens[gen]
	if g == nil {
		return replay.Offsets{}, nil
	}
	return cloneOffsets(g.at), nil
}

// Checksum dumps one table per topic, "topic: value" lines sorted.
func (s *memStore) Checksum(_ context.Context, gen int64, w io.Writer) ([]replay.TableSum, replay.Offsets, error) {
	g := s.gens[gen]
	if g == nil {
		return nil, nil, fmt.Errorf("generation %d does not exist", gen)
	}
	var sums []replay.TableSum
	for _, table := range slices.Sorted(maps.Keys(g.rows)) {
		rows := slices.Sorted(slices.Values(g.rows[table]))
		var dump strings.Builder
		for _, r := range rows {
			dump.WriteString(table + ": " + r + "\n")
		}
		if _, err := io.WriteString(w, dump.String()); err != nil {
			return nil, nil, err
		}
		h := sha256.Sum256([]byte(dump.String()))
		sums = append(sums, replay.TableSum{Table: table, Rows: int64(len(rows)), SHA256: hex.EncodeToString(h[:])})
	}
	if s.noPositions {
		return sums, nil, nil
	}
	return sums, cloneOffsets(g.at), nil
}

// rows are generation gen's rows of table, sorted.
func (s *memStore) rows(gen int64, table string) []string {
	return slices.Sorted(slices.Values(s.gens[gen].rows[table]))
}

// memProjector applies records to a memGen and stores its positions with
// them.
type memProjector struct {
	gen  *memGen
	fail error
}

func (p *memProjector) Handle(_ context.Context, b kafka.Batch) error {
	if p.fail != nil {
		return p.fail
	}
	for _, r := range b.Records {
		p.gen.rows[b.Topic] = append(p.gen.rows[b.Topic], string(r.Value))
	}
	if p.gen.at[b.Topic] == nil {
		p.gen.at[b.Topic] = map[int32]int64{}
	}
	p.gen.at[b.Topic][b.Partition] = b.Records[len(b.Records)-1].Offset + 1
	return nil
}

func (p *memProjector) Positions(_ context.Context, topics []string) (map[string]map[int32]int64, error) {
	out := map[string]map[int32]int64{}
	for _, t := range topics {
		if parts, ok := p.gen.at[t]; ok {
			out[t] = maps.Clone(parts)
		}
	}
	return out, nil
}

func cloneOffsets(o replay.Offsets) replay.Offsets {
	out := replay.Offsets{}
	for t, parts := range o {
		out[t] = maps.Clone(parts)
	}
	return out
}

// memTargets is the control store in memory (generation 1 by default).
type memTargets struct {
	active map[string]int64
	j      *journal
}

func (m *memTargets) Active(_ context.Context, projection string) (targets.Target, error) {
	gen := m.active[projection]
	if gen == 0 {
		gen = 1
	}
	return targets.Target{Projection: projection, Generation: gen}, nil
}

func (m *memTargets) Switch(ctx context.Context, projection string, from, to int64, at time.Time) (targets.Target, error) {
	cur, _ := m.Active(ctx, projection)
	if cur.Generation != from {
		return targets.Target{}, fmt.Errorf("switch %s from generation %d: %w", projection, from, targets.ErrConflict)
	}
	m.j.add("switch %s g%d->g%d at %s", projection, from, to, at.Format(time.RFC3339))
	m.active[projection] = to
	return targets.Target{Projection: projection, Generation: to, Previous: from, SwitchedAt: at}, nil
}

// meter records the label of every catch-up run and whether it finished.
type meter struct {
	mu     sync.Mutex
	labels []string
	last   []replay.Progress
}

func (m *meter) start(label string) (func(replay.Progress), func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.labels = append(m.labels, label)
	i := len(m.labels) - 1
	m.last = append(m.last, replay.Progress{})
	return func(p replay.Progress) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.last[i] = p
		}, func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.labels[i] += " done"
		}
}
