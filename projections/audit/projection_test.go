package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
)

// noDeadLetters fails on any parked record: the fixture has no poison.
type noDeadLetters struct{ t *testing.T }

func (d noDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.t.Errorf("parked %s/%d@%d: %v", rec.Topic, rec.Partition, rec.Offset, cause)
	return nil
}

// TestProjectionTrailWithAssessments projects the complete fixture (its
// two assessments, one published and one withheld, with their stance
// exchanges) into the audit tables in one batch and, from offset 0, one
// record per batch: the projection's trail is Build's, the public one is
// Public's, and both copies dump identically.
func TestProjectionTrailWithAssessments(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	reg := events.NewCatalogRegistry()
	f := audittest.Complete("projection-assessments", "1860000000000000009")
	posts := positioned("errata.posts", 0, f.Posts)
	invs := positioned("errata.investigations", 1, f.Investigation)
	want, err := audit.Build(f.InvestigationID, invs, audit.FoldPostVersion(f.PostVersionID, posts))
	require.NoError(t, err)

	recordsOf := func(rs []audit.Record) []*kgo.Record {
		out := make([]*kgo.Record, len(rs))
		for i, r := range rs {
			msg, err := reg.Encode(r.Event)
			require.NoError(t, err)
			out[i] = &kgo.Record{Topic: r.Position.Topic, Partition: r.Position.Partition, Offset: r.Position.Offset,
				Key: []byte(msg.Key), Value: msg.Value, Timestamp: r.Event.Time}
			for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
				out[i].Headers = append(out[i].Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
			}
		}
		return out
	}
	postRecs, invRecs := recordsOf(posts), recordsOf(invs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	project := func(schema string, size int) string {
		pool, err := postgres.Connect(ctx, url, schema)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		require.NoError(t, pgproj.Migrate(ctx, pool, schema, audit.Migrations(), logging.Discard()))
		proj := pgproj.NewProjector(audit.ProjectorName, pool, reg, audit.NewApplier(reg), noDeadLetters{t}, logging.Discard())
		for _, recs := range [][]*kgo.Record{postRecs, invRecs} {
			for i := 0; i < len(recs); i += size {
				b := recs[i:min(i+size, len(recs))]
				require.NoError(t, proj.Handle(ctx, kafka.Batch{Topic: b[0].Topic, Partition: b[0].Partition, Records: b}))
			}
		}
		rd := audit.NewReader(pool, reg)
		full, err := rd.FullTrail(ctx, f.InvestigationID)
		require.NoError(t, err)
		requireSameJSON(t, want, full, "the projection's trail is Build's")
		public, err := rd.Trail(ctx, f.InvestigationID)
		require.NoError(t, err)
		wantPublic, err := want.Public()
		require.NoError(t, err)
		requireSameJSON(t, wantPublic, public, "the public trail")
		var b strings.Builder
		_, err = pgproj.Dump(ctx, pool, schema, &b, pgproj.DumpOptions{})
		require.NoError(t, err)
		return strings.ReplaceAll(b.String(), schema, "S")
	}
	once := project("audit_once", len(invRecs))
	require.Equal(t, once, project("audit_replay", 1), "a replay from offset 0 is identical")
	require.True(t, want.Attempts[1].Submissions[0].Assessment.Published)
	require.False(t, want.Attempts[1].Submissions[2].Assessment.Published)
}
