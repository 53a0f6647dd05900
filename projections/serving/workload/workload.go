// Package workload generates a deterministic stream of post events, the
// registrations and views the API appends, together with the state the
// serving projection must reach from it, computed by a straightforward
// model of the spec's rules rather than by the projector; Verify compares
// a projection with that state. Tests and `errata bench` share it, so it
// is ordinary code, not test support.
package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// Posts is a generated stream of post events plus the serving projection's
// expected state after it.
type Posts struct {
	Events []events.Event
	Expect Expectation
}

// Expectation is what the serving projection must hold after a workload.
type Expectation struct {
	Posts       int
	Versions    int
	Views       int
	Credits     int
	ViewCount   map[string]int64 // by post id
	UniqueScore map[string]int64 // by post id
	SeenCount   map[string]int   // by post version id
}

// Spec shapes a workload.
type Spec struct {
	Seed         uint64
	Posts        int
	ViewsPerPost int
	// Viewers, IPRanges and Days bound the random viewer identity space,
	// so that credits, duplicates and caps all occur.
	Viewers  int
	IPRanges int
	Days     int
	// IPRangeDailyCap must equal the projector's cap.
	IPRangeDailyCap int
	Start           time.Time
	// FirstPost numbers the posts from FirstPost on, so workloads of
	// distinct seeds and first posts append distinct posts to one log.
	FirstPost int
}

func hexKey(kind string, n int) string {
	s := sha256.Sum256([]byte(fmt.Sprintf("%s-%d", kind, n)))
	return hex.EncodeToString(s[:])
}

// Generate builds spec.Posts registrations (every tenth registered twice)
// and spec.ViewsPerPost views per post, interleaved across posts with each
// post's own events in order, as the API would append them.
func Generate(spec Spec) Posts {
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15)) //nolint:gosec // G404: a workload must be the same for the same seed; nothing secret
	reg := events.NewCatalogRegistry()
	exp := Expectation{
		ViewCount: map[string]int64{}, UniqueScore: map[string]int64{}, SeenCount: map[string]int{},
	}
	type key struct {
		post, who string
		day       int
	}
	credited := map[key]bool{}
	rangeCredits := map[key]int{}

	// Each post's queue of events, drained in random interleaving.
	queues := make([][]events.Payload, spec.Posts)
	days := make([][]int, spec.Posts)
	for q := range queues {
		i := spec.FirstPost + q
		ext := fmt.Sprintf("%d", 1_000_000+i)
		text := fmt.Sprintf("Post number %d claims that water boils at %d degrees at sea level.", i, 90+i%20)
		id, err := content.ComputeVersionIdentity(text, nil)
		if err != nil {
			panic(err)
		}
		postID := events.PostID(events.PlatformX, ext)
		versionID := events.PostVersionID(postID, id.VersionHash)
		regPayload := &events.PostVersionRegisteredV1{
			PostID: postID, PostVersionID: versionID, Platform: events.PlatformX, ExternalID: ext,
			URL: "https://x.com/someone/status/" + ext, VersionHash: id.VersionHash, ContentHash: id.ContentHash,
			OccurrencesHash: id.OccurrencesHash, ContentText: text, WordCount: content.WordCount(text),
			Provenance: events.ProvenanceClientFallback, ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
			Author: &events.AuthorV1{PlatformUserID: fmt.Sprintf("author%d", i%7), DisplayName: fmt.Sprintf("Author %d", i%7)},
			X:      &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: fmt.Sprintf("author%d", i%7), MediaURLs: []string{}},
		}
		queues[q] = append(queues[q], regPayload)
		days[q] = append(days[q], 0)
		exp.Posts++
		exp.Versions++
		exp.SeenCount[versionID]++
		if i%10 == 0 {
			queues[q] = append(queues[q], regPayload)
			days[q] = append(days[q], 0)
			exp.SeenCount[versionID]++
		}
		for v := 0; v < spec.ViewsPerPost; v++ {
			viewer, ipRange, day := rng.IntN(spec.Viewers), rng.IntN(spec.IPRanges), rng.IntN(spec.Days)
			queues[q] = append(queues[q], &events.PostViewRecordedV1{
				PostID: postID, PostVersionID: versionID, Platform: events.PlatformX, ExternalID: ext,
				ViewerKey: hexKey("viewer", viewer), IPRangeKey: hexKey("range", ipRange),
			})
			days[q] = append(days[q], day)
		}
	}
	// Days must not go backwards within a post, as real time does not.
	for i := range days {
		maxDay := 0
		for j := range days[i] {
			if days[i][j] < maxDay {
				days[i][j] = maxDay
			}
			maxDay = days[i][j]
		}
	}

	var out []events.Event
	next := make([]int, spec.Posts)
	remaining := 0
	for _, q := range queues {
		remaining += len(q)
	}
	seq := 0
	for remaining > 0 {
		i := rng.IntN(spec.Posts)
		if next[i] == len(queues[i]) {
			continue
		}
		p, day := queues[i][next[i]], days[i][next[i]]
		next[i]++
		remaining--
		seq++
		at := spec.Start.Add(time.Duration(day)*24*time.Hour + time.Duration(seq)*time.Millisecond)
		ev, err := reg.New(p, events.Meta{
			ID:   uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("workload-%d-%d", spec.Seed, seq))).String(),
			Time: at,
		})
		if err != nil {
			panic(err)
		}
		out = append(out, ev)
		// The model of the unique-view rules (spec 2.10).
		if v, ok := p.(*events.PostViewRecordedV1); ok {
			exp.Views++
			exp.ViewCount[v.PostID]++
			bucket := int(at.Sub(spec.Start) / (24 * time.Hour))
			viewerKey := key{v.PostID, v.ViewerKey, bucket}
			rangeKey := key{v.PostID, v.IPRangeKey, bucket}
			if !credited[viewerKey] && rangeCredits[rangeKey] < spec.IPRangeDailyCap {
				credited[viewerKey] = true
				rangeCredits[rangeKey]++
				exp.UniqueScore[v.PostID]++
				exp.Credits++
			}
		}
	}
	return Posts{Events: out, Expect: exp}
}

// Verify compares the serving projection behind pool with exp and
// describes every difference; nil means an exact match.
func Verify(ctx context.Context, pool *pgxpool.Pool, exp Expectation) error {
	var errs []error
	count := func(q string) int {
		var n int
		if err := pool.QueryRow(ctx, q).Scan(&n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", q, err))
		}
		return n
	}
	for q, want := range map[string]int{
		"SELECT count(*) FROM posts":                                 exp.Posts,
		"SELECT count(*) FROM post_versions":                         exp.Versions,
		"SELECT COALESCE(sum(view_count), 0)::int FROM posts":        exp.Views,
		"SELECT count(*) FROM post_view_credits":                     exp.Credits,
		"SELECT COALESCE(sum(unique_view_score), 0)::int FROM posts": exp.Credits,
	} {
		if got := count(q); got != want {
			errs = append(errs, fmt.Errorf("%s = %d, want %d", q, got, want))
		}
	}
	rows, err := pool.Query(ctx, "SELECT id::text, view_count, unique_view_score FROM posts")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for rows.Next() {
		var id string
		var views, score int64
		if err := rows.Scan(&id, &views, &score); err != nil {
			return err
		}
		if views != exp.ViewCount[id] || score != exp.UniqueScore[id] {
			errs = append(errs, fmt.Errorf("post %s: views %d score %d, want %d and %d", id, views, score, exp.ViewCount[id], exp.UniqueScore[id]))
		}
	}
	rows.Close()
	rows, err = pool.Query(ctx, "SELECT id::text, seen_count FROM post_versions")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for rows.Next() {
		var id string
		var seen int
		if err := rows.Scan(&id, &seen); err != nil {
			return err
		}
		if seen != exp.SeenCount[id] {
			errs = append(errs, fmt.Errorf("version %s: seen_count %d, want %d", id, seen, exp.SeenCount[id]))
		}
	}
	rows.Close()
	if len(errs) > 10 {
		errs = append(errs[:10], fmt.Errorf("... and %d more differences", len(errs)-10))
	}
	return errors.Join(errs...)
}
