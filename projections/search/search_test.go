package search_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/search"
)

// TestResearcherScenario folds the corpus (posts first, then
// investigations, as two batches) and searches it the way a researcher
// would: a phrase from one claim's reasoning, filters, pages.
func TestResearcherScenario(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	require.NoError(t, search.Ensure(ctx, es, pfx, 1))
	require.NoError(t, search.Ensure(ctx, es, pfx, 1), "ensuring twice changes nothing")
	pool := state(t, testenv.Postgres(t), search.StateSchema)
	a := search.NewApplierFor(es, search.IndexName(pfx, 1))

	c := corpus()
	apply(t, pool, a, allPosts(c))
	apply(t, pool, a, allInvestigations(c))
	require.NoError(t, search.Refresh(ctx, es, search.IndexName(pfx, 1)))
	s := search.NewSearcher(es, search.AliasName(pfx))
	byName := map[string]built{}
	for _, b := range c {
		byName[b.spec.name] = b
	}

	find := func(q search.Query) search.Result {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 100
		}
		r, err := s.Search(ctx, q)
		require.NoError(t, err)
		return r
	}

	// Everything: the seven complete investigations, newest first.
	all := find(search.Query{})
	require.Equal(t, int64(7), all.Total, "only COMPLETE investigations are searchable")
	require.False(t, all.HasMore)
	want := []string{"nothing", "1860000000000000002", "1860000000000000001", "goldfish", "wall", "boiling", "eiffel"}
	var wantIDs []string
	for _, n := range want {
		wantIDs = append(wantIDs, byName[n].investigationID)
	}
	require.Equal(t, wantIDs, ids(all.Hits))

	// A phrase from one claim's reasoning finds that investigation first,
	// even though other posts mention the Eiffel Tower.
	r := find(search.Query{Text: "wrought-iron lattice finished for the Exposition Universelle"})
	require.NotEmpty(t, r.Hits)
	top := r.Hits[0]
	eiffel := byName["eiffel"]
	require.Equal(t, eiffel.investigationID, top.InvestigationID)
	require.Equal(t, int64(1), r.Total, "every word must match")
	// The hit carries what a result list shows.
	require.Equal(t, events.PlatformX, top.Platform)
	require.Equal(t, "eiffel", top.ExternalID)
	require.Equal(t, "https://x.com/someone/status/eiffel", top.URL)
	require.Equal(t, eiffel.postVersionID, top.PostVersionID)
	require.Equal(t, events.PostID(events.PlatformX, "eiffel"), top.PostID)
	require.Equal(t, eiffel.checkedAt, top.CheckedAt)
	require.Equal(t, &search.Author{ID: eiffel.authorID, DisplayName: "Display alice"}, top.Author)
	require.Equal(t, events.ProvenanceClientFallback, top.Provenance)
	require.Nil(t, top.ServerVerifiedAt)
	require.Equal(t, 2, top.CorroborationCount, "two distinct reporters")
	require.Equal(t, 1, top.ClaimCount)
	require.Len(t, top.Claims, 1)
	require.Equal(t, events.ClaimID(eiffel.investigationID, 0), top.Claims[0].ID)
	require.Equal(t, `the <b>Eiffel Tower</b> was completed in 1925 & "later"`, top.Claims[0].Text)
	require.Equal(t, "The Eiffel Tower was completed in 1889.", top.Claims[0].Summary)
	require.NotEmpty(t, top.Highlights)
	joined := strings.Join(top.Highlights, " | ")
	require.Contains(t, joined, "<mark>lattice</mark>")
	require.Contains(t, joined, "<mark>Exposition</mark>")

	// Highlights escape the claim text's HTML; only the marks are tags.
	r = find(search.Query{Text: "Eiffel 1925 later"})
	require.Equal(t, eiffel.investigationID, r.Hits[0].InvestigationID)
	var claimHL string
	for _, h := range r.Hits[0].Highlights {
		if strings.Contains(h, "&lt;b&gt;") {
			claimHL = h
		}
	}
	require.NotEmpty(t, claimHL, "the claim text is highlighted: %q", r.Hits[0].Highlights)
	require.True(t, containsAll(claimHL, "&lt;b&gt;<mark>Eiffel</mark>", "&amp;", "&quot;<mark>later</mark>&quot;"), claimHL)
	require.NotContains(t, strings.ReplaceAll(strings.ReplaceAll(claimHL, "<mark>", ""), "</mark>", ""), "<")

	// Stemming: "boil" finds "boils", ranked by relevance.
	r = find(search.Query{Text: "boil"})
	require.Equal(t, []string{byName["boiling"].investigationID}, ids(r.Hits))
	boiling := r.Hits[0]
	require.Equal(t, events.ProvenanceServerVerified, boiling.Provenance)
	require.NotNil(t, boiling.ServerVerifiedAt)
	require.Equal(t, start.Add(24*time.Hour+time.Hour+time.Second), *boiling.ServerVerifiedAt)
	require.Equal(t, 1, boiling.CorroborationCount)

	// Platform filter, alone and with text.
	r = find(search.Query{Platform: events.PlatformX})
	require.Equal(t, []string{byName["1860000000000000002"].investigationID, byName["1860000000000000001"].investigationID,
		eiffel.investigationID}, ids(r.Hits))
	r = find(search.Query{Platform: events.PlatformSubstack, Text: "Eiffel"})
	require.Equal(t, []string{byName["goldfish"].investigationID}, ids(r.Hits))
	r = find(search.Query{Platform: events.PlatformWikipedia, Text: "Eiffel"})
	require.Empty(t, r.Hits)
	require.Equal(t, int64(0), r.Total)

	// Author, provenance, minimum claim count, window.
	r = find(search.Query{AuthorID: eiffel.authorID})
	require.Equal(t, []string{eiffel.investigationID}, ids(r.Hits),
		"alice's complete X investigations only (her failed and pending ones never appear; her Substack identity is another author)")
	r = find(search.Query{AuthorID: byName["1860000000000000001"].authorID})
	require.Equal(t, []string{byName["1860000000000000002"].investigationID, byName["1860000000000000001"].investigationID}, ids(r.Hits))
	r = find(search.Query{Provenance: events.ProvenanceServerVerified})
	require.Equal(t, []string{byName["wall"].investigationID, byName["boiling"].investigationID}, ids(r.Hits))
	r = find(search.Query{MinClaimCount: 2})
	require.Equal(t, []string{byName["goldfish"].investigationID, byName["boiling"].investigationID}, ids(r.Hits))
	r = find(search.Query{MinClaimCount: 3})
	require.Equal(t, []string{byName["goldfish"].investigationID}, ids(r.Hits))
	from, to := byName["wall"].checkedAt, byName["1860000000000000001"].checkedAt
	r = find(search.Query{CheckedFrom: &from, CheckedTo: &to})
	require.Equal(t, []string{byName["goldfish"].investigationID, byName["wall"].investigationID}, ids(r.Hits),
		"[from, to): from is in, to is out")
	justAfter := to.Add(time.Microsecond)
	r = find(search.Query{CheckedFrom: &to, CheckedTo: &justAfter})
	require.Equal(t, []string{byName["1860000000000000001"].investigationID}, ids(r.Hits), "microsecond precision")

	// Paging with limit 2: no duplicates, no gaps, HasMore until the end.
	for _, q := range []search.Query{{}, {Text: "Eiffel"}} {
		full := find(q)
		var paged []string
		for off := 0; ; off += 2 {
			q.Offset, q.Limit = off, 2
			page := find(q)
			require.Equal(t, full.Total, page.Total)
			paged = append(paged, ids(page.Hits)...)
			require.Equal(t, int64(off+len(page.Hits)) < full.Total, page.HasMore)
			if !page.HasMore {
				break
			}
		}
		require.Equal(t, ids(full.Hits), paged, "query %q", q.Text)
	}
	r = find(search.Query{Text: "Eiffel"})
	require.Equal(t, int64(3), r.Total, "the complete ones mentioning it: %v", ids(r.Hits))
	require.Equal(t, eiffel.investigationID, r.Hits[0].InvestigationID, "the claim text outranks a mention in reasoning")

	// The failed and pending investigations are invisible, whatever the query.
	r = find(search.Query{Text: "according to this"})
	require.Empty(t, r.Hits)
}

func TestQueryValidation(t *testing.T) {
	t.Parallel()
	now := time.Now()
	cases := []struct {
		name string
		q    search.Query
		want string
	}{
		{"limit zero", search.Query{}, "limit must be between 1 and 100"},
		{"limit too big", search.Query{Limit: 101}, "limit must be between 1 and 100"},
		{"negative offset", search.Query{Limit: 10, Offset: -1}, "offset must be >= 0"},
		{"too deep", search.Query{Limit: 100, Offset: 9901}, "offset + limit must be at most 10000"},
		{"platform", search.Query{Limit: 1, Platform: "MYSPACE"}, `platform "MYSPACE" is unknown`},
		{"provenance", search.Query{Limit: 1, Provenance: "TRUSTED"}, `provenance "TRUSTED" is unknown`},
		{"claims", search.Query{Limit: 1, MinClaimCount: -1}, "minimum claim count must be >= 0"},
		{"window", search.Query{Limit: 1, CheckedFrom: &now, CheckedTo: &now}, "window is empty"},
		{"text", search.Query{Limit: 1, Text: strings.Repeat("a", 1001)}, "longer than 1000"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// No client: validation fails before any request.
			_, err := search.NewSearcher(nil, "unused").Search(context.Background(), tc.q)
			require.ErrorIs(t, err, search.ErrInvalidQuery)
			require.ErrorContains(t, err, tc.want)
		})
	}
	require.NoError(t, search.Query{Limit: 100, Offset: 9900}.Validate(), "exactly 10000 is allowed")
}

func TestSearchWithoutIndexIsAClearError(t *testing.T) {
	t.Parallel()
	es := esClient(t)
	_, err := search.NewSearcher(es, search.AliasName(prefix(t, es))).Search(context.Background(), search.Query{Limit: 10})
	require.ErrorContains(t, err, "the search index does not exist (run `errata migrate`)")
	require.NotErrorIs(t, err, search.ErrInvalidQuery)
}
