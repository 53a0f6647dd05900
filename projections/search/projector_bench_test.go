package search_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/search/searchbench"
)

// records encodes events as the Kafka records a batch carries.
func records(t testing.TB, reg *events.Registry, evs []events.Event, firstOffset int64) []*kgo.Record {
	out := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		rec := &kgo.Record{Key: []byte(msg.Key), Value: msg.Value, Offset: firstOffset + int64(i), Timestamp: ev.Time}
		for k, v := range msg.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		out[i] = rec
	}
	return out
}

// BenchmarkSearchProjector measures the projector end to end (decode,
// fold into Postgres, build documents, _bulk at external versions, commit
// with the checkpoint) in documents per second, beside a raw _bulk of the
// very same documents into an index with the same mapping (no fold, no
// versions) in the same run, and reports their ratio; `errata bench` runs
// the same measure (searchbench):
//
//	ERRATA_INTEGRATION=1 go test ./projections/search -run '^$' -bench SearchProjector -benchtime 10x
func BenchmarkSearchProjector(b *testing.B) {
	es := esClient(b)
	pool := state(b, testenv.Postgres(b), search.StateSchema)
	res, err := searchbench.Run(context.Background(), searchbench.Config{ES: es, Pool: pool, Prefix: prefix(b, es), Rounds: b.N})
	require.NoError(b, err)
	b.ReportMetric(res.ProjectorPerSec(), "projector_docs/s")
	b.ReportMetric(res.RawPerSec(), "raw_bulk_docs/s")
	b.ReportMetric(res.ProjectorPerSec()/res.RawPerSec(), "ratio")
}
