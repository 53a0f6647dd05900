package serving_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// countingTracer counts the statements a pool sends.
type countingTracer struct{ n atomic.Int64 }

func (c *countingTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *countingTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// completedWith is the completion of r's investigation with one claim per
// summary, in that order.
func completedWith(r *events.PostVersionRegisteredV1, summaries ...string) *events.InvestigationCompletedV1 {
	id := events.InvestigationID(r.PostVersionID)
	c := &events.InvestigationCompletedV1{
		InvestigationID: id, PostID: r.PostID, PostVersionID: r.PostVersionID, Provenance: r.Provenance,
		PromptVersion: "investigator@2", Provider: "openai", Model: "gpt-test", Claims: []events.ClaimV1{}, Series: 1, Attempt: 1,
	}
	for i, s := range summaries {
		c.Claims = append(c.Claims, events.ClaimV1{
			ID: events.ClaimID(id, i), Text: "quoted " + s, Context: "the context of " + s, Summary: s,
			Reasoning: "The record shows otherwise for " + s + ".",
			Sources:   []events.SourceV1{{URL: "https://example.org/" + s, Title: "Source " + s, Snippet: "What it says about " + s + "."}},
		})
	}
	return c
}

func claimSummaries(cs []serving.Claim) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Summary)
	}
	return out
}

// TestReaderPublic: the public reads show COMPLETE investigations only,
// with their trust signals; lists of claims and authors of many
// investigations or posts take one statement each.
func TestReaderPublic(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()

	ra, rb := hex64("reporter:a"), hex64("reporter:b")
	first := registration(events.PlatformX, "900", "The first text of the post.")
	first.Author = &events.AuthorV1{PlatformUserID: "u42", DisplayName: "Ada"}
	first.ReporterKey = ra
	again := registration(events.PlatformX, "900", "The first text of the post.")
	again.ReporterKey = rb
	edited := registration(events.PlatformX, "900", "The edited text of the post.")
	edited.Provenance = events.ProvenanceClientFallback
	pending := registration(events.PlatformLessWrong, "pending", "A post still being investigated.")
	failed := registration(events.PlatformSubstack, "failed", "A post whose investigation failed.")
	failedEv := &events.InvestigationFailedV1{
		InvestigationID: events.InvestigationID(failed.PostVersionID), PostID: failed.PostID, PostVersionID: failed.PostVersionID,
		Provenance: failed.Provenance, Reason: "provider_unavailable: the provider did not answer", Attempts: 3, Series: 1,
	}
	p.handle(t, records(t, 0, 0,
		timed{first, base}, timed{again, base.Add(time.Second)}, timed{edited, base.Add(3 * time.Minute)},
		timed{pending, base}, timed{failed, base},
		timed{investigationOf(first), base.Add(time.Minute)},
		timed{completedWith(first, "alpha", "beta"), base.Add(2 * time.Minute)},
		timed{investigationOf(edited), base.Add(4 * time.Minute)},
		timed{completedWith(edited, "gamma"), base.Add(5 * time.Minute)},
		timed{investigationOf(pending), base.Add(time.Minute)},
		timed{investigationOf(failed), base.Add(time.Minute)},
		timed{failedEv, base.Add(2 * time.Minute)},
	)...)

	tracer := &countingTracer{}
	cfg := p.pool.Config().Copy()
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	rd := serving.NewReader(pool)

	firstID, editedID := events.InvestigationID(first.PostVersionID), events.InvestigationID(edited.PostVersionID)
	pendingID, failedID := events.InvestigationID(pending.PostVersionID), events.InvestigationID(failed.PostVersionID)
	norm := func(pi serving.PublicInvestigation) serving.PublicInvestigation {
		pi.CheckedAt = pi.CheckedAt.UTC()
		if pi.ServerVerifiedAt != nil {
			at := pi.ServerVerifiedAt.UTC()
			pi.ServerVerifiedAt = &at
		}
		return pi
	}
	wantFirst := serving.PublicInvestigation{
		ID: firstID, PostID: first.PostID, PostVersionID: first.PostVersionID, ContentHash: first.ContentHash,
		Platform: events.PlatformX, ExternalID: "900", URL: first.URL, Provenance: events.ProvenanceServerVerified,
		ServerVerifiedAt: ptr(base), CorroborationCount: 2, CheckedAt: base.Add(2 * time.Minute),
		PromptVersion: "investigator@2", Provider: "openai", Model: "gpt-test", ClaimCount: 2,
		ConfigurationName: "default", ConfigurationActive: true, Visible: true,
	}
	wantEdited := serving.PublicInvestigation{
		ID: editedID, PostID: edited.PostID, PostVersionID: edited.PostVersionID, ContentHash: edited.ContentHash,
		Platform: events.PlatformX, ExternalID: "900", URL: edited.URL, Provenance: events.ProvenanceClientFallback,
		CheckedAt: base.Add(5 * time.Minute), PromptVersion: "investigator@2", Provider: "openai", Model: "gpt-test", ClaimCount: 1,
		ConfigurationName: "default", ConfigurationActive: true, Visible: true,
	}

	t.Run("by id", func(t *testing.T) {
		got, err := rd.PublicInvestigation(ctx, firstID)
		require.NoError(t, err)
		require.Equal(t, wantFirst, norm(got))
		got, err = rd.PublicInvestigation(ctx, editedID)
		require.NoError(t, err)
		require.Equal(t, wantEdited, norm(got), "a client-fallback version has no verification time")
		for name, id := range map[string]string{
			"pending":     pendingID,
			"failed":      failedID,
			"unknown":     events.InvestigationID(events.PostVersionID(first.PostID, hex64("unknown"))),
			"not a uuid":  "not-a-uuid",
			"post id":     first.PostID,
			"empty":       "",
			"injected id": firstID + "' OR '1'='1",
		} {
			_, err := rd.PublicInvestigation(ctx, id)
			require.ErrorIs(t, err, serving.ErrNotFound, name)
		}
	})

	t.Run("by post", func(t *testing.T) {
		post, invs, err := rd.PublicPostInvestigations(ctx, events.PlatformX, "900")
		require.NoError(t, err)
		require.Equal(t, serving.PublicPost{ID: first.PostID, Platform: events.PlatformX, ExternalID: "900", URL: first.URL}, post)
		require.Len(t, invs, 2)
		require.Equal(t, []serving.PublicInvestigation{wantEdited, wantFirst}, []serving.PublicInvestigation{norm(invs[0]), norm(invs[1])}, "newest first")

		for _, ref := range [][2]string{{events.PlatformLessWrong, "pending"}, {events.PlatformSubstack, "failed"}} {
			post, invs, err := rd.PublicPostInvestigations(ctx, ref[0], ref[1])
			require.NoError(t, err, ref)
			require.Equal(t, ref[1], post.ExternalID)
			require.Empty(t, invs, "%v: nothing complete to show", ref)
			require.NotNil(t, invs)
		}
		_, _, err = rd.PublicPostInvestigations(ctx, events.PlatformLessWrong, "900") // other platform
		require.ErrorIs(t, err, serving.ErrNotFound)
		_, _, err = rd.PublicPostInvestigations(ctx, events.PlatformX, "never")
		require.ErrorIs(t, err, serving.ErrNotFound)
	})

	t.Run("claims of many investigations", func(t *testing.T) {
		before := tracer.n.Load()
		got, err := rd.ClaimsOfInvestigations(ctx, []string{editedID, firstID, pendingID, failedID, "not-a-uuid"})
		require.NoError(t, err)
		require.Equal(t, int64(1), tracer.n.Load()-before, "one statement for all of them")
		require.Equal(t, map[string][]string{
			firstID: {"alpha", "beta"}, editedID: {"gamma"}, pendingID: {}, failedID: {}, "not-a-uuid": {},
		}, map[string][]string{
			firstID: claimSummaries(got[firstID]), editedID: claimSummaries(got[editedID]), pendingID: claimSummaries(got[pendingID]),
			failedID: claimSummaries(got[failedID]), "not-a-uuid": claimSummaries(got["not-a-uuid"]),
		})
		require.Len(t, got, 5)
		want := completedWith(first, "alpha", "beta").Claims[1]
		require.Equal(t, serving.Claim{ID: want.ID, Text: want.Text, Context: want.Context, Summary: want.Summary, Reasoning: want.Reasoning, Sources: want.Sources}, got[firstID][1])

		before = tracer.n.Load()
		got, err = rd.ClaimsOfInvestigations(ctx, []string{"junk"})
		require.NoError(t, err)
		require.Equal(t, int64(0), tracer.n.Load()-before, "nothing valid to ask for: no statement")
		require.Equal(t, map[string][]serving.Claim{"junk": {}}, got)
	})

	t.Run("authors of many posts", func(t *testing.T) {
		before := tracer.n.Load()
		got, err := rd.AuthorsOfPosts(ctx, []string{first.PostID, pending.PostID, "junk"})
		require.NoError(t, err)
		require.Equal(t, int64(1), tracer.n.Load()-before, "one statement for all of them")
		require.Equal(t, map[string]serving.PublicAuthor{
			first.PostID: {ID: events.AuthorID(events.PlatformX, "u42"), Platform: events.PlatformX, DisplayName: "Ada"},
		}, got, "a post without a known author is absent")
		got, err = rd.AuthorsOfPosts(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
	})
}
