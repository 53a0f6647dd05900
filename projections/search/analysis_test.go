package search_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// timeOf is the time of the event of type typ in evs (the last one).
func timeOf(evs []events.Event, typ string) time.Time {
	var at time.Time
	for _, ev := range evs {
		if ev.Type() == typ {
			at = ev.Time
		}
	}
	return at
}

// TestAnalysesSearchable: the COMPLETE analyses of the fixture (the False
// post, the opinion-only submission) are found by words of their claims
// and summaries and by label; the failed one never is. Applying the same
// events one by one, shuffled, gives the same documents.
func TestAnalysesSearchable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	f := analysistest.New("search")

	index := func(gen int64, schema string, batches [][]events.Event) []byte {
		require.NoError(t, search.Ensure(ctx, es, pfx, gen))
		pool := state(t, dbURL, schema)
		a := search.NewApplierFor(es, search.IndexName(pfx, gen)).WithAnalyses(search.AnalysisIndexName(pfx, gen))
		for _, b := range batches {
			apply(t, pool, a, b)
		}
		docs, err := search.DumpAnalyses(ctx, es, search.AnalysisIndexName(pfx, gen))
		require.NoError(t, err)
		return docs
	}
	docs := index(1, "search_state", [][]events.Event{f.All()})
	require.Equal(t, 2, countLines(docs))

	shuffled := append([]events.Event{}, f.All()...)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var one [][]events.Event
	for _, ev := range shuffled {
		one = append(one, []events.Event{ev})
	}
	require.Equal(t, string(docs), string(index(2, "search_state_g2", one)), "one by one, shuffled")

	s := search.NewAnalysisSearcher(es, search.AnalysisAliasName(pfx))
	complete := search.AnalysisHit{AnalysisID: f.CompleteID, CompletedAt: timeOf(f.Complete, events.TypeAnalysisCompletedV1),
		InputKind: events.AnalysisInputPost, Platform: f.Platform, ExternalID: f.ExternalID,
		URL: "https://x.com/someone/status/" + f.ExternalID, Label: events.LabelFalse, Band: events.BandFalse,
		TruthPercent: 6, Confidence: 70,
		Summary:    "The post dates the Eiffel Tower 36 years late: it was completed in 1889 for the Exposition Universelle. The rest of the post is opinion.",
		ClaimCount: 2, Claims: []string{analysistest.FalseClaim, "it is the most beautiful building in Paris"}, Highlights: []string{}}
	res, err := s.Search(ctx, search.AnalysisQuery{Label: events.LabelFalse, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, search.AnalysisResult{Hits: []search.AnalysisHit{complete}, Total: 1}, res)

	res, err = s.Search(ctx, search.AnalysisQuery{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, int64(2), res.Total)
	require.Equal(t, []string{f.OpinionID, f.CompleteID}, []string{res.Hits[0].AnalysisID, res.Hits[1].AnalysisID},
		"newest completion first")
	require.Equal(t, events.AnalysisInputText, res.Hits[0].InputKind)
	require.Equal(t, "", res.Hits[0].Platform)

	res, err = s.Search(ctx, search.AnalysisQuery{Text: "eiffel tower completed", Limit: 10})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Total)
	require.Equal(t, f.CompleteID, res.Hits[0].AnalysisID)
	require.Contains(t, res.Hits[0].Highlights, "The <mark>Eiffel</mark> <mark>Tower</mark> was <mark>completed</mark> in 1925 for the World&#x27;s Fair")

	res, err = s.Search(ctx, search.AnalysisQuery{Text: "pineapple", Label: events.LabelOpinion, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, []string{f.OpinionID}, []string{res.Hits[0].AnalysisID})
	res, err = s.Search(ctx, search.AnalysisQuery{Text: "Great Wall", Limit: 10})
	require.NoError(t, err)
	require.Zero(t, res.Total, "a failed analysis is never searchable")
	res, err = s.Search(ctx, search.AnalysisQuery{Label: events.LabelTrue, Platform: events.PlatformX, Limit: 10})
	require.NoError(t, err)
	require.Zero(t, res.Total)

	for _, q := range []search.AnalysisQuery{
		{Label: "TRUE", Limit: 1}, {Label: strings.Repeat("L", 10_240), Limit: 1}, {Band: "True", Limit: 1},
		{Limit: 0}, {Limit: 101}, {Limit: 10, Offset: -1}, {Platform: "MYSPACE", Limit: 1},
		{Text: strings.Repeat("w", 1001), Limit: 1}, {Text: "\xff", Limit: 1},
	} {
		_, err := s.Search(ctx, q)
		require.ErrorIs(t, err, search.ErrInvalidQuery, "%+v", q)
	}
}

// TestAnalysisPoison: among the fixture's events, a claim whose text holds
// a NUL (the fold refuses it), a post verdict whose label is 10 KB
// (invalid: undecodable), and an analysis whose 40,000-character external
// id Elasticsearch refuses as a keyword are parked; everything else is
// applied and indexed, and a rebuild one record per batch parks the same
// and holds the same documents.
func TestAnalysisPoison(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	reg := events.NewCatalogRegistry()
	f := analysistest.New("search-poison")
	n := 0
	next := func(p events.Payload, at time.Time) events.Event {
		n++
		ev, err := reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("analysis-poison/%d", n))).String(), Time: at})
		require.NoError(t, err)
		return ev
	}
	at := analysistest.Start.Add(3 * time.Hour)
	ref := events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 1}
	nul := next(&events.AnalysisClaimExtractedV1{AnalysisRef: ref, ClaimID: events.AnalysisClaimID(f.OpinionID, 1, 7), Index: 7,
		Text: "NUL\x00", Context: "c"}, at)
	big := next(&events.AnalysisPostVerdictV1{AnalysisRef: events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 2},
		Caps: []events.CapV1{}, Label: events.LabelOpinion, Band: events.BandUnverified, Summary: "s", Caveats: []string{},
		Sources: []events.VerdictSourceV1{}}, at)
	// A whole analysis of a post whose external id is immense.
	ext := incompressible(40000)
	postID := events.PostID(events.PlatformX, ext)
	versionID := events.PostVersionID(postID, analysistest.Hash("immense"))
	sha := analysistest.Hash("immense text")
	immenseID := events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputPost, versionID, sha), events.AnalysisTypeVerdict, "v1")
	iref := events.AnalysisRef{AnalysisID: immenseID, Attempt: 1}
	immense := []events.Event{
		next(&events.AnalysisRequestedV1{AnalysisID: immenseID, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: "v1",
			InputKind: events.AnalysisInputPost, Platform: events.PlatformX, ExternalID: ext, PostID: postID, PostVersionID: versionID,
			Text: "Immense.", ContentSHA256: sha, Source: events.AnalysisSourceAPI}, at.Add(time.Second)),
		next(&events.AnalysisPostVerdictV1{AnalysisRef: iref, Caps: []events.CapV1{}, Label: events.LabelUnverifiable,
			Band: events.BandUnverified, Summary: "s", Caveats: []string{}, Sources: []events.VerdictSourceV1{}}, at.Add(2*time.Second)),
		next(&events.AnalysisCompletedV1{AnalysisRef: iref}, at.Add(3*time.Second)),
	}
	// The poison goes before the opinion's completion.
	var evs []events.Event
	evs = append(evs, f.Complete...)
	evs = append(evs, f.Opinion[:len(f.Opinion)-1]...)
	evs = append(evs, nul, big)
	evs = append(evs, immense...)
	evs = append(evs, f.Opinion[len(f.Opinion)-1])
	evs = append(evs, f.Failed...)
	recs := records(t, reg, evs, 0)
	offsetOf := func(id string) int64 {
		for i, ev := range evs {
			if ev.ID == id {
				return int64(i)
			}
		}
		t.Fatalf("no event %s", id)
		return -1
	}
	bigAt := offsetOf(big.ID)
	recs[bigAt].Value = bytes.Replace(recs[bigAt].Value, []byte(`"label":"Opinion"`), []byte(`"label":"`+strings.Repeat("L", 10_240)+`"`), 1)

	project := func(gen int64, schema string, batch int) (*letters, []byte, string) {
		require.NoError(t, search.Ensure(ctx, es, pfx, gen))
		pool := state(t, dbURL, schema)
		dl := &letters{}
		a := search.NewApplierFor(es, search.IndexName(pfx, gen)).WithAnalyses(search.AnalysisIndexName(pfx, gen))
		proj := pgproj.NewProjector(search.ProjectorName, pool, reg, a, dl, logging.Discard())
		for i := 0; i < len(recs); i += batch {
			require.NoError(t, proj.Handle(ctx, kafka.Batch{Topic: "test.analyses", Partition: 0, Records: recs[i:min(i+batch, len(recs))]}))
		}
		docs, err := search.DumpAnalyses(ctx, es, search.AnalysisIndexName(pfx, gen))
		require.NoError(t, err)
		return dl, docs, dumpState(t, pool, schema)
	}
	dl, docs, st := project(1, "search_state", len(recs))
	require.Equal(t, 2, countLines(docs), "the post's and the opinion's documents")
	require.NotContains(t, string(docs), immenseID)
	require.NotContains(t, string(docs), "NUL")
	offsets := func(d *letters) []string {
		var out []string
		for _, l := range d.sent {
			out = append(out, fmt.Sprintf("%d %s", l.offset, l.class))
		}
		return out
	}
	// The immense analysis's document is first built at its completion.
	want := []string{fmt.Sprintf("%d deterministic", offsetOf(nul.ID)), fmt.Sprintf("%d decode", bigAt),
		fmt.Sprintf("%d deterministic", offsetOf(immense[2].ID))}
	require.Equal(t, want, offsets(dl))
	require.Contains(t, dl.sent[2].cause, "failed to parse field [external_id] of type [keyword]")

	rdl, rdocs, rst := project(2, "search_state_g2", 1)
	require.Equal(t, want, offsets(rdl))
	require.Equal(t, string(docs), string(rdocs))
	require.Equal(t, strings.ReplaceAll(st, "search_state", ""), strings.ReplaceAll(rst, "search_state_g2", ""))
}
