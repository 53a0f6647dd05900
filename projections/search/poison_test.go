package search_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// parkedLetter is what the projector sent to its dead letterer.
type parkedLetter struct {
	offset int64
	class  string
	cause  string
}

// letters records what the projector parks.
type letters struct {
	mu   sync.Mutex
	sent []parkedLetter
}

func (l *letters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, parkedLetter{rec.Offset, kafka.PermanentClass(cause), cause.Error()})
	return nil
}

// incompressible is n hex characters without repeats (a chain of sha256
// digests).
func incompressible(n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("immense"))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}

// TestSearchProjectorParksPoison runs the search projector over the
// researcher corpus mixed with two poison posts built directly (bypassing
// the API): one whose text holds a NUL, which the Postgres fold refuses,
// and one with a 40,000-character tweet id, whose document Elasticsearch
// refuses (a keyword term beyond Lucene's 32,766-byte limit). The
// registration of the first and the completion of the second are parked
// (and sent to the dead letterer) and every other event is applied: the
// seven corpus documents are indexed. A rebuild into another generation,
// one record per batch, parks the same events with the same reasons and
// gives identical documents and state.
func TestSearchProjectorParksPoison(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	reg := events.NewCatalogRegistry()

	poison := build(
		postSpec{name: "nulpost", platform: events.PlatformX, author: "mallory", outcome: "complete", checkedDay: 7,
			text:   "A post with a NUL\x00 in its text.",
			claims: []claimSpec{{text: "NUL", summary: "s", reasoning: "r", sourceTitle: "t"}}},
		postSpec{name: incompressible(40000), platform: events.PlatformX, author: "mallory", outcome: "complete", checkedDay: 8,
			text:   "A post whose id is far too long for a keyword.",
			claims: []claimSpec{{text: "far too long", summary: "s", reasoning: "r", sourceTitle: "t"}}},
	)
	// build numbers event ids from 1 in every call: give the poison
	// events ids of their own.
	n := 0
	for i := range poison {
		for _, list := range [][]events.Event{poison[i].posts, poison[i].investigation} {
			for j := range list {
				n++
				list[j].ID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("search-poison/%d", n))).String()
			}
		}
	}
	bs := append(corpus(), poison...)
	evs := append(allPosts(bs), allInvestigations(bs)...)
	recs := records(t, reg, evs, 0)
	for _, r := range recs {
		r.Topic = "test.all"
	}
	offsetOf := func(id string) int64 {
		for i, ev := range evs {
			if ev.ID == id {
				return int64(i)
			}
		}
		t.Fatalf("no event %s", id)
		return -1
	}
	nulRegistration := offsetOf(poison[0].posts[0].ID)
	immenseCompletion := offsetOf(poison[1].investigation[1].ID)

	type run struct {
		pool *pgxpool.Pool
		dl   *letters
		docs []byte
	}
	project := func(gen int64, schema string, batch int) run {
		t.Helper()
		idx := search.IndexName(pfx, gen)
		require.NoError(t, search.Ensure(ctx, es, pfx, gen))
		pool := state(t, dbURL, schema)
		dl := &letters{}
		proj := pgproj.NewProjector(search.ProjectorName, pool, reg, search.NewApplierFor(es, idx), dl, logging.Discard())
		for i := 0; i < len(recs); i += batch {
			b := recs[i:min(i+batch, len(recs))]
			require.NoError(t, proj.Handle(ctx, kafka.Batch{Topic: "test.all", Partition: 0, Records: b}))
		}
		docs, err := search.Dump(ctx, es, idx)
		require.NoError(t, err)
		return run{pool: pool, dl: dl, docs: docs}
	}
	live := project(1, "search_state", len(recs))
	rebuilt := project(2, "search_state_g2", 1)

	require.Equal(t, 7, countLines(live.docs), "the corpus' seven documents, not the poison ones")
	require.Equal(t, string(live.docs), string(rebuilt.docs))
	require.NotContains(t, string(live.docs), poison[0].investigationID)
	require.NotContains(t, string(live.docs), poison[1].investigationID)

	nulReason := `search: fold: ERROR: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)`
	// Elasticsearch quotes the field's value: the reason is long (the
	// parked row keeps its first 4,096 bytes).
	immensePrefix := fmt.Sprintf("search: elasticsearch refused 1 of 1 documents: %s (version 2): HTTP 400 document_parsing_exception: "+
		"[1:340] failed to parse field [external_id] of type [keyword] in document with id '%[1]s'. Preview of field's value: '",
		poison[1].investigationID)
	for _, r := range []run{live, rebuilt} {
		require.Len(t, r.dl.sent, 2)
		require.Equal(t, parkedLetter{nulRegistration, "deterministic", nulReason}, r.dl.sent[0])
		require.Equal(t, immenseCompletion, r.dl.sent[1].offset)
		require.Equal(t, "deterministic", r.dl.sent[1].class)
		require.True(t, strings.HasPrefix(r.dl.sent[1].cause, immensePrefix), r.dl.sent[1].cause[:min(400, len(r.dl.sent[1].cause))])

		var rows []string
		q, err := r.pool.Query(ctx, `SELECT log_offset, class, reason FROM projection_parked ORDER BY log_offset`)
		require.NoError(t, err)
		for q.Next() {
			var o int64
			var class, reason string
			require.NoError(t, q.Scan(&o, &class, &reason))
			rows = append(rows, fmt.Sprintf("%d %s %s", o, class, reason))
		}
		require.NoError(t, q.Err())
		require.Equal(t, []string{
			fmt.Sprintf("%d deterministic %s", nulRegistration, r.dl.sent[0].cause),
			fmt.Sprintf("%d deterministic %s", immenseCompletion, kafka.TruncateUTF8(r.dl.sent[1].cause, 4096)),
		}, rows)
		var next int64
		require.NoError(t, r.pool.QueryRow(ctx, `SELECT next_offset FROM projection_checkpoints`).Scan(&next))
		require.Equal(t, int64(len(recs)), next)
	}
	require.Equal(t, dumpState(t, live.pool, "search_state"), dumpState(t, rebuilt.pool, "search_state_g2"))
}

func dumpState(t *testing.T, pool *pgxpool.Pool, schema string) string {
	t.Helper()
	var b strings.Builder
	_, err := pgproj.Dump(context.Background(), pool, schema, &b, pgproj.DumpOptions{})
	require.NoError(t, err)
	return b.String()
}
