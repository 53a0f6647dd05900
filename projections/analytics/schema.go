package analytics

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Tables are the projection's data tables in dump order. _positions and
// _migrations are bookkeeping and not part of the read model.
var Tables = []string{"post_versions", "views", "investigations", "claims", "attempts", "claim_assessments", "assessment_sources",
	"analyses", "analysis_attempts", "post_verdicts"}

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

// migration is one embedded file: NNN_name.sql.
type migration struct {
	version    uint32
	name       string
	statements []string
	checksum   string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseUint(num, 10, 32)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.sql", e.Name())
		}
		body, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		out = append(out, migration{version: uint32(v), name: e.Name(), statements: splitStatements(string(body)),
			checksum: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b migration) int { return int(a.version) - int(b.version) })
	return out, nil
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

// Migrate brings the schema of conn's default database up to date. Each
// migration's statements are idempotent (IF NOT EXISTS, OR REPLACE), so a
// migration interrupted before it was recorded simply runs again; applied
// versions are recorded in _migrations with the file's sha256, and a
// recorded migration whose file changed is an error.
func Migrate(ctx context.Context, conn driver.Conn, log *slog.Logger) error {
	migs, err := loadMigrations()
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS _migrations (
		version    UInt32,
		name       String,
		checksum   String,
		applied_at DateTime64(3, 'UTC')
	) ENGINE = ReplacingMergeTree ORDER BY version COMMENT 'applied schema migrations of the metrics projection'`); err != nil {
		return fmt.Errorf("create _migrations: %w", err)
	}
	applied := map[uint32]string{}
	rows, err := conn.Query(ctx, "SELECT version, any(checksum) FROM _migrations GROUP BY version")
	if err != nil {
		return fmt.Errorf("read _migrations: %w", err)
	}
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			rows.Close()
			return err
		}
		applied[v] = sum
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, m := range migs {
		if sum, ok := applied[m.version]; ok {
			if sum != m.checksum {
				return fmt.Errorf("metrics migration %s was applied with checksum %s but the file now has %s: add a new migration instead of editing one", m.name, sum, m.checksum)
			}
			continue
		}
		for i, stmt := range m.statements {
			if err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("metrics migration %s statement %d: %w", m.name, i+1, err)
			}
		}
		// Bookkeeping, not projection data: the wall clock is fine here.
		if err := conn.Exec(ctx, "INSERT INTO _migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
			m.version, m.name, m.checksum, time.Now().UTC()); err != nil {
			return fmt.Errorf("record metrics migration %s: %w", m.name, err)
		}
		if log != nil {
			log.Info("metrics migration applied", "migration", m.name)
		}
	}
	return nil
}

// ErrInvalidFilter marks a query the readers reject before running it (bad
// platform, author id or window).
var ErrInvalidFilter = errors.New("invalid metrics filter")
