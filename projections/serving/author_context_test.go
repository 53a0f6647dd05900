package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// The author context of a version: the author's other posts whose visible
// investigation is complete, newest check first, each with its published
// claims that no appeal retracted; nothing of this post, of other authors,
// or of investigations readers cannot see; bounded by its limits.
func TestAuthorContext(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)
	by := func(ext, text string, author *events.AuthorV1) *events.PostVersionRegisteredV1 {
		r := registration(events.PlatformLessWrong, ext, text)
		r.Author = author
		return r
	}
	alice := &events.AuthorV1{PlatformUserID: "alice-1", DisplayName: "Alice"}
	bob := &events.AuthorV1{PlatformUserID: "bob-1", DisplayName: "Bob"}

	this := by("this", "The post under investigation.", alice)
	thisEarlier := by("this", "An earlier version of it.", alice)
	older := by("older", "An older post with errors.", alice)
	newer := by("newer", "A newer post without errors.", alice)
	hidden := by("hidden", "Checked only under a configuration nobody promoted.", alice)
	elsewhere := by("elsewhere", "Another author's post.", bob)
	anonymous := by("anon", "Nobody wrote this.", nil)
	cand := spec("author-candidate", "gpt-cand")

	olderDone := completedWith(older, "one", "two", "three")
	appeal := filed(olderDone.Claims[0].ID, olderDone.InvestigationID, older, "reader-1", "The cited record supports the post.")
	p.handle(t, records(t, 0, 0,
		timed{this, base}, timed{thisEarlier, base}, timed{older, base}, timed{newer, base}, timed{hidden, base},
		timed{elsewhere, base}, timed{anonymous, base},
		timed{investigationOf(thisEarlier), base.Add(time.Minute)}, timed{completedWith(thisEarlier, "self"), base.Add(2 * time.Minute)},
		timed{investigationOf(older), base.Add(time.Minute)}, timed{olderDone, base.Add(3 * time.Minute)},
		timed{investigationOf(newer), base.Add(time.Minute)}, timed{completedWith(newer), base.Add(4 * time.Minute)},
		timed{declared(cand), base},
		timed{requestUnder(hidden, &cand, "", "", ""), base.Add(time.Minute)},
		timed{completedUnder(hidden, &cand, "invisible"), base.Add(5 * time.Minute)},
		timed{investigationOf(elsewhere), base.Add(time.Minute)}, timed{completedWith(elsewhere, "bob's"), base.Add(6 * time.Minute)},
		timed{appeal, base.Add(7 * time.Minute)},
		timed{decided(appeal, events.AppealRetracted, "The record agrees with the post."), base.Add(8 * time.Minute)},
	)...)

	got, err := rd.AuthorContext(ctx, this.PostVersionID, serving.AuthorContextLimits{})
	require.NoError(t, err)
	require.Equal(t, serving.AuthorContext{AuthorID: events.AuthorID(events.PlatformLessWrong, "alice-1"), Posts: []serving.AuthorPost{
		{PostID: newer.PostID, PostVersionID: newer.PostVersionID, InvestigationID: events.InvestigationID(newer.PostVersionID),
			Platform: events.PlatformLessWrong, URL: newer.URL, CheckedAt: base.Add(4 * time.Minute).Truncate(time.Microsecond),
			Claims: []serving.AuthorClaim{}},
		{PostID: older.PostID, PostVersionID: older.PostVersionID, InvestigationID: olderDone.InvestigationID,
			Platform: events.PlatformLessWrong, URL: older.URL, CheckedAt: base.Add(3 * time.Minute).Truncate(time.Microsecond),
			Claims: []serving.AuthorClaim{{Text: "quoted two", Summary: "two"}, {Text: "quoted three", Summary: "three"}}},
	}}, got, "the retracted claim, this post, the invisible investigation and Bob's post are left out")

	got, err = rd.AuthorContext(ctx, this.PostVersionID, serving.AuthorContextLimits{MaxPosts: 1})
	require.NoError(t, err)
	require.Len(t, got.Posts, 1)
	require.Equal(t, newer.PostID, got.Posts[0].PostID)
	require.True(t, got.MorePosts)
	require.False(t, got.MoreClaims)

	got, err = rd.AuthorContext(ctx, this.PostVersionID, serving.AuthorContextLimits{MaxClaims: 1})
	require.NoError(t, err)
	require.Len(t, got.Posts, 2)
	require.Equal(t, []serving.AuthorClaim{{Text: "quoted two", Summary: "two"}}, got.Posts[1].Claims)
	require.True(t, got.MoreClaims)
	require.False(t, got.MorePosts)

	// Bob's only post: nothing else of his was checked.
	got, err = rd.AuthorContext(ctx, elsewhere.PostVersionID, serving.AuthorContextLimits{})
	require.NoError(t, err)
	require.Equal(t, serving.AuthorContext{AuthorID: events.AuthorID(events.PlatformLessWrong, "bob-1"), Posts: []serving.AuthorPost{}}, got)

	// No known author: an empty answer that says so.
	got, err = rd.AuthorContext(ctx, anonymous.PostVersionID, serving.AuthorContextLimits{})
	require.NoError(t, err)
	require.Equal(t, serving.AuthorContext{Posts: []serving.AuthorPost{}}, got)

	// Unknown and malformed ids.
	for _, id := range []string{events.PostVersionID(this.PostID, hex64("never")), "not-a-uuid", "'; DROP TABLE posts; --"} {
		_, err = rd.AuthorContext(ctx, id, serving.AuthorContextLimits{})
		require.ErrorIs(t, err, serving.ErrNotFound, id)
	}
}
