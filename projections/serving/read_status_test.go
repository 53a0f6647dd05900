package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

func investigationOf(r *events.PostVersionRegisteredV1) *events.InvestigationRequestedV1 {
	return &events.InvestigationRequestedV1{
		InvestigationID: events.InvestigationID(r.PostVersionID), PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceSelector,
	}
}

func TestReaderVersionStatus(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	a := registration(events.PlatformX, "100", "The first version.")
	a.Provenance = events.ProvenanceClientFallback
	b := registration(events.PlatformX, "100", "The second version.")
	p.handle(t, records(t, 0, 0, timed{a, base}, timed{b, base.Add(time.Minute)}, timed{investigationOf(a), base.Add(2 * time.Minute)})...)

	got, err := rd.VersionStatusByID(ctx, a.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, serving.VersionStatus{
		Version: serving.Version{
			ID: a.PostVersionID, PostID: a.PostID, Platform: "X", ExternalID: "100",
			VersionHash: a.VersionHash, ContentHash: a.ContentHash, WordCount: 3,
		},
		InvestigationID: events.InvestigationID(a.PostVersionID), InvestigationStatus: events.StatusPending,
		PendingClaims: []serving.Claim{}, ConfirmedClaims: []serving.Claim{},
	}, got)

	// The other version of the same post has no investigation of its own.
	got, err = rd.VersionStatusByID(ctx, b.PostVersionID)
	require.NoError(t, err)
	require.Empty(t, got.InvestigationID)
	require.Empty(t, got.InvestigationStatus)
	require.NotNil(t, got.ServerVerifiedAt)
	require.True(t, base.Add(time.Minute).Equal(*got.ServerVerifiedAt))

	_, err = rd.VersionStatusByID(ctx, events.PostVersionID(a.PostID, hex64("unknown")))
	require.ErrorIs(t, err, serving.ErrNotFound)

	// A request for a version not (yet) projected does not invent one.
	c := registration(events.PlatformX, "200", "Registered later.")
	p.handle(t, records(t, 0, 3, timed{investigationOf(c), base.Add(3 * time.Minute)})...)
	_, err = rd.VersionStatusByID(ctx, c.PostVersionID)
	require.ErrorIs(t, err, serving.ErrNotFound)
}

func TestReaderBatchStatuses(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	done := registration(events.PlatformLessWrong, "lw1", "An investigated version.")
	edited := registration(events.PlatformLessWrong, "lw1", "An edited version, not investigated.")
	pending := registration(events.PlatformX, "300", "A version being investigated.")
	plain := registration(events.PlatformWikipedia, "en:1", "A version nobody asked about.")
	p.handle(t, records(t, 0, 0,
		timed{done, base}, timed{edited, base}, timed{pending, base}, timed{plain, base},
		timed{investigationOf(done), base.Add(time.Minute)}, timed{investigationOf(pending), base.Add(time.Minute)},
	)...)
	// Nothing completes an investigation yet (the investigator will); mark
	// one COMPLETE as its projection will.
	_, err := p.pool.Exec(ctx, `UPDATE investigations SET status = 'COMPLETE' WHERE post_version_id = $1`, done.PostVersionID)
	require.NoError(t, err)

	key := func(r *events.PostVersionRegisteredV1) serving.BatchKey {
		return serving.BatchKey{Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash}
	}
	keys := []serving.BatchKey{
		key(done),
		key(edited),  // same post, other version: strict version rule
		key(pending), // PENDING is not investigated
		key(plain),
		{Platform: events.PlatformX, ExternalID: "lw1", VersionHash: done.VersionHash},          // other platform
		{Platform: events.PlatformLessWrong, ExternalID: "nope", VersionHash: done.VersionHash}, // unknown post
		key(done), // repeated
	}
	got, err := rd.BatchStatuses(ctx, keys)
	require.NoError(t, err)
	investigated := serving.BatchStatus{Investigated: true}
	require.Equal(t, []serving.BatchStatus{investigated, {}, {}, {}, {}, {}, investigated}, got)

	got, err = rd.BatchStatuses(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestReaderAPIKeys(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	shaA, shaB := hex64("key a"), hex64("key b")
	idA, idB := events.APIKeyID(shaA), events.APIKeyID(shaB)
	p.handle(t, records(t, 0, 0,
		timed{&events.APIKeyAddedV1{KeyID: idA, KeySHA256: shaA, Label: "first"}, base},
		timed{&events.APIKeyAddedV1{KeyID: idB, KeySHA256: shaB, Label: "second"}, base.Add(time.Minute)},
		timed{&events.APIKeyRevokedV1{KeyID: idB, Reason: "leaked"}, base.Add(2 * time.Minute)},
	)...)

	for _, tc := range []struct {
		sha    string
		active bool
	}{{shaA, true}, {shaB, false}, {hex64("never added"), false}, {idA, false}} {
		ok, err := rd.ActiveAPIKey(ctx, tc.sha)
		require.NoError(t, err)
		require.Equal(t, tc.active, ok, tc.sha)
	}

	revokedAt := base.Add(2 * time.Minute)
	wantA := serving.APIKey{ID: idA, Label: "first", CreatedAt: base}
	wantB := serving.APIKey{ID: idB, Label: "second", CreatedAt: base.Add(time.Minute), RevokedAt: &revokedAt, RevokeReason: "leaked"}
	norm := func(k serving.APIKey) serving.APIKey {
		k.CreatedAt = k.CreatedAt.UTC()
		if k.RevokedAt != nil {
			at := k.RevokedAt.UTC()
			k.RevokedAt = &at
		}
		return k
	}
	got, err := rd.APIKeyByID(ctx, idB)
	require.NoError(t, err)
	require.Equal(t, wantB, norm(got))
	_, err = rd.APIKeyByID(ctx, events.APIKeyID(hex64("never added")))
	require.ErrorIs(t, err, serving.ErrNotFound)

	all, err := rd.APIKeys(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, []serving.APIKey{wantA, wantB}, []serving.APIKey{norm(all[0]), norm(all[1])})
}
