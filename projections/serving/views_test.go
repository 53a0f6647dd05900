package serving_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// day0 is the UTC day of the view fixtures.
var day0 = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// on returns the time hh:mm:ss.micro on day0 + day days.
func on(day int, hms string) time.Time {
	t, err := time.Parse("15:04:05.999999", hms)
	if err != nil {
		panic(err)
	}
	return day0.AddDate(0, 0, day).Add(time.Duration(t.Hour())*time.Hour +
		time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond()))
}

type creditRow struct{ ViewerKey, IPRangeKey, Day, CreatedAt string }

type statsRow struct {
	ViewCount, UniqueViewScore int64
	LastViewedAt               *string
	UpdatedAt                  string
}

// TestUniqueViews checks the unique-view rules with an IP-range cap of 2:
// one credit per viewer, post and UTC day; at most 2 per IP range, post and
// day, first come first served in log order. Every case is applied three
// ways (all in one batch, one event per batch, batches of two) with the same
// result.
func TestUniqueViews(t *testing.T) {
	t.Parallel()
	type view struct {
		post            int
		viewer, iprange string
		at              time.Time
	}
	type credit struct {
		viewer, iprange string
		at              time.Time // of the credited view; its UTC day is the bucket
	}
	type want struct {
		views, score int64
		last         time.Time
		credits      []credit
	}
	for _, tc := range []struct {
		name  string
		views []view
		want  []want // by post
	}{
		{
			name: "same viewer twice on one UTC day: one credit",
			views: []view{
				{0, "alice", "r1", on(0, "10:00:00")},
				{0, "alice", "r1", on(0, "23:59:59.999999")},
			},
			want: []want{{views: 2, score: 1, last: on(0, "23:59:59.999999"), credits: []credit{{"alice", "r1", on(0, "10:00:00")}}}},
		},
		{
			name: "same viewer on the next UTC day: two credits",
			views: []view{
				{0, "alice", "r1", on(0, "23:59:59.999999")},
				{0, "alice", "r1", on(1, "00:00:00")},
			},
			want: []want{{views: 2, score: 2, last: on(1, "00:00:00"), credits: []credit{
				{"alice", "r1", on(0, "23:59:59.999999")}, {"alice", "r1", on(1, "00:00:00")},
			}}},
		},
		{
			name: "five viewers from one range: capped at two",
			views: []view{
				{0, "v1", "r1", on(0, "09:00:00")}, {0, "v2", "r1", on(0, "09:01:00")}, {0, "v3", "r1", on(0, "09:02:00")},
				{0, "v4", "r1", on(0, "09:03:00")}, {0, "v5", "r1", on(0, "09:04:00")},
			},
			want: []want{{views: 5, score: 2, last: on(0, "09:04:00"), credits: []credit{
				{"v1", "r1", on(0, "09:00:00")}, {"v2", "r1", on(0, "09:01:00")},
			}}},
		},
		{
			name: "another range still credits after the first is capped",
			views: []view{
				{0, "v1", "r1", on(0, "09:00:00")}, {0, "v2", "r1", on(0, "09:01:00")}, {0, "v3", "r1", on(0, "09:02:00")},
				{0, "v4", "r1", on(0, "09:03:00")}, {0, "v5", "r1", on(0, "09:04:00")},
				{0, "v6", "r2", on(0, "09:05:00")}, {0, "v7", "r2", on(0, "09:06:00")}, {0, "v8", "r2", on(0, "09:07:00")},
			},
			want: []want{{views: 8, score: 4, last: on(0, "09:07:00"), credits: []credit{
				{"v1", "r1", on(0, "09:00:00")}, {"v2", "r1", on(0, "09:01:00")},
				{"v6", "r2", on(0, "09:05:00")}, {"v7", "r2", on(0, "09:06:00")},
			}}},
		},
		{
			name: "the range cap resets on the next UTC day",
			views: []view{
				{0, "v1", "r1", on(0, "22:00:00")}, {0, "v2", "r1", on(0, "22:01:00")}, {0, "v3", "r1", on(0, "22:02:00")},
				{0, "v3", "r1", on(1, "01:00:00")}, {0, "v4", "r1", on(1, "01:01:00")}, {0, "v5", "r1", on(1, "01:02:00")},
			},
			want: []want{{views: 6, score: 4, last: on(1, "01:02:00"), credits: []credit{
				{"v1", "r1", on(0, "22:00:00")}, {"v2", "r1", on(0, "22:01:00")},
				{"v3", "r1", on(1, "01:00:00")}, {"v4", "r1", on(1, "01:01:00")},
			}}},
		},
		{
			name: "repeat views do not use up the range's credits",
			views: []view{
				{0, "v1", "r1", on(0, "08:00:00")}, {0, "v1", "r1", on(0, "08:01:00")}, {0, "v1", "r1", on(0, "08:02:00")},
				{0, "v2", "r1", on(0, "08:03:00")},
			},
			want: []want{{views: 4, score: 2, last: on(0, "08:03:00"), credits: []credit{
				{"v1", "r1", on(0, "08:00:00")}, {"v2", "r1", on(0, "08:03:00")},
			}}},
		},
		{
			name: "a viewer changing range gets no second credit that day",
			views: []view{
				{0, "v1", "r1", on(0, "08:00:00")}, {0, "v1", "r2", on(0, "08:01:00")}, {0, "v2", "r2", on(0, "08:02:00")},
				{0, "v3", "r2", on(0, "08:03:00")}, {0, "v4", "r2", on(0, "08:04:00")},
			},
			want: []want{{views: 5, score: 3, last: on(0, "08:04:00"), credits: []credit{
				{"v1", "r1", on(0, "08:00:00")}, {"v2", "r2", on(0, "08:02:00")}, {"v3", "r2", on(0, "08:03:00")},
			}}},
		},
		{
			name: "caps are per post",
			views: []view{
				{0, "v1", "r1", on(0, "08:00:00")}, {1, "v1", "r1", on(0, "08:00:01")},
				{0, "v2", "r1", on(0, "08:01:00")}, {1, "v2", "r1", on(0, "08:01:01")},
				{0, "v3", "r1", on(0, "08:02:00")}, {1, "v3", "r1", on(0, "08:02:01")},
			},
			want: []want{
				{views: 3, score: 2, last: on(0, "08:02:00"), credits: []credit{{"v1", "r1", on(0, "08:00:00")}, {"v2", "r1", on(0, "08:01:00")}}},
				{views: 3, score: 2, last: on(0, "08:02:01"), credits: []credit{{"v1", "r1", on(0, "08:00:01")}, {"v2", "r1", on(0, "08:01:01")}}},
			},
		},
		{
			name: "log order decides, not event time; last_viewed_at is the latest time",
			views: []view{
				{0, "v1", "r1", on(1, "01:00:00")}, // a skewed clock: later time logged first
				{0, "v1", "r1", on(0, "23:00:00")},
				{0, "v2", "r1", on(0, "23:30:00")},
				{0, "v3", "r1", on(0, "23:40:00")},
			},
			want: []want{{views: 4, score: 3, last: on(1, "01:00:00"), credits: []credit{
				{"v1", "r1", on(0, "23:00:00")}, {"v2", "r1", on(0, "23:30:00")}, {"v1", "r1", on(1, "01:00:00")},
			}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newServing(t, 2)
			for mode, sizes := range map[string][]int{"one batch": {1 << 20}, "one event per batch": {1}, "batches of two": {2}} {
				var regs []*events.PostVersionRegisteredV1
				var ps []timed
				for i := range tc.want {
					ext := fmt.Sprintf("%s-%d", mode, i)
					r := registration(events.PlatformSubstack, ext, "Viewed post "+ext)
					regs = append(regs, r)
					ps = append(ps, timed{r, on(-1, "12:00:00")})
				}
				for _, v := range tc.views {
					ps = append(ps, timed{viewOf(regs[v.post], v.viewer, v.iprange), v.at})
				}
				partition := map[string]int32{"one batch": 0, "one event per batch": 1, "batches of two": 2}[mode]
				p.handleInBatches(t, records(t, partition, 0, ps...), sizes...)

				for i, w := range tc.want {
					require.Equal(t, []statsRow{{
						ViewCount: w.views, UniqueViewScore: w.score, LastViewedAt: ptr(pgTime(w.last)), UpdatedAt: pgTime(w.last),
					}}, rowsOf[statsRow](t, p, `SELECT view_count, unique_view_score, last_viewed_at::text, updated_at::text
						FROM posts WHERE id = $1`, regs[i].PostID), "%s: post %d", mode, i)
					var wantCredits []creditRow
					for _, c := range w.credits {
						wantCredits = append(wantCredits, creditRow{viewerKey(c.viewer), rangeKey(c.iprange),
							c.at.UTC().Format(time.DateOnly), pgTime(c.at)})
					}
					require.Equal(t, wantCredits, rowsOf[creditRow](t, p, `SELECT viewer_key, ip_range_key, bucket_day::text, created_at::text
						FROM post_view_credits WHERE post_id = $1 ORDER BY created_at`, regs[i].PostID), "%s: post %d", mode, i)
				}
			}
		})
	}
}

// TestUniqueViewCapIsConfigurable checks that the cap is the applier's:
// five viewers from one range on one day score min(cap, 5).
func TestUniqueViewCapIsConfigurable(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	for _, tc := range []struct{ cap, want int64 }{{0, 0}, {1, 1}, {3, 3}, {10, 5}} {
		// One database, one schema per cap.
		p := newProjection(t, url, fmt.Sprintf("cap_%d", tc.cap), int(tc.cap))
		r := registration(events.PlatformX, "capped", "Capped post")
		ps := []timed{{r, on(0, "00:00:00")}}
		for i := 0; i < 5; i++ {
			ps = append(ps, timed{viewOf(r, fmt.Sprintf("v%d", i), "r1"), on(0, fmt.Sprintf("10:00:0%d", i))})
		}
		p.handle(t, records(t, 0, 0, ps...)...)
		require.Equal(t, []string{fmt.Sprintf("5 %d", tc.want)},
			p.texts(t, `SELECT view_count || ' ' || unique_view_score FROM posts`), "cap %d", tc.cap)
	}
}
