package analytics_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/projections/analytics/analyticsbench"
)

// BenchmarkMetricsProjector measures the projector (decode, rows, one
// INSERT per table per batch of 5,000 records, position write) against raw
// clickhouse-go batch inserts of the same rows (one INSERT per table), both
// in the same run on the same ClickHouse; `errata bench` runs the same
// measure (analyticsbench):
//
//	ERRATA_INTEGRATION=1 go test ./projections/analytics -run '^$' -bench MetricsProjector -benchtime 3x
func BenchmarkMetricsProjector(b *testing.B) {
	w := newWorkload(5, 2000, 3)
	proj, raw := newFixture(b, 0), newFixture(b, 0)
	res, err := analyticsbench.Run(context.Background(), analyticsbench.Config{Projector: proj.proj, ProjectorConn: proj.conn,
		Raw: raw.conn, Batches: w.batches(5000, 5), Rounds: b.N})
	require.NoError(b, err)
	b.ReportMetric(res.ProjectorPerSec(), "projector_rows/s")
	b.ReportMetric(res.RawPerSec(), "raw_insert_rows/s")
	b.ReportMetric(res.ProjectorPerSec()/res.RawPerSec(), "ratio")
	b.Logf("%d events -> %d rows: projector %.0f rows/s, raw clickhouse-go insert %.0f rows/s, ratio %.2f",
		res.Events, res.Rows, res.ProjectorPerSec(), res.RawPerSec(), res.ProjectorPerSec()/res.RawPerSec())
}
