package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/targets"
)

// AnalyticsConfig describes the analysts' projection in ClickHouse.
type AnalyticsConfig struct {
	// URL is the ClickHouse URL; Database generation 1's database
	// (generation N is targets.Name(Database, N)).
	URL, Database string
	// Topics names the topics it reads.
	Topics   events.Topics
	Registry *events.Registry
	// InsertRows bounds the rows of one INSERT.
	InsertRows int
	Log        *slog.Logger
}

// analyticsTopics are the logical topics the analytics projection reads.
var analyticsTopics = []events.Topic{events.TopicPosts, events.TopicInvestigations, events.TopicAnalyses}

// Analytics is the analysts' projection's storage by generation: one
// ClickHouse database each.
type Analytics struct {
	cfg AnalyticsConfig
}

// NewAnalytics returns the storage of the projection cfg describes.
func NewAnalytics(cfg AnalyticsConfig) *Analytics { return &Analytics{cfg: cfg} }

// Database is generation gen's database.
func (s *Analytics) Database(gen int64) string { return targets.Name(s.cfg.Database, gen) }

// Conn connects to generation gen's database, creating it if missing; the
// caller closes the connection.
func (s *Analytics) Conn(ctx context.Context, gen int64) (driver.Conn, error) {
	return analytics.Open(ctx, s.cfg.URL, s.Database(gen))
}

// Projector is the projection's projector on conn, parking what it cannot
// apply with dl.
func (s *Analytics) Projector(conn driver.Conn, dl analytics.DeadLetterer) *analytics.Projector {
	return analytics.NewProjector(conn, s.cfg.Registry, s.cfg.Topics, dl, s.cfg.InsertRows, s.cfg.Log)
}

// Topics implements Rebuildable.
func (s *Analytics) Topics() []string {
	out := make([]string, len(analyticsTopics))
	for i, tp := range analyticsTopics {
		out[i] = s.cfg.Topics.Name(tp)
	}
	return out
}

// Open implements Rebuildable: it migrates generation gen's database.
func (s *Analytics) Open(ctx context.Context, gen int64) (Projector, func(), error) {
	conn, err := s.Conn(ctx, gen)
	if err != nil {
		return nil, nil, err
	}
	if err := analytics.Migrate(ctx, conn, s.cfg.Log); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return s.Projector(conn, skipDeadLetters{s.cfg.Log}), func() { _ = conn.Close() }, nil
}

// server connects without a default database and without creating one.
func (s *Analytics) server() (driver.Conn, error) {
	opts, err := analytics.Options(s.cfg.URL, "")
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	return conn, nil
}

// Generations implements Rebuildable: those whose database exists.
func (s *Analytics) Generations(ctx context.Context) ([]int64, error) {
	conn, err := s.server()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	base := s.cfg.Database
	rows, err := conn.Query(ctx, "SELECT name FROM system.databases WHERE name = {base:String} OR startsWith(name, {prefix:String})",
		clickhouse.Named("base", base), clickhouse.Named("prefix", base+"_g"))
	if err != nil {
		return nil, fmt.Errorf("list metrics databases: %w", err)
	}
	gens, err := generationsIn(rows, base)
	// Close drains the result: an exception ClickHouse sends after the
	// last block can surface only there.
	if cerr := rows.Close(); err == nil && cerr != nil {
		return nil, fmt.Errorf("list metrics databases: %w", cerr)
	}
	return gens, err
}

// Activate implements Rebuildable: readers follow the control row alone.
func (s *Analytics) Activate(context.Context, int64) error { return nil }

// Drop implements Rebuildable.
func (s *Analytics) Drop(ctx context.Context, gen int64) error {
	name := s.Database(gen)
	if err := analytics.ValidDatabase(name); err != nil {
		return err
	}
	conn, err := s.server()
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" SYNC"); err != nil {
		return fmt.Errorf("drop metrics database %s: %w", name, err)
	}
	return nil
}

// Positions implements Rebuildable.
func (s *Analytics) Positions(ctx context.Context, gen int64) (Offsets, error) {
	conn, err := s.Conn(ctx, gen)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	at, err := s.Projector(conn, skipDeadLetters{s.cfg.Log}).Positions(ctx, s.Topics())
	return Offsets(at), err
}

// Checksum implements Rebuildable: it dumps the tables at the positions
// the projector has recorded. ClickHouse has no transactions, so rows of a
// batch still in flight (inserted, position not yet stored) are left out
// by their log position.
func (s *Analytics) Checksum(ctx context.Context, gen int64, w io.Writer) ([]TableSum, Offsets, error) {
	conn, err := s.Conn(ctx, gen)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	at, err := s.Projector(conn, skipDeadLetters{s.cfg.Log}).Positions(ctx, s.Topics())
	if err != nil {
		return nil, nil, err
	}
	below := map[events.Topic]map[int32]int64{}
	for _, tp := range analyticsTopics {
		below[tp] = at[s.cfg.Topics.Name(tp)]
	}
	dump, err := analytics.DumpBelow(ctx, conn, s.Database(gen), below)
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Write(dump); err != nil {
		return nil, nil, err
	}
	return analyticsTableSums(dump), Offsets(at), nil
}

// analyticsTableSums splits a canonical dump ("# table (...) N rows"
// headers, then the rows) into per-table checksums.
func analyticsTableSums(dump []byte) []TableSum {
	var out []TableSum
	var h hash.Hash
	flush := func() {
		if h != nil {
			out[len(out)-1].SHA256 = hex.EncodeToString(h.Sum(nil))
		}
	}
	for line := range strings.Lines(string(dump)) {
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			flush()
			table, _, _ := strings.Cut(rest, " ")
			out = append(out, TableSum{Table: "clickhouse " + table})
			h = sha256.New()
			continue
		}
		if h == nil {
			continue
		}
		h.Write([]byte(line))
		out[len(out)-1].Rows++
	}
	flush()
	return out
}
