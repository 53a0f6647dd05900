package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// benchBatch is how many investigations one iteration projects: one
// registration and one completion (two claims) each, as two Kafka batches.
const benchBatch = 500

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
// versions) in the same run, and reports their ratio.
func BenchmarkSearchProjector(b *testing.B) {
	ctx := context.Background()
	es := esClient(b)
	pfx := prefix(b, es)
	projIdx, rawIdx := search.IndexName(pfx, 1), search.IndexName(pfx, 2)
	require.NoError(b, search.CreateIndex(ctx, es, projIdx))
	require.NoError(b, search.CreateIndex(ctx, es, rawIdx))
	pool := state(b, testenv.Postgres(b), search.StateSchema)
	reg := events.NewCatalogRegistry()
	proj := pgproj.NewProjector(search.ProjectorName, pool, reg, search.NewApplierFor(es, projIdx),
		kafka.NewDeadLetter(nil, "unused", "bench", logging.Discard()), logging.Discard())

	var projTime, rawTime time.Duration
	var docs int
	var offset int64
	for i := 0; b.Loop(); i++ {
		specs := make([]postSpec, benchBatch)
		for j := range specs {
			specs[j] = postSpec{name: fmt.Sprintf("bench-%d-%d", i, j), platform: events.PlatformX, author: fmt.Sprintf("a%d", j%50),
				outcome: "complete", checkedDay: j % 30,
				text: fmt.Sprintf("Post %d of round %d says the Moon is made of cheese and the Eiffel Tower is %d metres tall.", j, i, 200+j),
				claims: []claimSpec{
					{text: "the Moon is made of cheese", summary: "The Moon is rock.", reasoning: "Lunar samples are basalt and anorthosite.", sourceTitle: "Apollo samples"},
					{text: fmt.Sprintf("the Eiffel Tower is %d metres tall", 200+j), summary: "It is 330 metres tall.", reasoning: "Official height including antennas.", sourceTitle: "Tower facts"},
				}}
		}
		c := build(specs...)
		var posts, invs []events.Event
		for _, f := range c {
			posts = append(posts, f.posts...)
			invs = append(invs, f.investigation[len(f.investigation)-1]) // the completion
		}
		postRecs := records(b, reg, posts, offset)
		invRecs := records(b, reg, invs, offset)
		offset += int64(benchBatch)

		startProj := time.Now()
		require.NoError(b, proj.Handle(ctx, kafka.Batch{Topic: "posts", Partition: 0, Records: postRecs}))
		require.NoError(b, proj.Handle(ctx, kafka.Batch{Topic: "investigations", Partition: 0, Records: invRecs}))
		projTime += time.Since(startProj)

		// The same documents, raw.
		ids := make([]string, len(c))
		for j, f := range c {
			ids[j] = f.investigationID
		}
		tx, err := pool.Begin(ctx)
		require.NoError(b, err)
		built, err := search.BuildDocuments(ctx, tx, ids)
		require.NoError(b, err)
		require.NoError(b, tx.Rollback(ctx))
		require.Len(b, built, benchBatch)
		var body bytes.Buffer
		for _, d := range built {
			fmt.Fprintf(&body, `{"index":{"_index":%q,"_id":%q}}`+"\n", rawIdx, d.ID)
			body.Write(d.Source)
			body.WriteByte('\n')
		}
		startRaw := time.Now()
		res, err := esapi.BulkRequest{Body: &body}.Do(ctx, es)
		require.NoError(b, err)
		var ans struct {
			Errors bool `json:"errors"`
		}
		require.Equal(b, http.StatusOK, res.StatusCode)
		require.NoError(b, json.NewDecoder(res.Body).Decode(&ans))
		res.Body.Close()
		rawTime += time.Since(startRaw)
		require.False(b, ans.Errors)
		docs += benchBatch
	}
	projRate := float64(docs) / projTime.Seconds()
	rawRate := float64(docs) / rawTime.Seconds()
	b.ReportMetric(projRate, "projector_docs/s")
	b.ReportMetric(rawRate, "raw_bulk_docs/s")
	b.ReportMetric(projRate/rawRate, "ratio")

	// Both indices hold the same documents.
	p, err := search.Dump(ctx, es, projIdx)
	require.NoError(b, err)
	r, err := search.Dump(ctx, es, rawIdx)
	require.NoError(b, err)
	require.Equal(b, string(r), string(p))
}
