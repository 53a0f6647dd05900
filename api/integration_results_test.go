package api

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// TestIntegrationInvestigationResults drives the status read side with real
// lifecycle events: a completed investigation is served with its claims, its
// claims become the interim result of a newer version only when it read
// server-verified content, batchStatus counts claims, and a failed
// investigation reads as NOT_INVESTIGATED until investigateNow starts a new
// attempt series.
func TestIntegrationInvestigationResults(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	ctx := context.Background()
	const ext = "1790000000000000303"
	v1 := registerX(t, b, ext, "The Eiffel Tower is 3,000 meters tall and was finished in 1889.", nil)
	v2 := registerX(t, b, ext, "The Eiffel Tower is 3,000 meters tall and was finished in 1889. Edited.", nil)
	v3 := registerX(t, b, ext, "Third version.", nil)
	postID := events.PostID("X", ext)
	hashOf := func(id string) string {
		var h string
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT version_hash FROM post_versions WHERE id = $1`, id).Scan(&h))
		return h
	}
	appendAll := func(ps ...events.Payload) {
		var evs []events.Event
		for _, p := range ps {
			ev, err := b.appender.NewEvent(p, "test", "")
			require.NoError(t, err)
			evs = append(evs, ev)
		}
		pos, err := b.appender.Append(ctx, evs...)
		require.NoError(t, err)
		b.waitApplied(t, pos[len(pos)-1])
	}
	request := func(v, source string) *events.InvestigationRequestedV1 {
		return &events.InvestigationRequestedV1{
			InvestigationID: events.InvestigationID(v), PostID: postID, PostVersionID: v,
			Platform: "X", ExternalID: ext, VersionHash: hashOf(v), Source: source,
		}
	}
	inv1 := events.InvestigationID(v1)
	claim := events.ClaimV1{
		ID: events.ClaimID(inv1, 0), Text: "The Eiffel Tower is 3,000 meters tall",
		Context:   "The Eiffel Tower is 3,000 meters tall and was finished in 1889.",
		Summary:   "The tower is about 330 metres tall, not 3,000.",
		Reasoning: "The official site gives a height of 330 m including antennas.",
		Sources:   []events.SourceV1{{URL: "https://www.toureiffel.paris/en/the-monument/key-figures", Title: "Key figures", Snippet: "330 m"}},
	}
	appendAll(request(v1, events.RequestSourceSelector), &events.InvestigationCompletedV1{
		InvestigationID: inv1, PostID: postID, PostVersionID: v1, Provenance: events.ProvenanceServerVerified,
		PromptVersion: "investigator-1", Provider: "OPENAI", Model: "gpt-5", Claims: []events.ClaimV1{claim},
	})

	view := func(id string) string {
		r := post(t, b.server, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": id}))
		require.Equal(t, http.StatusOK, r.status)
		return string(resultOf(t, r))
	}
	claimJSON := `{"id":"` + claim.ID + `","text":"The Eiffel Tower is 3,000 meters tall",` +
		`"context":"The Eiffel Tower is 3,000 meters tall and was finished in 1889.",` +
		`"summary":"The tower is about 330 metres tall, not 3,000.",` +
		`"reasoning":"The official site gives a height of 330 m including antennas.",` +
		`"sources":[{"url":"https://www.toureiffel.paris/en/the-monument/key-figures","title":"Key figures","snippet":"330 m"}]}`
	require.JSONEq(t, `{"investigationState":"INVESTIGATED","provenance":"SERVER_VERIFIED","claims":[`+claimJSON+`]}`, view(v1))
	require.JSONEq(t, `{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":{"oldClaims":[`+claimJSON+`],"sourceInvestigationId":"`+inv1+`"}}`,
		view(v2), "a newer version gets the verified result as interim context, never as its own")

	// v2 is investigated from client-fallback content and fails; v3 then
	// still gets v1's verified claims, never v2's.
	appendAll(request(v2, events.RequestSourceInvestigateNow), &events.InvestigationFailedV1{
		InvestigationID: events.InvestigationID(v2), PostID: postID, PostVersionID: v2,
		Provenance: events.ProvenanceClientFallback, Reason: "provider refused", Attempts: 1,
	})
	require.JSONEq(t, `{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":{"oldClaims":[`+claimJSON+`],"sourceInvestigationId":"`+inv1+`"}}`, view(v2))
	appendAll(request(v2, events.RequestSourceSelector))
	var status string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT status FROM investigations WHERE id = $1`, events.InvestigationID(v2)).Scan(&status))
	require.Equal(t, "FAILED", status, "the selector never retries a failed investigation")
	appendAll(request(v2, events.RequestSourceInvestigateNow))
	var series int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT status, attempt_series FROM investigations WHERE id = $1`, events.InvestigationID(v2)).Scan(&status, &series))
	require.Equal(t, "PENDING", status, "investigateNow on FAILED starts a new attempt series")
	require.Equal(t, 2, series)

	inv3 := events.InvestigationID(v3)
	appendAll(request(v3, events.RequestSourceSelector), &events.InvestigationCompletedV1{
		InvestigationID: inv3, PostID: postID, PostVersionID: v3, Provenance: events.ProvenanceClientFallback,
		PromptVersion: "investigator-1", Provider: "OPENAI", Model: "gpt-5", Claims: []events.ClaimV1{},
	})
	require.JSONEq(t, `{"investigationState":"INVESTIGATED","provenance":"CLIENT_FALLBACK","claims":[]}`, view(v3))

	r := get(t, b.server, queryPath("post.batchStatus", map[string]any{"posts": []any{
		map[string]any{"platform": "X", "externalId": ext, "versionHash": hashOf(v1)},
		map[string]any{"platform": "X", "externalId": ext, "versionHash": hashOf(v2)},
		map[string]any{"platform": "X", "externalId": ext, "versionHash": hashOf(v3)},
	}}), nil)
	require.JSONEq(t, `{"statuses":[`+
		`{"platform":"X","externalId":"`+ext+`","investigationState":"INVESTIGATED","incorrectClaimCount":1},`+
		`{"platform":"X","externalId":"`+ext+`","investigationState":"NOT_INVESTIGATED","incorrectClaimCount":0},`+
		`{"platform":"X","externalId":"`+ext+`","investigationState":"INVESTIGATED","incorrectClaimCount":0}]}`, string(resultOf(t, r)))
}
