package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// TestCorroborationCountsDistinctReporters: each distinct authenticated
// reporter of a version counts once; anonymous registrations and repeats
// do not count; another version of the post has its own count.
func TestCorroborationCountsDistinctReporters(t *testing.T) {
	t.Parallel()
	p := newServing(t, 10)
	t0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	reported := func(text, reporter string) *events.PostVersionRegisteredV1 {
		r := registration(events.PlatformX, "777", text)
		r.ReporterKey = reporter
		return r
	}
	a, b := hex64("reporter:a"), hex64("reporter:b")
	v1 := reported("First text.", a)
	recs := records(t, 0, 0,
		timed{v1, t0},
		timed{reported("First text.", ""), t0.Add(time.Minute)},
		timed{reported("First text.", a), t0.Add(2 * time.Minute)},
		timed{reported("First text.", b), t0.Add(3 * time.Minute)},
		timed{reported("Edited text.", a), t0.Add(4 * time.Minute)},
	)
	p.handle(t, recs...)
	r := serving.NewReader(p.pool)
	got, err := r.VersionByID(context.Background(), v1.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, 2, got.CorroborationCount)
	edited := reported("Edited text.", a)
	got, err = r.VersionByID(context.Background(), edited.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, 1, got.CorroborationCount)
	require.Equal(t, []string{pgTime(t0) + " " + a, pgTime(t0.Add(3*time.Minute)) + " " + b},
		p.texts(t, `SELECT first_at::text || ' ' || reporter_key FROM version_corroborations WHERE post_version_id = $1 ORDER BY first_at`, v1.PostVersionID))
}
