package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// These tests talk to ERRATA_CLICKHOUSE_URL over HTTP without compression, as the
// projector does: locally that is deploy/local's chdb stand-in, in production a server.

const chFactsDDL = `CREATE TABLE facts (
	id          UInt64,
	version     UInt32,
	claim       String,
	note        Nullable(String),
	observed_at DateTime64(3, 'UTC'),
	post_id     UUID,
	platform    LowCardinality(String),
	tags        Array(String)
) ENGINE = ReplacingMergeTree(version) ORDER BY id`

type chFact struct {
	ID         uint64
	Version    uint32
	Claim      string
	Note       *string
	ObservedAt time.Time
	PostID     uuid.UUID
	Platform   string
	Tags       []string
}

var chPlatforms = []string{"x", "youtube", "tiktok", "facebook"}

// chFactFor is row id at a version. Strings carry blank lines ("\n\n"), which chdb's raw
// insert API cuts at, plus tabs, quotes, backslashes, CRLF, NUL and non-ASCII.
func chFactFor(id uint64, version uint32) chFact {
	var claim string
	switch id % 6 {
	case 0:
		claim = fmt.Sprintf("claim %d\n\nsecond paragraph", id)
	case 1:
		claim = fmt.Sprintf("\n\nstarts blank %d", id)
	case 2:
		claim = fmt.Sprintf("ends blank %d\n\n", id)
	case 3:
		claim = fmt.Sprintf("tab\there \\ 'single' \"double\" ünïcødé 🙂 %d", id)
	case 4:
		claim = ""
	case 5:
		claim = fmt.Sprintf("many\n\n\n\nblank\r\n\r\nlines\x00nul %d", id)
	}
	if version > 1 {
		claim = fmt.Sprintf("v%d %s", version, claim)
	}
	var note *string
	if id%5 != 0 {
		n := fmt.Sprintf("note\n\n%d", id)
		note = &n
	}
	tags := make([]string, 0, id%4)
	for j := uint64(0); j < id%4; j++ {
		if j == 1 {
			tags = append(tags, "a\n\nb")
		} else {
			tags = append(tags, fmt.Sprintf("tag%d", (id+j)%7))
		}
	}
	return chFact{
		ID:         id,
		Version:    version,
		Claim:      claim,
		Note:       note,
		ObservedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(id)*1237*time.Millisecond + time.Duration(version)*time.Hour),
		PostID:     uuid.NewSHA1(uuid.NameSpaceURL, []byte(fmt.Sprintf("post-%d", id))),
		Platform:   chPlatforms[id%uint64(len(chPlatforms))],
		Tags:       tags,
	}
}

func chInsert(ctx context.Context, t testing.TB, conn driver.Conn, facts []chFact) {
	t.Helper()
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO facts")
	require.NoError(t, err)
	for _, f := range facts {
		require.NoError(t, batch.Append(f.ID, f.Version, f.Claim, f.Note, f.ObservedAt, f.PostID, f.Platform, f.Tags))
	}
	require.NoError(t, batch.Send())
}

func chFacts(from, to uint64, version uint32) []chFact {
	out := make([]chFact, 0, to-from)
	for id := from; id < to; id++ {
		out = append(out, chFactFor(id, version))
	}
	return out
}

// chCheckAll reads the whole table (FINAL) and compares every row with want, then
// compares aggregates computed by the engine with the same figures computed here.
func chCheckAll(ctx context.Context, t *testing.T, conn driver.Conn, want []chFact) {
	t.Helper()
	rows, err := conn.Query(ctx, `SELECT id, version, claim, note, observed_at, post_id, platform, tags
		FROM facts FINAL ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	n := 0
	for rows.Next() {
		var got chFact
		require.NoError(t, rows.Scan(&got.ID, &got.Version, &got.Claim, &got.Note, &got.ObservedAt, &got.PostID, &got.Platform, &got.Tags))
		require.Less(t, n, len(want), "more rows than inserted")
		w := want[n]
		if got.ID != w.ID || got.Version != w.Version || got.Claim != w.Claim || got.PostID != w.PostID ||
			got.Platform != w.Platform || !got.ObservedAt.Equal(w.ObservedAt) ||
			(got.Note == nil) != (w.Note == nil) || (got.Note != nil && *got.Note != *w.Note) ||
			strings.Join(got.Tags, "\x01") != strings.Join(w.Tags, "\x01") || len(got.Tags) != len(w.Tags) {
			t.Fatalf("row %d differs:\n got  %#v (note %v)\n want %#v (note %v)", n, got, deref(got.Note), w, deref(w.Note))
		}
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(want), n, "rows read back")

	var (
		blankLines, notes, sumID, tagCount, platforms, blankTags, claimBytes uint64
		minAt, maxAt                                                         time.Time
	)
	for _, f := range want {
		if strings.Contains(f.Claim, "\n\n") {
			blankLines++
		}
		if f.Note != nil {
			notes++
		}
		sumID += f.ID
		tagCount += uint64(len(f.Tags))
		for _, tag := range f.Tags {
			if tag == "a\n\nb" {
				blankTags++
				break
			}
		}
		claimBytes += uint64(len(f.Claim))
		if minAt.IsZero() || f.ObservedAt.Before(minAt) {
			minAt = f.ObservedAt
		}
		if f.ObservedAt.After(maxAt) {
			maxAt = f.ObservedAt
		}
	}
	platforms = uint64(len(chPlatforms))

	var (
		gotCount, gotBlank, gotNotes, gotSumID, gotTags, gotPlatforms, gotBlankTags, gotClaimBytes uint64
		gotMin, gotMax                                                                             time.Time
	)
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(), countIf(position(claim, '\n\n') > 0), count(note),
		sum(id), sum(length(tags)), uniqExact(platform), countIf(has(tags, 'a\n\nb')), sum(length(claim)),
		min(observed_at), max(observed_at)
		FROM facts FINAL`).Scan(&gotCount, &gotBlank, &gotNotes, &gotSumID, &gotTags, &gotPlatforms,
		&gotBlankTags, &gotClaimBytes, &gotMin, &gotMax))
	require.Equal(t, uint64(len(want)), gotCount, "count()")
	require.Equal(t, blankLines, gotBlank, "claims with a blank line")
	require.Equal(t, notes, gotNotes, "count(note)")
	require.Equal(t, sumID, gotSumID, "sum(id)")
	require.Equal(t, tagCount, gotTags, "sum(length(tags))")
	require.Equal(t, platforms, gotPlatforms, "uniqExact(platform)")
	require.Equal(t, blankTags, gotBlankTags, "rows tagged a\\n\\nb")
	require.Equal(t, claimBytes, gotClaimBytes, "sum(length(claim))")
	require.True(t, minAt.Equal(gotMin), "min(observed_at) %s, want %s", gotMin, minAt)
	require.True(t, maxAt.Equal(gotMax), "max(observed_at) %s, want %s", gotMax, maxAt)
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func TestClickHouseHTTP(t *testing.T) {
	conn, db := testenv.ClickHouse(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	require.NoError(t, conn.Ping(ctx))

	// The version the driver negotiated and the one the engine reports agree, and are
	// new enough for clickhouse-go/v2.
	sv, err := conn.ServerVersion()
	require.NoError(t, err)
	var version, current string
	require.NoError(t, conn.QueryRow(ctx, "SELECT version(), currentDatabase()").Scan(&version, &current))
	require.Equal(t, db, current)
	require.True(t, strings.HasPrefix(version, fmt.Sprintf("%d.%d.", sv.Version.Major, sv.Version.Minor)), "version() %s, handshake %s", version, sv)
	require.True(t, sv.Version.Major > 25 || (sv.Version.Major == 25 && sv.Version.Minor >= 8), "server %s is older than 25.8", sv)
	t.Logf("server %s (%s)", version, sv.DisplayName)

	require.NoError(t, conn.Exec(ctx, chFactsDDL))

	// First batch: 20,000 rows in one Native block.
	const total = 20_000
	want := chFacts(0, total, 1)
	start := time.Now()
	chInsert(ctx, t, conn, want)
	t.Logf("inserted %d rows in %s", total, time.Since(start))
	chCheckAll(ctx, t, conn, want)

	// Server-side query parameters (param_* in the URL).
	var claim string
	pctx := clickhouse.Context(ctx, clickhouse.WithParameters(clickhouse.Parameters{"id": "12345"}))
	require.NoError(t, conn.QueryRow(pctx, "SELECT claim FROM facts FINAL WHERE id = {id:UInt64}").Scan(&claim))
	require.Equal(t, chFactFor(12345, 1).Claim, claim)

	// Settings in the URL apply to their own request only.
	var setting string
	sctx := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_block_size": 1234}))
	require.NoError(t, conn.QueryRow(sctx, "SELECT toString(getSetting('max_block_size'))").Scan(&setting))
	require.Equal(t, "1234", setting)
	require.NoError(t, conn.QueryRow(ctx, "SELECT toString(getSetting('max_block_size'))").Scan(&setting))
	require.NotEqual(t, "1234", setting)

	// Errors arrive as typed exceptions with the server's codes and HTTP statuses.
	for _, c := range []struct {
		sql    string
		code   int32
		status int
	}{
		{"SELECT * FROM no_such_table", 60, 404},
		{"SELEC 1", 62, 400},
		{"SELECT throwIf(1)", 395, 500},
	} {
		_, err := conn.Query(ctx, c.sql)
		var ex *clickhouse.Exception
		require.ErrorAs(t, err, &ex, c.sql)
		require.Equal(t, c.code, ex.Code, "%s: %v", c.sql, err)
		var he *clickhouse.HTTPError
		require.ErrorAs(t, err, &he, c.sql)
		require.Equal(t, c.status, he.StatusCode, c.sql)
	}
	_, err = conn.PrepareBatch(ctx, "INSERT INTO no_such_table")
	var ex *clickhouse.Exception
	require.ErrorAs(t, err, &ex)
	require.EqualValues(t, 60, ex.Code)

	// Second batch: the first 10,000 keys again at version 2. ReplacingMergeTree keeps the
	// newest version of each key, visible with FINAL before any merge and without it after.
	chInsert(ctx, t, conn, chFacts(0, total/2, 2))
	var v2 uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT countIf(version = 2) FROM facts FINAL").Scan(&v2))
	require.Equal(t, uint64(total/2), v2)
	want = append(chFacts(0, total/2, 2), chFacts(total/2, total, 1)...)
	chCheckAll(ctx, t, conn, want)

	require.NoError(t, conn.Exec(ctx, "OPTIMIZE TABLE facts FINAL"))
	var plain uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM facts").Scan(&plain))
	require.Equal(t, uint64(total), plain)
}

// TestClickHouseHTTPConcurrent runs requests from several connections at once, each with
// its own database and settings, as projector workers do. The stand-in serialises them on
// one engine session and must switch database and settings per request.
func TestClickHouseHTTPConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const workers, rounds, rowsPerRound = 6, 15, 200
	type worker struct {
		conn driver.Conn
		db   string
	}
	ws := make([]worker, workers)
	for i := range ws {
		ws[i].conn, ws[i].db = testenv.ClickHouse(t)
		require.NoError(t, ws[i].conn.Exec(ctx, chFactsDDL))
	}
	var g errgroup.Group
	for i, w := range ws {
		g.Go(func() error {
			for r := 0; r < rounds; r++ {
				batch, err := w.conn.PrepareBatch(ctx, "INSERT INTO facts")
				if err != nil {
					return err
				}
				for _, f := range chFacts(uint64(r*rowsPerRound), uint64((r+1)*rowsPerRound), uint32(i+1)) {
					if err := batch.Append(f.ID, f.Version, f.Claim, f.Note, f.ObservedAt, f.PostID, f.Platform, f.Tags); err != nil {
						return err
					}
				}
				if err := batch.Send(); err != nil {
					return err
				}
				blockSize := 1000 + i*100 + r
				sctx := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"max_block_size": blockSize}))
				var db, setting string
				var n uint64
				if err := w.conn.QueryRow(sctx, "SELECT currentDatabase(), toString(getSetting('max_block_size')), count() FROM facts WHERE version = {v:UInt32}",
					clickhouse.Named("v", fmt.Sprint(i+1))).Scan(&db, &setting, &n); err != nil {
					return err
				}
				if db != w.db || setting != fmt.Sprint(blockSize) || n != uint64((r+1)*rowsPerRound) {
					return fmt.Errorf("worker %d round %d: database %s (want %s), max_block_size %s (want %d), rows %d (want %d)",
						i, r, db, w.db, setting, blockSize, n, (r+1)*rowsPerRound)
				}
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	for i, w := range ws {
		chCheckAll(ctx, t, w.conn, chFacts(0, rounds*rowsPerRound, uint32(i+1)))
	}
}

// BenchmarkClickHouseInsert measures batch inserts through ERRATA_CLICKHOUSE_URL, one
// Native block per batch (each batch is a DESCRIBE TABLE plus an INSERT request):
//
//	ERRATA_INTEGRATION=1 go test ./deploy/ -run '^$' -bench ClickHouseInsert -benchtime 5x
func BenchmarkClickHouseInsert(b *testing.B) {
	for _, size := range []int{100, 20_000, 200_000} {
		b.Run(fmt.Sprintf("rows=%d", size), func(b *testing.B) {
			conn, _ := testenv.ClickHouse(b)
			ctx := context.Background()
			// Plain MergeTree: the batches repeat the same keys, which ReplacingMergeTree would merge away.
			require.NoError(b, conn.Exec(ctx, strings.Replace(chFactsDDL, "ReplacingMergeTree(version)", "MergeTree", 1)))
			facts := chFacts(0, uint64(size), 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				chInsert(ctx, b, conn, facts)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "rows/s")
			var n uint64
			require.NoError(b, conn.QueryRow(ctx, "SELECT count() FROM facts").Scan(&n))
			require.Equal(b, uint64(b.N*size), n)
		})
	}
}
