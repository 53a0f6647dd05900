package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// DeadLetterer receives records that cannot be decoded.
type DeadLetterer interface {
	Send(ctx context.Context, rec *kgo.Record, cause error, now time.Time) error
}

// DefaultInsertRows bounds the rows of one INSERT.
const DefaultInsertRows = 50_000

// Projector is the metrics projection's kafka.Handler and
// kafka.PositionStore. For each batch it inserts the rows of its events
// (one INSERT per table, at most insertRows rows each), and only after
// those inserts returned writes the partition's next offset to _positions;
// Handle returns after both, so the runner commits afterwards. A crash in
// between redelivers the batch, whose rows carry the same event ids and
// collapse in the ReplacingMergeTree tables.
type Projector struct {
	conn       driver.Conn
	registry   *events.Registry
	deadLetter DeadLetterer
	log        *slog.Logger
	insertRows int
}

// NewProjector returns a projector writing to conn's default database.
// insertRows <= 0 means DefaultInsertRows.
func NewProjector(conn driver.Conn, reg *events.Registry, dl DeadLetterer, insertRows int, log *slog.Logger) *Projector {
	if insertRows <= 0 {
		insertRows = DefaultInsertRows
	}
	return &Projector{conn: conn, registry: reg, deadLetter: dl, insertRows: insertRows, log: log.With("projector", ProjectorName)}
}

// Positions implements kafka.PositionStore: the next offset stored per
// partition (the largest written; rows of older writes may linger until a
// merge).
func (p *Projector) Positions(ctx context.Context, topics []string) (map[string]map[int32]int64, error) {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	rows, err := p.conn.Query(ctx, "SELECT topic, partition, max(next_offset) FROM _positions GROUP BY topic, partition")
	if err != nil {
		return nil, fmt.Errorf("read metrics positions: %w", err)
	}
	defer rows.Close()
	out := map[string]map[int32]int64{}
	for rows.Next() {
		var topic string
		var part int32
		var next int64
		if err := rows.Scan(&topic, &part, &next); err != nil {
			return nil, fmt.Errorf("read metrics positions: %w", err)
		}
		if !want[topic] {
			continue
		}
		if out[topic] == nil {
			out[topic] = map[int32]int64{}
		}
		out[topic][part] = next
	}
	return out, rows.Err()
}

// Handle implements kafka.Handler.
func (p *Projector) Handle(ctx context.Context, b kafka.Batch) error {
	if len(b.Records) == 0 {
		return nil
	}
	decoded := p.decode(b.Records)
	var set rowSet
	var lastTime time.Time
	for i, rec := range b.Records {
		d := decoded[i]
		if d.skip {
			continue
		}
		err := d.err
		if err == nil {
			err = set.add(d.ev, position{partition: rec.Partition, offset: rec.Offset})
		}
		if err != nil {
			// Deterministic: a replay dead-letters the same records.
			if dlErr := p.deadLetter.Send(ctx, rec, err, rec.Timestamp); dlErr != nil {
				return fmt.Errorf("dead-letter %s/%d@%d: %w", rec.Topic, rec.Partition, rec.Offset, dlErr)
			}
			continue
		}
		lastTime = d.ev.Time
	}
	if err := p.insert(ctx, &set); err != nil {
		return fmt.Errorf("metrics %s/%d@%d..%d: %w", b.Topic, b.Partition, b.Records[0].Offset, b.Records[len(b.Records)-1].Offset, err)
	}
	last := b.Records[len(b.Records)-1]
	if err := p.storePosition(ctx, b.Topic, b.Partition, last.Offset+1, lastTime); err != nil {
		return err
	}
	return nil
}

type decodedRecord struct {
	ev   events.Event
	err  error
	skip bool
}

// decode decodes the records the projection reads, spread over the CPUs
// (decoding and validating JSON is most of a batch's cost); results keep
// the records' order.
func (p *Projector) decode(recs []*kgo.Record) []decodedRecord {
	out := make([]decodedRecord, len(recs))
	workers := min(runtime.GOMAXPROCS(0), (len(recs)+255)/256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				if !Handles(header(recs[i], events.HeaderType)) {
					out[i].skip = true
					continue
				}
				out[i].ev, out[i].err = p.registry.Decode(recs[i].Value)
			}
		}()
	}
	wg.Wait()
	return out
}

func (p *Projector) storePosition(ctx context.Context, topic string, partition int32, next int64, at time.Time) error {
	batch, err := p.conn.PrepareBatch(ctx, "INSERT INTO _positions (topic, partition, next_offset, event_time)")
	if err != nil {
		return fmt.Errorf("store metrics position: %w", err)
	}
	if err := batch.Append(topic, partition, next, ms(at)); err != nil {
		_ = batch.Abort()
		return fmt.Errorf("store metrics position: %w", err)
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("store metrics position: %w", err)
	}
	return nil
}

// insert writes the rows, table by table, in INSERTs of at most insertRows.
func (p *Projector) insert(ctx context.Context, s *rowSet) error {
	if err := insertChunks(ctx, p.conn, p.insertRows, "post_versions", s.postVersions, func(b driver.Batch, r postVersionRow) error {
		return b.Append(r.EventID, r.PostID, r.PostVersionID, r.Platform, r.ExternalID, r.URL, r.VersionHash,
			r.AuthorID, r.AuthorPlatformUserID, r.AuthorDisplayName, r.Provenance, r.WordCount, r.ReporterKeyHash,
			r.RegisteredAt, r.partition, r.offset)
	}); err != nil {
		return err
	}
	if err := insertChunks(ctx, p.conn, p.insertRows, "views", s.views, func(b driver.Batch, r viewRow) error {
		return b.Append(r.EventID, r.PostID, r.PostVersionID, r.Platform, r.ViewerKind, r.Authenticated,
			r.ViewedAt, r.ViewedOn, r.partition, r.offset)
	}); err != nil {
		return err
	}
	if err := insertChunks(ctx, p.conn, p.insertRows, "investigations", s.investigations, func(b driver.Batch, r investigationRow) error {
		return b.Append(r.EventID, r.InvestigationID, r.PostID, r.PostVersionID, r.Status, r.Platform, r.Source,
			r.UniqueViewScore, r.Provenance, r.PromptVersion, r.Provider, r.Model, r.ClaimCount, r.FailureReason,
			r.Attempts, r.Series, r.EventTime, r.partition, r.offset)
	}); err != nil {
		return err
	}
	return insertChunks(ctx, p.conn, p.insertRows, "claims", s.claims, func(b driver.Batch, r claimRow) error {
		return b.Append(r.EventID, r.ClaimID, r.InvestigationID, r.PostID, r.PostVersionID, r.Position, r.Text,
			r.Summary, r.SourceCount, r.PublishedAt, r.partition, r.offset)
	})
}

// columns lists each table's inserted columns, in Append order.
var columns = map[string]string{
	"post_versions":  "event_id, post_id, post_version_id, platform, external_id, url, version_hash, author_id, author_platform_user_id, author_display_name, provenance, word_count, reporter_key_hash, registered_at, log_partition, log_offset",
	"views":          "event_id, post_id, post_version_id, platform, viewer_kind, authenticated, viewed_at, viewed_on, log_partition, log_offset",
	"investigations": "event_id, investigation_id, post_id, post_version_id, status, platform, source, unique_view_score, provenance, prompt_version, provider, model, claim_count, failure_reason, attempts, series, event_time, log_partition, log_offset",
	"claims":         "event_id, claim_id, investigation_id, post_id, post_version_id, position, text, summary, source_count, published_at, log_partition, log_offset",
}

func insertChunks[R any](ctx context.Context, conn driver.Conn, size int, table string, rows []R, appendRow func(driver.Batch, R) error) error {
	for start := 0; start < len(rows); start += size {
		end := min(start+size, len(rows))
		batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+table+" ("+columns[table]+")")
		if err != nil {
			return fmt.Errorf("prepare insert into %s: %w", table, err)
		}
		for _, r := range rows[start:end] {
			if err := appendRow(batch, r); err != nil {
				_ = batch.Abort()
				return fmt.Errorf("append to %s: %w", table, err)
			}
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
