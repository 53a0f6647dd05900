package analytics

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// columnTypes knows the types of the columns the projector inserts, so an
// INSERT over the HTTP interface goes out without asking for them first:
// without them clickhouse-go sends DESCRIBE TABLE before every INSERT, one
// more round trip per table and batch (half of the requests a batch makes).
// They are read once, from system.columns, on first use; migrations have
// run before a projector starts, and a column it does not know (a table
// altered since) sends that INSERT the old way. The native protocol needs
// none of this and ignores it.
type columnTypes struct {
	conn driver.Conn

	mu    sync.Mutex
	types map[string]map[string]string // table -> column -> type
}

// insertContext returns ctx carrying the types of table's columns cols,
// or ctx as is when some type is unknown.
func (c *columnTypes) insertContext(ctx context.Context, table string, cols []string) context.Context {
	types := c.load(ctx)[table]
	if types == nil {
		return ctx
	}
	known := make([]clickhouse.ColumnNameAndType, len(cols))
	for i, col := range cols {
		t, ok := types[col]
		if !ok {
			return ctx
		}
		known[i] = clickhouse.ColumnNameAndType{Name: col, Type: t}
	}
	return clickhouse.Context(ctx, clickhouse.WithColumnNamesAndTypes(known))
}

// load reads the types of every column of the current database once; a
// failed read is tried again on the next use (until then, INSERTs describe
// their tables themselves).
func (c *columnTypes) load(ctx context.Context) map[string]map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.types != nil {
		return c.types
	}
	types, err := readColumnTypes(ctx, c.conn)
	if err != nil {
		return nil
	}
	c.types = types
	return types
}

func readColumnTypes(ctx context.Context, conn driver.Conn) (_ map[string]map[string]string, err error) {
	rows, err := conn.Query(ctx, `SELECT table, name, type FROM system.columns
		WHERE database = currentDatabase() AND default_kind NOT IN ('MATERIALIZED', 'ALIAS')`)
	if err != nil {
		return nil, fmt.Errorf("read column types: %w", err)
	}
	defer closeRows(rows, &err)
	out := map[string]map[string]string{}
	for rows.Next() {
		var table, name, typ string
		if err := rows.Scan(&table, &name, &typ); err != nil {
			return nil, fmt.Errorf("read column types: %w", err)
		}
		if out[table] == nil {
			out[table] = map[string]string{}
		}
		out[table][name] = typ
	}
	return out, rows.Err()
}

// columnList splits an INSERT's column list ("a, b, c").
func columnList(list string) []string {
	return strings.Split(list, ", ")
}
