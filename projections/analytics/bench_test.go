package analytics_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/projections/analytics"
)

// tableRows reads every row of the projection's tables (FINAL) as driver
// values, ready to be inserted again.
func tableRows(b *testing.B, conn driver.Conn) map[string][][]any {
	out := map[string][][]any{}
	for _, table := range analytics.Tables {
		rows, err := conn.Query(context.Background(), "SELECT * FROM "+table+" FINAL")
		require.NoError(b, err)
		types := rows.ColumnTypes()
		for rows.Next() {
			ptrs := make([]any, len(types))
			for i, ct := range types {
				ptrs[i] = reflect.New(ct.ScanType()).Interface()
			}
			require.NoError(b, rows.Scan(ptrs...))
			vals := make([]any, len(ptrs))
			for i, p := range ptrs {
				vals[i] = reflect.ValueOf(p).Elem().Interface()
			}
			out[table] = append(out[table], vals)
		}
		require.NoError(b, rows.Err())
		rows.Close()
	}
	return out
}

// BenchmarkMetricsProjector measures the projector (decode, rows, one
// INSERT per table per batch of 5,000 records, position write) against raw
// clickhouse-go batch inserts of the same rows (one INSERT per table), both
// in the same run on the same ClickHouse:
//
//	ERRATA_INTEGRATION=1 go test ./projections/analytics -run '^$' -bench MetricsProjector -benchtime 3x
func BenchmarkMetricsProjector(b *testing.B) {
	w := newWorkload(5, 2000, 3)
	batches := w.batches(5000, 5)
	proj := newFixture(b, 0)
	proj.feed(b, batches)
	rows := tableRows(b, proj.conn)
	total := 0
	for _, r := range rows {
		total += len(r)
	}
	raw := newFixture(b, 0)
	ctx := context.Background()

	var projTime, rawTime time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for _, batch := range batches {
			if err := proj.proj.Handle(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		projTime += time.Since(start)

		start = time.Now()
		for _, table := range analytics.Tables {
			ins, err := raw.conn.PrepareBatch(ctx, "INSERT INTO "+table)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rows[table] {
				if err := ins.Append(r...); err != nil {
					b.Fatal(err)
				}
			}
			if err := ins.Send(); err != nil {
				b.Fatal(err)
			}
		}
		rawTime += time.Since(start)
	}
	b.StopTimer()
	projRate := float64(total*b.N) / projTime.Seconds()
	rawRate := float64(total*b.N) / rawTime.Seconds()
	b.ReportMetric(projRate, "projector_rows/s")
	b.ReportMetric(rawRate, "raw_insert_rows/s")
	b.ReportMetric(projRate/rawRate, "ratio")
	b.Logf("%d events -> %d rows in %d batches: projector %.0f rows/s, raw clickhouse-go insert %.0f rows/s, ratio %.2f",
		len(w.events), total, len(batches), projRate, rawRate, projRate/rawRate)

	// Both databases hold the same rows.
	require.Equal(b, fmt.Sprint(len(rows["views"])), fmt.Sprint(len(tableRows(b, raw.conn)["views"])))
}
