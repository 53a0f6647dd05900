package control_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/projections/serving"
)

// investigated registers an X post and a completed default investigation
// of it; it returns the version id.
func investigated(t *testing.T, s *teststack.Stack, n int, at time.Time) string {
	t.Helper()
	ext := fmt.Sprint(7100 + n)
	text := fmt.Sprintf("Re-processing post number %d says something checkable.", n)
	id, err := content.ComputeVersionIdentity(text, nil)
	require.NoError(t, err)
	postID := events.PostID(events.PlatformX, ext)
	versionID := events.PostVersionID(postID, id.VersionHash)
	invID := events.InvestigationID(versionID)
	var evs []events.Event
	for i, p := range []events.Payload{
		&events.PostVersionRegisteredV1{
			PostID: postID, PostVersionID: versionID, Platform: events.PlatformX, ExternalID: ext,
			URL: "https://x.com/a/status/" + ext, VersionHash: id.VersionHash, ContentHash: id.ContentHash,
			OccurrencesHash: id.OccurrencesHash, ContentText: text, WordCount: content.WordCount(text),
			Provenance: events.ProvenanceClientFallback, ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
			X: &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: "a", MediaURLs: []string{}},
		},
		&events.InvestigationRequestedV1{InvestigationID: invID, PostID: postID, PostVersionID: versionID,
			Platform: events.PlatformX, ExternalID: ext, VersionHash: id.VersionHash, Source: events.RequestSourceSelector},
		&events.InvestigationCompletedV1{InvestigationID: invID, PostID: postID, PostVersionID: versionID,
			Provenance: events.ProvenanceClientFallback, PromptVersion: "v1", Provider: "OPENAI", Model: "gpt-5",
			Claims: []events.ClaimV1{}},
	} {
		ev, err := s.Registry.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%s-%d", ext, i))).String(),
			Time: at.Add(time.Duration(i) * time.Second)})
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	s.AppendAndWait(t, evs...)
	return versionID
}

// The dry run counts and appends nothing; runs request at most the day's
// budget, shared by runs on one day and fresh the next; each request
// supersedes the visible investigation; a repeated run requests nothing
// twice.
func TestIntegrationReprocessBudgetAndIdempotence(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	versions := map[string]bool{}
	for n := range 5 {
		versions[investigated(t, s, n, day.Add(-48*time.Hour))] = true
	}
	reader := serving.NewReader(s.Pool)
	svc := control.New(reader, s.Appender, prompts.Default(), evidence.Policies())
	declared, err := svc.Declare(ctx, control.Declaration{Name: "mini", Model: "gpt-5-mini", InvestigatorPrompt: "v1",
		ValidatorPrompt: "v1", Policy: "strict-v1", Decision: control.Decision{Operator: "test", Reason: "cheaper model"}})
	require.NoError(t, err)
	require.NoError(t, s.Watermark.WaitFor(ctx, declared.Position.Topic, declared.Position.Partition, declared.Position.Offset, time.Minute))

	now := day
	rp := control.NewReprocessor(reader, reader, control.NewServingBudget(s.Pool), s.Appender, s.Watermark, func() time.Time { return now })
	plan := func(dry bool) control.ReprocessPlan {
		return control.ReprocessPlan{Configuration: "mini", Filter: control.ReprocessFilter{Platforms: []string{events.PlatformX}},
			DailyBudget: 3, DryRun: dry, PageSize: 2, WaitTimeout: time.Minute}
	}
	count := func() (all, reprocess int) {
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE source = 'REPROCESS') FROM investigations`).
			Scan(&all, &reprocess))
		return all, reprocess
	}

	dry, err := rp.Run(ctx, plan(true))
	require.NoError(t, err)
	require.Equal(t, control.ReprocessResult{ConfigurationID: declared.ID, Selected: 5, Remaining: 3, DailyBudget: 3}, dry)
	all, re := count()
	require.Equal(t, []int{5, 0}, []int{all, re}, "a dry run appends nothing")

	var progress [][2]int
	p := plan(false)
	p.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	first, err := rp.Run(ctx, p)
	require.NoError(t, err)
	require.Equal(t, 3, first.Requested)
	require.Equal(t, [][2]int{{2, 3}, {3, 3}}, progress, "pages of at most the page size, never beyond the budget")
	all, re = count()
	require.Equal(t, []int{8, 3}, []int{all, re})

	again, err := rp.Run(ctx, plan(false))
	require.ErrorIs(t, err, control.ErrBudgetSpent, "a second run the same day shares the budget")
	require.Equal(t, 3, again.UsedToday)
	all, _ = count()
	require.Equal(t, 8, all)

	now = day.Add(24 * time.Hour)
	next, err := rp.Run(ctx, plan(false))
	require.NoError(t, err)
	require.Equal(t, 2, next.Requested, "the next day: the versions left, none twice")
	last, err := rp.Run(ctx, plan(false))
	require.NoError(t, err)
	require.Equal(t, 0, last.Requested, "every version is investigated under the target: a re-run requests nothing")

	rows, err := s.Pool.Query(ctx, `SELECT id::text, post_version_id::text, configuration_id, COALESCE(supersedes::text, '')
		FROM investigations WHERE source = 'REPROCESS'`)
	require.NoError(t, err)
	type row struct{ ID, Version, Configuration, Supersedes string }
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	require.NoError(t, err)
	require.Len(t, got, 5)
	for _, r := range got {
		require.True(t, versions[r.Version])
		require.Equal(t, events.InvestigationIDFor(r.Version, declared.ID), r.ID)
		require.Equal(t, declared.ID, r.Configuration)
		require.Equal(t, events.InvestigationID(r.Version), r.Supersedes, "it supersedes the visible (default) investigation")
	}
	var completed int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM investigations WHERE configuration_id = '' AND status = 'COMPLETE'`).
		Scan(&completed))
	require.Equal(t, 5, completed, "the old investigations are unchanged")
}

// A re-processing run is refused before anything is appended when the
// target is unknown or the default configuration.
func TestIntegrationReprocessRefusals(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	ctx := context.Background()
	reader := serving.NewReader(s.Pool)
	rp := control.NewReprocessor(reader, reader, control.NewServingBudget(s.Pool), s.Appender, s.Watermark, nil)
	for name, want := range map[string]string{"nope": "not declared", "default": "not the default", "a\x1b[1m": "configuration name"} {
		_, err := rp.Run(ctx, control.ReprocessPlan{Configuration: name, DailyBudget: 5, WaitTimeout: time.Minute})
		require.ErrorIs(t, err, control.ErrRefused)
		require.Contains(t, err.Error(), want)
	}
}
