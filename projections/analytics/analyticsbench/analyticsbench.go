// Package analyticsbench measures the metrics projector against raw
// clickhouse-go batch inserts of the very same rows, in the same run on
// the same ClickHouse. BenchmarkMetricsProjector and `errata bench` both
// run it (on their own workloads), so the measure is one.
package analyticsbench

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/analytics"
)

// Config shapes a run.
type Config struct {
	// Projector writes to ProjectorConn's database; Raw is another
	// database on the same server. Both are freshly migrated.
	Projector     *analytics.Projector
	ProjectorConn driver.Conn
	Raw           driver.Conn
	// Batches are the workload, as the projector receives it from the log.
	Batches []kafka.Batch
	// Rounds of measure (default 1). The batches are projected once before
	// (which gives the rows the raw inserts write); each round projects
	// them again (a redelivery: the same rows, collapsing by event
	// identity) and inserts the rows raw, one INSERT per table.
	Rounds int
	// Measured, when set, runs each round's projector work (the timed
	// window; the bench profiles it there). nil: the work runs as is.
	Measured func(func() error) error
}

// Result is what a run measured: per round, Rows rows from Events
// events.
type Result struct {
	Events    int           `json:"events"`
	Rows      int           `json:"rows"`
	Rounds    int           `json:"rounds"`
	Projector time.Duration `json:"projector_ns"`
	Raw       time.Duration `json:"raw_insert_ns"`
}

// ProjectorPerSec is the projector's rows per second.
func (r Result) ProjectorPerSec() float64 { return perSec(r.Rows*r.Rounds, r.Projector) }

// RawPerSec is the raw inserts' rows per second.
func (r Result) RawPerSec() float64 { return perSec(r.Rows*r.Rounds, r.Raw) }

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Run measures, and checks at the end that both databases hold as many
// rows of each table.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 1
	}
	res := Result{Rounds: cfg.Rounds}
	for _, b := range cfg.Batches {
		res.Events += len(b.Records)
		if err := cfg.Projector.Handle(ctx, b); err != nil {
			return res, err
		}
	}
	rows, err := TableRows(ctx, cfg.ProjectorConn)
	if err != nil {
		return res, err
	}
	for _, r := range rows {
		res.Rows += len(r)
	}
	for range cfg.Rounds {
		start := time.Now()
		project := func() error {
			for _, b := range cfg.Batches {
				if err := cfg.Projector.Handle(ctx, b); err != nil {
					return err
				}
			}
			return nil
		}
		if cfg.Measured != nil {
			err = cfg.Measured(project)
		} else {
			err = project()
		}
		if err != nil {
			return res, err
		}
		res.Projector += time.Since(start)

		start = time.Now()
		for _, table := range analytics.Tables {
			if err := insert(ctx, cfg.Raw, table, rows[table]); err != nil {
				return res, err
			}
		}
		res.Raw += time.Since(start)
	}
	raw, err := TableRows(ctx, cfg.Raw)
	if err != nil {
		return res, err
	}
	for _, table := range analytics.Tables {
		if len(raw[table]) != len(rows[table]) {
			return res, fmt.Errorf("metrics bench: %s holds %d rows raw, %d projected", table, len(raw[table]), len(rows[table]))
		}
	}
	return res, nil
}

func insert(ctx context.Context, conn driver.Conn, table string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	ins, err := conn.PrepareBatch(ctx, "INSERT INTO "+table)
	if err != nil {
		return fmt.Errorf("raw insert into %s: %w", table, err)
	}
	for _, r := range rows {
		if err := ins.Append(r...); err != nil {
			_ = ins.Abort()
			return fmt.Errorf("raw insert into %s: %w", table, err)
		}
	}
	if err := ins.Send(); err != nil {
		return fmt.Errorf("raw insert into %s: %w", table, err)
	}
	return nil
}

// TableRows reads every row of the projection's tables (FINAL) as driver
// values, ready to be inserted again.
func TableRows(ctx context.Context, conn driver.Conn) (map[string][][]any, error) {
	out := map[string][][]any{}
	for _, table := range analytics.Tables {
		rows, err := conn.Query(ctx, "SELECT * FROM "+table+" FINAL")
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		vals, err := readRows(rows)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		out[table] = vals
	}
	return out, nil
}

func readRows(rows driver.Rows) (_ [][]any, err error) {
	defer func() {
		if cerr := rows.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var out [][]any
	types := rows.ColumnTypes()
	for rows.Next() {
		ptrs := make([]any, len(types))
		for i, ct := range types {
			ptrs[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		vals := make([]any, len(ptrs))
		for i, p := range ptrs {
			vals[i] = reflect.ValueOf(p).Elem().Interface()
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// Batches lays events out as the records of one partition of their
// topics, in batches of at most size records per topic, topic after topic
// in the order they first appear.
func Batches(reg *events.Registry, topics events.Topics, evs []events.Event, size int) ([]kafka.Batch, error) {
	var order []string
	byTopic := map[string][]*kgo.Record{}
	for _, ev := range evs {
		msg, err := reg.Encode(ev)
		if err != nil {
			return nil, err
		}
		name := topics.Name(msg.Topic)
		if _, ok := byTopic[name]; !ok {
			order = append(order, name)
		}
		rec := &kgo.Record{Topic: name, Key: []byte(msg.Key), Value: msg.Value, Offset: int64(len(byTopic[name])), Timestamp: ev.Time}
		for k, v := range msg.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		byTopic[name] = append(byTopic[name], rec)
	}
	var out []kafka.Batch
	for _, name := range order {
		recs := byTopic[name]
		for s := 0; s < len(recs); s += size {
			out = append(out, kafka.Batch{Topic: name, Partition: 0, Records: recs[s:min(s+size, len(recs))]})
		}
	}
	return out, nil
}
