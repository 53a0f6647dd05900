package selector_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/producers/selector"
)

// post builds a registration of an X post with the given number of words,
// and views from distinct viewers and ranges so its score equals views.
func post(t *testing.T, s *teststack.Stack, n, words, views int, at time.Time) (string, string, []events.Event) {
	t.Helper()
	ext := fmt.Sprint(5000 + n)
	text := strings.TrimSpace(strings.Repeat(fmt.Sprintf("w%d ", n), words))
	id, err := content.ComputeVersionIdentity(text, nil)
	require.NoError(t, err)
	postID := events.PostID(events.PlatformX, ext)
	versionID := events.PostVersionID(postID, id.VersionHash)
	var out []events.Event
	add := func(p events.Payload) {
		ev, err := s.Registry.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%s-%d", ext, len(out)))).String(), Time: at.Add(time.Duration(len(out)) * time.Second)})
		require.NoError(t, err)
		out = append(out, ev)
	}
	add(&events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: versionID, Platform: events.PlatformX, ExternalID: ext,
		URL: "https://x.com/a/status/" + ext, VersionHash: id.VersionHash, ContentHash: id.ContentHash,
		OccurrencesHash: id.OccurrencesHash, ContentText: text, WordCount: content.WordCount(text),
		Provenance: events.ProvenanceClientFallback, ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
		X: &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: "a", MediaURLs: []string{}},
	})
	for v := 0; v < views; v++ {
		add(&events.PostViewRecordedV1{
			PostID: postID, PostVersionID: versionID, Platform: events.PlatformX, ExternalID: ext,
			ViewerKey: fmt.Sprintf("%064x", v+1), IPRangeKey: fmt.Sprintf("%064x", 1000+v),
		})
	}
	return versionID, id.VersionHash, out
}

func TestSelectorPicksTopScoresWithinBudgetAndIsIdempotent(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	// Scores 0..7; post 7 is over the word limit; post 6 already has an investigation.
	var all []events.Event
	versions := map[int]string{}
	hashes := map[int]string{}
	for n := 0; n < 8; n++ {
		words := 20
		if n == 7 {
			words = content.WordCountLimit + 1
		}
		v, h, evs := post(t, s, n, words, n, now.Add(-time.Hour))
		versions[n], hashes[n] = v, h
		all = append(all, evs...)
	}
	existing, err := s.Registry.New(&events.InvestigationRequestedV1{
		InvestigationID: events.InvestigationID(versions[6]), PostID: events.PostID(events.PlatformX, "5006"),
		PostVersionID: versions[6], Platform: events.PlatformX, ExternalID: "5006",
		VersionHash: hashes[6], Source: events.RequestSourceInvestigateNow,
	}, events.Meta{ID: uuid.NewString(), Time: now.Add(-time.Minute)})
	require.NoError(t, err)
	s.AppendAndWait(t, append(all, existing)...)

	newSelector := func() *selector.Selector {
		return selector.New(selector.Config{DailyBudget: 3, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
			s.Pool, s.Appender, s.Watermark, nil, func() time.Time { return now }, logging.Discard())
	}
	res, err := newSelector().Run(context.Background())
	require.NoError(t, err)
	var got []string
	for _, c := range res.Requested {
		got = append(got, c.PostVersionID)
	}
	require.Equal(t, []string{versions[5], versions[4], versions[3]}, got, "top scores, skipping the long post and the investigated one")

	// Run again, and several times concurrently: the day's budget is spent,
	// so nothing more is requested and no investigation is duplicated.
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := newSelector().Run(context.Background())
			require.NoError(t, err)
			require.Empty(t, res.Requested)
		}()
	}
	wg.Wait()
	var n, selectorN int
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE source = 'SELECTOR') FROM investigations`).Scan(&n, &selectorN))
	require.Equal(t, 4, n)
	require.Equal(t, 3, selectorN)

	// The next day the budget is fresh: the next best posts are chosen.
	tomorrow := selector.New(selector.Config{DailyBudget: 3, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
		s.Pool, s.Appender, s.Watermark, nil, func() time.Time { return now.Add(24 * time.Hour) }, logging.Discard())
	res, err = tomorrow.Run(context.Background())
	require.NoError(t, err)
	got = got[:0]
	for _, c := range res.Requested {
		got = append(got, c.PostVersionID)
	}
	require.Equal(t, []string{versions[2], versions[1], versions[0]}, got)
}

func TestConcurrentSelectorsRequestEachVersionOnce(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var all []events.Event
	for n := 0; n < 20; n++ {
		_, _, evs := post(t, s, n, 10, n%5, now.Add(-time.Hour))
		all = append(all, evs...)
	}
	s.AppendAndWait(t, all...)
	var wg sync.WaitGroup
	total := 0
	var mu sync.Mutex
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sel := selector.New(selector.Config{DailyBudget: 8, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
				s.Pool, s.Appender, s.Watermark, nil, func() time.Time { return now }, logging.Discard())
			res, err := sel.Run(context.Background())
			require.NoError(t, err)
			mu.Lock()
			total += len(res.Requested)
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, 8, total, "the budget is spent once across concurrent runs")
	var n int
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM investigations`).Scan(&n))
	require.Equal(t, 8, n)
}

// experimentAssigner is a running experiment as serving.Reader.Assign
// decides it: the arm of each version is events.ExperimentArm.
type experimentAssigner struct {
	experimentID       string
	shareBP            int
	control, candidate investigations.Assignment
}

func (a experimentAssigner) Assign(_ context.Context, postVersionID string) (investigations.Assignment, error) {
	out := a.control
	if events.ExperimentArm(a.experimentID, postVersionID, a.shareBP) == events.ArmCandidate {
		out = a.candidate
	}
	out.ExperimentID = a.experimentID
	return out, nil
}

func (a experimentAssigner) Of(context.Context, string, string) (investigations.Assignment, error) {
	return investigations.Assignment{}, errors.New("the selector requests only new investigations")
}

// With an experiment running, each request carries the arm of its version
// and names the investigation under that arm's configuration; the same
// versions land in the same arms on every run.
func TestSelectorRecordsTheExperimentArm(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var all []events.Event
	for n := 0; n < 8; n++ {
		_, _, evs := post(t, s, n, 10, n, now.Add(-time.Hour))
		all = append(all, evs...)
	}
	s.AppendAndWait(t, all...)
	spec := events.AnalysisConfigurationV1{Name: "mini", Model: "gpt-5-mini", InvestigatorPrompt: "v1",
		ValidatorPrompt: "v1", Policy: "strict-v1@0123456789ab"}
	assign := experimentAssigner{experimentID: events.ExperimentID("mini-test"), shareBP: 5000,
		candidate: investigations.Assignment{ConfigurationID: events.ConfigurationID(spec), Configuration: &spec,
			Arm: events.ArmCandidate},
		control: investigations.Assignment{Arm: events.ArmControl}}
	sel := selector.New(selector.Config{DailyBudget: 8, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
		s.Pool, s.Appender, s.Watermark, assign, func() time.Time { return now }, logging.Discard())
	res, err := sel.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, res.Requested, 8)
	arms := map[string]int{}
	var wantIDs []string
	for _, c := range res.Requested {
		want := events.ExperimentArm(assign.experimentID, c.PostVersionID, 5000)
		require.Equal(t, want, c.Arm, "the arm is the version's, deterministically")
		cfg := ""
		if want == events.ArmCandidate {
			cfg = events.ConfigurationID(spec)
		}
		require.Equal(t, cfg, c.ConfigurationID)
		arms[c.Arm]++
		wantIDs = append(wantIDs, events.InvestigationIDFor(c.PostVersionID, cfg))
	}
	require.Len(t, arms, 2, "both arms receive versions: %v", arms)
	rows, err := s.Pool.Query(context.Background(), `SELECT id::text FROM investigations`)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, wantIDs, ids, "each investigation is named by its version and its arm's configuration")
}

// A version whose only investigation readers cannot see (a re-processing
// under a configuration never promoted, or the candidate arm of a stopped
// experiment) has no result on the page, so the selector may pick it; a
// version with a visible request is never picked again.
func TestSelectorSkipsOnlyVersionsWithAVisibleInvestigation(t *testing.T) {
	s := teststack.Serving(t, teststack.Options{})
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	hiddenID, hiddenHash, hiddenEvs := post(t, s, 0, 10, 3, now.Add(-time.Hour))
	shownID, shownHash, shownEvs := post(t, s, 1, 10, 5, now.Add(-time.Hour))
	s.AppendAndWait(t, append(hiddenEvs, shownEvs...)...)
	spec := events.AnalysisConfigurationV1{Name: "never-promoted", Model: "gpt-5-mini", InvestigatorPrompt: "v1",
		ValidatorPrompt: "v1", Policy: "strict-v1@0123456789ab"}
	cfg := events.ConfigurationID(spec)
	request := func(versionID, hash, ext, configurationID string, c *events.AnalysisConfigurationV1) events.Event {
		postID := events.PostID(events.PlatformX, ext)
		ev, err := s.Registry.New(&events.InvestigationRequestedV1{
			InvestigationID: events.InvestigationIDFor(versionID, configurationID), PostID: postID, PostVersionID: versionID,
			Platform: events.PlatformX, ExternalID: ext, VersionHash: hash, Source: events.RequestSourceInvestigateNow,
			ConfigurationID: configurationID, Configuration: c,
		}, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte("visible-"+ext)).String(), Time: now.Add(-time.Minute)})
		require.NoError(t, err)
		return ev
	}
	s.AppendAndWait(t, request(hiddenID, hiddenHash, "5000", cfg, &spec), request(shownID, shownHash, "5001", "", nil))

	sel := selector.New(selector.Config{DailyBudget: 8, MaxWords: content.WordCountLimit, WaitTimeout: time.Minute},
		s.Pool, s.Appender, s.Watermark, nil, func() time.Time { return now }, logging.Discard())
	res, err := sel.Run(ctx)
	require.NoError(t, err)
	require.Len(t, res.Requested, 1)
	require.Equal(t, hiddenID, res.Requested[0].PostVersionID)
	require.Empty(t, res.Requested[0].ConfigurationID, "requested under the active (default) configuration")
	var n int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM investigations WHERE post_version_id = $1`, hiddenID).Scan(&n))
	require.Equal(t, 2, n, "the hidden investigation stays; the new one is beside it")
}
