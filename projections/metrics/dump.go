package metrics

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Dump renders the data tables of database canonically: per table a header
// line and one JSON array per row (FINAL, so duplicates and unmerged parts
// do not show), rows sorted by their text. Two databases built from the
// same log give identical dumps whatever their merge state.
func Dump(ctx context.Context, conn driver.Conn, database string) ([]byte, error) {
	if err := ValidDatabase(database); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, table := range Tables {
		rows, err := conn.Query(ctx, fmt.Sprintf(
			"SELECT formatRowNoNewline('JSONCompactEachRow', %s) AS line FROM %s.%s FINAL ORDER BY line",
			columns[table], database, table))
		if err != nil {
			return nil, fmt.Errorf("dump %s.%s: %w", database, table, err)
		}
		var lines [][]byte
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return nil, fmt.Errorf("dump %s.%s: %w", database, table, err)
			}
			lines = append(lines, []byte(line))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("dump %s.%s: %w", database, table, err)
		}
		fmt.Fprintf(&out, "# %s (%s) %d rows\n", table, columns[table], len(lines))
		for _, l := range lines {
			out.Write(l)
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}

// Checksum is the sha256 of Dump, in hex.
func Checksum(ctx context.Context, conn driver.Conn, database string) (string, error) {
	d, err := Dump(ctx, conn, database)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(d)
	return hex.EncodeToString(sum[:]), nil
}
