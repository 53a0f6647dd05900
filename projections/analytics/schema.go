package analytics

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Tables are the projection's data tables in dump order. _positions and
// _migrations are bookkeeping and not part of the read model.
var Tables = []string{"post_versions", "views", "investigations", "claims", "attempts", "claim_assessments", "assessment_sources",
	"analyses", "analysis_attempts", "post_verdicts", "configurations", "experiments", "appeals", "exchanges"}

var databaseName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// ValidDatabase reports whether name can be a metrics database name.
func ValidDatabase(name string) error {
	if !databaseName.MatchString(name) {
		return fmt.Errorf("clickhouse database %q is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)", name)
	}
	return nil
}

// Options turns a ClickHouse URL into driver options with database as the
// default database. http(s):// selects the HTTP interface without
// compression (what the local stand-in speaks); clickhouse:// the native
// protocol with LZ4.
func Options(rawURL, database string) (*clickhouse.Options, error) {
	opts, err := clickhouse.ParseDSN(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse url: %w", err)
	}
	if opts.Protocol == clickhouse.HTTP {
		opts.Compression = &clickhouse.Compression{Method: clickhouse.CompressionNone}
	} else if opts.Compression == nil {
		opts.Compression = &clickhouse.Compression{Method: clickhouse.CompressionLZ4}
	}
	if opts.DialTimeout == 0 || opts.DialTimeout > 10*time.Second {
		opts.DialTimeout = 5 * time.Second
	}
	opts.Auth.Database = database
	return opts, nil
}

// Open creates database if it does not exist and returns a connection whose
// default database it is.
func Open(ctx context.Context, rawURL, database string) (driver.Conn, error) {
	if err := ValidDatabase(database); err != nil {
		return nil, err
	}
	adminOpts, err := Options(rawURL, "")
	if err != nil {
		return nil, err
	}
	admin, err := clickhouse.Open(adminOpts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	err = admin.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+database)
	_ = admin.Close()
	if err != nil {
		return nil, fmt.Errorf("create clickhouse database %s: %w", database, err)
	}
	opts, err := Options(rawURL, database)
	if err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse database %s: %w", database, err)
	}
	return conn, nil
}

// splitStatements cuts a file at semicolons that end a line (the HTTP
// interface runs one statement per request). Migration files keep
// semicolons out of comments and string literals.
func splitStatements(body string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(trimmed, ";"))
			if s := strings.TrimSpace(stripComments(cur.String())); s != "" {
				out = append(out, strings.TrimSpace(cur.String()))
			}
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	if s := strings.TrimSpace(stripComments(cur.String())); s != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Migrate brings the schema of conn's default database up to date with the
// embedded migrations (internal/migrate.Run): each once, in version order,
// recorded in _migrations with the file's sha256; a recorded migration
// whose file changed is an error (migrate.ErrEdited).
func Migrate(ctx context.Context, conn driver.Conn, log *slog.Logger) error {
	return migrateFiles(ctx, conn, migrate.Dir(migrationFiles, "migrations"), log)
}

func migrateFiles(ctx context.Context, conn driver.Conn, files fs.FS, log *slog.Logger) error {
	migrations, err := migrate.Load(files)
	if err != nil {
		return fmt.Errorf("metrics migrations: %w", err)
	}
	if log != nil {
		log = log.With("projection", ProjectorName)
	}
	if err := migrate.Run(ctx, migrationStore{conn}, migrations, log); err != nil {
		return fmt.Errorf("metrics migrations: %w", err)
	}
	return nil
}

// migrationStore is the database's side of migrate.Run. ClickHouse has no
// transactions and no locks, so each migration's statements are idempotent
// (IF NOT EXISTS, OR REPLACE): one interrupted before it was recorded runs
// again, and concurrent migrators converge (_migrations is a
// ReplacingMergeTree by version, so a version recorded twice is one).
type migrationStore struct{ conn driver.Conn }

func (migrationStore) Lock(context.Context) (func(), error) { return func() {}, nil }

func (s migrationStore) Prepare(ctx context.Context) error {
	return s.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS _migrations (
		version    UInt32,
		name       String,
		checksum   String,
		applied_at DateTime64(3, 'UTC')
	) ENGINE = ReplacingMergeTree ORDER BY version COMMENT 'applied schema migrations of the metrics projection'`)
}

func (s migrationStore) Applied(ctx context.Context) (_ []migrate.Applied, err error) {
	// name and checksum are the same in every row of a version; max skips
	// an empty checksum if one was ever recorded without.
	rows, err := s.conn.Query(ctx, "SELECT version, any(name), max(checksum) FROM _migrations GROUP BY version ORDER BY version")
	if err != nil {
		return nil, err
	}
	defer closeRows(rows, &err)
	var out []migrate.Applied
	for rows.Next() {
		var v uint32
		var a migrate.Applied
		if err := rows.Scan(&v, &a.Name, &a.Checksum); err != nil {
			return nil, err
		}
		a.Version = int(v)
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s migrationStore) Apply(ctx context.Context, m migrate.Migration) error {
	for i, stmt := range splitStatements(m.SQL) {
		if err := s.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("statement %d: %w", i+1, err)
		}
	}
	return s.record(ctx, m)
}

func (s migrationStore) RecordChecksum(ctx context.Context, _ migrate.Applied, m migrate.Migration) error {
	return s.record(ctx, m)
}

func (s migrationStore) record(ctx context.Context, m migrate.Migration) error {
	// Bookkeeping, not projection data: the wall clock is fine here.
	if err := s.conn.Exec(ctx, "INSERT INTO _migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
		uint32(m.Version), //nolint:gosec // G115: four digits (migrate's NNNN_name.sql), at most 9999
		m.Name, m.Checksum, time.Now().UTC()); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// ErrInvalidFilter marks a query the readers reject before running it (bad
// platform, author id or window).
var ErrInvalidFilter = errors.New("invalid metrics filter")
