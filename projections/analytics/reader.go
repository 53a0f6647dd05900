package analytics

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
)

// Reader answers the analyst and public metrics from the projection.
type Reader struct {
	current atomic.Pointer[readerConn]
}

type readerConn struct{ driver.Conn }

// NewReader reads from conn's default database.
func NewReader(conn driver.Conn) *Reader {
	r := &Reader{}
	r.current.Store(&readerConn{conn})
	return r
}

// Swap makes the reader read from conn (a rebuilt generation's database)
// from the next query on, and returns the connection it used before, for
// the caller to close once queries in flight are done.
func (r *Reader) Swap(conn driver.Conn) driver.Conn { return r.current.Swap(&readerConn{conn}).Conn }

func (r *Reader) conn() driver.Conn { return r.current.Load().Conn }

// chTime renders a time as a DateTime64(3, 'UTC') parameter value. Windows
// compare at millisecond precision, like the stored event times.
func chTime(t time.Time) string { return ms(t).Format("2006-01-02 15:04:05.000") }

// Validate reports a Filter the metrics cannot answer: an unknown platform,
// an author id that is not a UUID, a window whose start is not before its end.
func (f Filter) Validate() error {
	if f.Platform != "" && !events.ValidPlatform(f.Platform) {
		return fmt.Errorf("%w: platform %q is unknown (one of %s)", ErrInvalidFilter, f.Platform, strings.Join(events.Platforms, ", "))
	}
	if f.AuthorID != "" {
		if u, err := uuid.Parse(f.AuthorID); err != nil || u.String() != f.AuthorID {
			return fmt.Errorf("%w: authorId %q is not a lowercase UUID", ErrInvalidFilter, f.AuthorID)
		}
	}
	if f.WindowStart != nil && f.WindowEnd != nil && !ms(*f.WindowStart).Before(ms(*f.WindowEnd)) {
		return fmt.Errorf("%w: windowStart %s is not before windowEnd %s", ErrInvalidFilter,
			f.WindowStart.UTC().Format(time.RFC3339Nano), f.WindowEnd.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// where renders the filter as conditions on complete_investigations with
// server-side parameters.
func (f Filter) where() (string, []any) {
	conds := []string{"1"}
	var params []any
	if f.Platform != "" {
		conds = append(conds, "platform = {platform:String}")
		params = append(params, clickhouse.Named("platform", f.Platform))
	}
	if f.AuthorID != "" {
		conds = append(conds, "author_id = {author_id:String}")
		params = append(params, clickhouse.Named("author_id", f.AuthorID))
	}
	if f.WindowStart != nil {
		conds = append(conds, "completed_at >= {window_start:DateTime64(3, 'UTC')}")
		params = append(params, clickhouse.Named("window_start", chTime(*f.WindowStart)))
	}
	if f.WindowEnd != nil {
		conds = append(conds, "completed_at < {window_end:DateTime64(3, 'UTC')}")
		params = append(params, clickhouse.Named("window_end", chTime(*f.WindowEnd)))
	}
	return strings.Join(conds, " AND "), params
}

// Incidence is publicMetrics: among posts with >= 1 COMPLETE investigation
// matching f (platform and author of the investigated version, completion
// time in [WindowStart, WindowEnd)), how many have >= 1 such investigation
// with >= 1 claim. The incidence is 0 when nothing matches.
func (r *Reader) Incidence(ctx context.Context, f Filter) (Incidence, error) {
	if err := f.Validate(); err != nil {
		return Incidence{}, err
	}
	where, params := f.where()
	var total, flagged uint64
	err := r.conn().QueryRow(ctx, `SELECT count(), countIf(flagged) FROM (
			SELECT post_id, max(claim_count > 0) AS flagged
			FROM complete_investigations
			WHERE `+where+`
			GROUP BY post_id)`, params...).Scan(&total, &flagged)
	if err != nil {
		return Incidence{}, fmt.Errorf("metrics incidence: %w", err)
	}
	out := Incidence{TotalInvestigatedPosts: int64(total), InvestigatedPostsWithFlags: int64(flagged)}
	if total > 0 {
		out.FactCheckIncidence = float64(flagged) / float64(total)
	}
	return out, nil
}

// closeRows closes rows at the end of a read and reports its error in
// *err unless an error came first. Close drains what is left of the
// result: an exception ClickHouse sends after the last block can surface
// only there, when Next saw the stream end first.
func closeRows(rows driver.Rows, err *error) {
	if cerr := rows.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// AuthorStat is one author's all-time counts.
type AuthorStat struct {
	AuthorID           string
	Platform           string
	DisplayName        string
	InvestigatedPosts  int64
	FlaggedPosts       int64
	FlaggedClaims      int64
	FactCheckIncidence float64
}

// AuthorStats lists authors by flagged claims (then investigated posts,
// then id), limit of them (<= 0: all). platform narrows to one platform.
func (r *Reader) AuthorStats(ctx context.Context, platform string, limit int) (_ []AuthorStat, err error) {
	if err := (Filter{Platform: platform}).Validate(); err != nil {
		return nil, err
	}
	q := `SELECT author_id, platform, display_name, investigated_posts, flagged_posts, flagged_claims, fact_check_incidence
		FROM author_stats WHERE {platform:String} = '' OR platform = {platform:String}
		ORDER BY flagged_claims DESC, investigated_posts DESC, author_id`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	rows, err := r.conn().Query(ctx, q, clickhouse.Named("platform", platform))
	if err != nil {
		return nil, fmt.Errorf("metrics author stats: %w", err)
	}
	defer closeRows(rows, &err)
	var out []AuthorStat
	for rows.Next() {
		var s AuthorStat
		var posts, flaggedPosts, claims uint64
		if err := rows.Scan(&s.AuthorID, &s.Platform, &s.DisplayName, &posts, &flaggedPosts, &claims, &s.FactCheckIncidence); err != nil {
			return nil, fmt.Errorf("metrics author stats: %w", err)
		}
		s.InvestigatedPosts, s.FlaggedPosts, s.FlaggedClaims = int64(posts), int64(flaggedPosts), int64(claims)
		out = append(out, s)
	}
	return out, rows.Err()
}

// Day is one UTC day of one platform in the daily series.
type Day struct {
	Day                     time.Time
	Platform                string
	InvestigationsCompleted int64
	PostsFlagged            int64
	Claims                  int64
	Views                   int64
}

// Daily returns the daily series for days in [from, to) (UTC days; nil
// bounds are open), ordered by day and platform; platform "" means all.
func (r *Reader) Daily(ctx context.Context, platform string, from, to *time.Time) (_ []Day, err error) {
	if err := (Filter{Platform: platform, WindowStart: from, WindowEnd: to}).Validate(); err != nil {
		return nil, err
	}
	conds := []string{"({platform:String} = '' OR platform = {platform:String})"}
	params := []any{clickhouse.Named("platform", platform)}
	if from != nil {
		conds = append(conds, "day >= toDate({from:DateTime64(3, 'UTC')})")
		params = append(params, clickhouse.Named("from", chTime(*from)))
	}
	if to != nil {
		conds = append(conds, "day < toDate({to:DateTime64(3, 'UTC')})")
		params = append(params, clickhouse.Named("to", chTime(*to)))
	}
	rows, err := r.conn().Query(ctx, `SELECT day, platform, investigations_completed, posts_flagged, claims, views
		FROM daily_series WHERE `+strings.Join(conds, " AND ")+` ORDER BY day, platform`, params...)
	if err != nil {
		return nil, fmt.Errorf("metrics daily series: %w", err)
	}
	defer closeRows(rows, &err)
	var out []Day
	for rows.Next() {
		var d Day
		var completed, flagged, claims, views uint64
		if err := rows.Scan(&d.Day, &d.Platform, &completed, &flagged, &claims, &views); err != nil {
			return nil, fmt.Errorf("metrics daily series: %w", err)
		}
		d.Day = d.Day.UTC()
		d.InvestigationsCompleted, d.PostsFlagged, d.Claims, d.Views = int64(completed), int64(flagged), int64(claims), int64(views)
		out = append(out, d)
	}
	return out, rows.Err()
}
