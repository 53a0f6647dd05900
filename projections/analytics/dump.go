package analytics

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/events"
)

// Dump renders the data tables of database canonically, then the parked
// records (_parked, without their reason): per table a header line and one
// JSON array per row (FINAL, so duplicates and unmerged parts do not
// show), rows sorted by their text. Two databases built from the
// same log give identical dumps whatever their merge state.
func Dump(ctx context.Context, conn driver.Conn, database string) ([]byte, error) {
	return dump(ctx, conn, database, nil)
}

// TableTopics names the logical topic (events.Topic*) each table's rows
// come from; log_partition and log_offset are positions in it.
var TableTopics = map[string]events.Topic{
	"post_versions":      events.TopicPosts,
	"views":              events.TopicPosts,
	"investigations":     events.TopicInvestigations,
	"claims":             events.TopicInvestigations,
	"attempts":           events.TopicInvestigations,
	"claim_assessments":  events.TopicInvestigations,
	"assessment_sources": events.TopicInvestigations,
	"analyses":           events.TopicAnalyses,
	"analysis_attempts":  events.TopicAnalyses,
	"post_verdicts":      events.TopicAnalyses,
	"configurations":     events.TopicInvestigations,
	"experiments":        events.TopicInvestigations,
	"appeals":            events.TopicInvestigations,
	"exchanges":          events.TopicInvestigations,
}

// DumpBelow is Dump restricted to the rows whose log position is below
// the given next offsets (by logical topic, then partition; a partition
// missing from the map contributes no rows). ClickHouse has no
// transactions, so a batch in flight may have inserted rows before the
// projector records its position: DumpBelow(positions) is the state at
// exactly those positions, whatever is in flight.
func DumpBelow(ctx context.Context, conn driver.Conn, database string, below map[events.Topic]map[int32]int64) ([]byte, error) {
	if below == nil {
		below = map[events.Topic]map[int32]int64{}
	}
	return dump(ctx, conn, database, below)
}

// positionFilter is a WHERE condition keeping rows below the offsets.
func positionFilter(parts map[int32]int64) string {
	if len(parts) == 0 {
		return "0"
	}
	ps := slices.Sorted(maps.Keys(parts))
	var b strings.Builder
	b.WriteString("multiIf(")
	for _, p := range ps {
		fmt.Fprintf(&b, "log_partition = %d, log_offset < %d, ", p, parts[p])
	}
	b.WriteString("0)")
	return b.String()
}

func dump(ctx context.Context, conn driver.Conn, database string, below map[events.Topic]map[int32]int64) ([]byte, error) {
	if err := ValidDatabase(database); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, table := range Tables {
		where := ""
		if below != nil {
			where = " WHERE " + positionFilter(below[TableTopics[table]])
		}
		lines, err := dumpLines(ctx, conn, fmt.Sprintf(
			"SELECT formatRowNoNewline('JSONCompactEachRow', %s) AS line FROM %s.%s FINAL%s ORDER BY line",
			columns[table], database, table, where))
		if err != nil {
			return nil, fmt.Errorf("dump %s.%s: %w", database, table, err)
		}
		writeSection(&out, table, columns[table], lines)
	}
	// The parked records are part of the state: a rebuild parks the same.
	where := ""
	if below != nil {
		where = " WHERE " + parkedFilter(below)
	}
	lines, err := dumpLines(ctx, conn, fmt.Sprintf(
		"SELECT formatRowNoNewline('JSONCompactEachRow', %s) AS line FROM %s._parked FINAL%s ORDER BY line",
		parkedColumns, database, where))
	if err != nil {
		return nil, fmt.Errorf("dump %s._parked: %w", database, err)
	}
	writeSection(&out, "_parked", parkedColumns, lines)
	return out.Bytes(), nil
}

func writeSection(out *bytes.Buffer, table, cols string, lines [][]byte) {
	fmt.Fprintf(out, "# %s (%s) %d rows\n", table, cols, len(lines))
	for _, l := range lines {
		out.Write(l)
		out.WriteByte('\n')
	}
}

func dumpLines(ctx context.Context, conn driver.Conn, query string) (_ [][]byte, err error) {
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return nil, err
	}
	defer closeRows(rows, &err)
	var lines [][]byte
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		lines = append(lines, []byte(line))
	}
	return lines, rows.Err()
}

// parkedFilter keeps the _parked rows below the offsets of their topic.
func parkedFilter(below map[events.Topic]map[int32]int64) string {
	var conds []string
	for _, topic := range slices.Sorted(maps.Keys(below)) {
		conds = append(conds, fmt.Sprintf("(topic = %s AND %s)", quoteString(string(topic)), positionFilter(below[topic])))
	}
	if len(conds) == 0 {
		return "0"
	}
	return strings.Join(conds, " OR ")
}

// quoteString is a ClickHouse string literal.
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
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
