package pgproj

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what Dump reads through: a pool, a connection or a
// transaction (use a REPEATABLE READ transaction for a consistent dump of a
// projection that is still being written).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// TableSum is the canonical checksum of one table.
type TableSum struct {
	Table  string
	Rows   int64
	SHA256 string
}

// DumpOptions select what Dump leaves out.
type DumpOptions struct {
	// Skip names tables to leave out (schema_migrations always is: its
	// applied_at is the wall clock).
	Skip []string
	// SkipUnlogged leaves out UNLOGGED tables (runtime state such as leases).
	SkipUnlogged bool
}

// Dump writes every table of schema canonically to w, one
// "table: (row text)" line per row, tables by name and rows by primary key
// then by their text in byte order, and returns a checksum per table. Two
// copies of a projection hold the same state exactly when their dumps (and
// so their checksums) are equal. Times render in the session time zone, so
// q must be a connection made by PoolConfig (UTC). w may be io.Discard.
func Dump(ctx context.Context, q Querier, schema string, w io.Writer, opt DumpOptions) ([]TableSum, error) {
	type table struct {
		name string
		pk   []string
	}
	rows, err := q.Query(ctx, `
		SELECT c.relname::text,
		       COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
		                 FROM pg_index i
		                 CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		                 JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		                 WHERE i.indrelid = c.oid AND i.indisprimary), '{}'),
		       c.relpersistence = 'u'
		FROM pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p')
		ORDER BY c.relname COLLATE "C"`, schema)
	if err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", schema, err)
	}
	var tables []table
	for rows.Next() {
		var tb table
		var unlogged bool
		if err := rows.Scan(&tb.name, &tb.pk, &unlogged); err != nil {
			rows.Close()
			return nil, err
		}
		if tb.name == "schema_migrations" || slices.Contains(opt.Skip, tb.name) || (unlogged && opt.SkipUnlogged) {
			continue
		}
		tables = append(tables, tb)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables of %s: %w", schema, err)
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("schema %s has no tables", schema)
	}

	sums := make([]TableSum, 0, len(tables))
	for _, tb := range tables {
		order := make([]string, 0, len(tb.pk)+1)
		for _, c := range tb.pk {
			order = append(order, "t."+pgx.Identifier{c}.Sanitize())
		}
		order = append(order, `t::text COLLATE "C"`)
		ident := pgx.Identifier{schema, tb.name}.Sanitize()
		rows, err := q.Query(ctx, `SELECT t::text FROM `+ident+` t ORDER BY `+strings.Join(order, ", "))
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", tb.name, err)
		}
		h := sha256.New()
		var n int64
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return nil, err
			}
			out := tb.name + ": " + line + "\n"
			h.Write([]byte(out))
			if _, err := io.WriteString(w, out); err != nil {
				rows.Close()
				return nil, err
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("dump %s: %w", tb.name, err)
		}
		if n == 0 {
			if _, err := io.WriteString(w, tb.name+": (empty)\n"); err != nil {
				return nil, err
			}
		}
		sums = append(sums, TableSum{Table: tb.name, Rows: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	return sums, nil
}
