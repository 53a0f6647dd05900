package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/producers/ingest"
)

// waitApplied waits until the serving projection applied pos.
func (b *bundle) waitApplied(t testing.TB, pos producers.Position) {
	t.Helper()
	b.runnerAlive(t)
	require.NoError(t, b.watermark.WaitFor(context.Background(), pos.Topic, pos.Partition, pos.Offset, 15*time.Second))
}

// postEvents reads every event of the posts topic, in partition order.
func (b *bundle) postEvents(t testing.TB) []events.Event {
	t.Helper()
	ends := b.endOffsets(t)
	var total int64
	for _, o := range ends {
		total += o
	}
	cl, err := kafka.NewClient(b.brokers, kgo.ConsumeTopics(b.postsTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	reg := events.NewCatalogRegistry()
	var out []events.Event
	for int64(len(out)) < total {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "read %d of %d events", len(out), total)
		fs.EachError(func(_ string, _ int32, err error) { require.NoError(t, err) })
		fs.EachRecord(func(r *kgo.Record) {
			ev, err := reg.Decode(r.Value)
			require.NoError(t, err)
			out = append(out, ev)
		})
	}
	return out
}

// registerX registers an X post over HTTP and returns its post version id.
func registerX(t testing.TB, b *bundle, externalID, text string, headers map[string]string) string {
	t.Helper()
	r := do(t, b.server, request{path: "/trpc/post.registerObservedVersion", headers: headers, body: mustRaw(t, map[string]any{
		"platform": "X", "externalId": externalID, "url": "https://x.com/v/status/" + externalID,
		"observedContentText": text,
		"metadata":            map[string]any{"authorHandle": "v", "text": text, "mediaUrls": []any{}},
	})})
	var out struct {
		PostVersionID string `json:"postVersionId"`
	}
	require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
	return out.PostVersionID
}

func settingsOf(t testing.TB, b *bundle, apiKey string) string {
	t.Helper()
	return string(resultOf(t, get(t, b.server, "/trpc/post.validateSettings", map[string]string{HeaderAPIKey: apiKey})))
}

// TestIntegrationInstanceKeyLifecycle: a key added through the service
// authenticates as soon as its event is projected (views and registrations
// carry the account), and stops authenticating once revoked.
func TestIntegrationInstanceKeyLifecycle(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	ctx := context.Background()
	svc := apikeys.NewService(b.appender)
	hasher := ingest.NewHasher(testHashSecret)

	added, err := svc.Add(ctx, "integration test")
	require.NoError(t, err)
	key := added.Key.Reveal()
	require.Regexp(t, `^erk_[A-Za-z0-9_-]{43}$`, key)
	require.Equal(t, events.APIKeyID(apikeys.Hash(key)), added.KeyID)
	require.Equal(t, b.topics.Name(events.TopicAPIKeys), added.Position.Topic)
	b.waitApplied(t, added.Position)
	account := hasher.AccountViewerKey(apikeys.Hash(key))

	require.JSONEq(t, `{"instanceApiKeyAccepted":true,"openaiApiKeyStatus":"missing"}`, settingsOf(t, b, key))
	require.JSONEq(t, `{"instanceApiKeyAccepted":false,"openaiApiKeyStatus":"missing"}`, settingsOf(t, b, key+"x"))

	// Authenticated registration and view.
	withKey := map[string]string{HeaderAPIKey: " " + key + " ", "User-Agent": "UA/authenticated"}
	versionID := registerX(t, b, "1790000000000000101", "A post read with an instance key.", withKey)
	r := do(t, b.server, request{path: "/trpc/post.recordViewAndGetStatus", headers: withKey,
		body: mustRaw(t, map[string]any{"postVersionId": versionID})})
	require.Equal(t, notInvestigatedBody, string(r.body))
	postID := events.PostID("X", "1790000000000000101")
	require.Equal(t, postCounters{ViewCount: 1, UniqueViewScore: 1}, b.waitViews(t, postID, 1))
	var creditedViewer string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT viewer_key FROM post_view_credits WHERE post_id = $1`, postID).Scan(&creditedViewer))
	require.Equal(t, account, creditedViewer, "the credit goes to the account")

	// Revoke by id: the key no longer authenticates.
	revoked, err := svc.Revoke(ctx, added.KeyID, "rotated")
	require.NoError(t, err)
	require.Equal(t, added.KeyID, revoked.KeyID)
	b.waitApplied(t, revoked.Position)
	require.JSONEq(t, `{"instanceApiKeyAccepted":false,"openaiApiKeyStatus":"missing"}`, settingsOf(t, b, key))
	r = do(t, b.server, request{path: "/trpc/post.recordViewAndGetStatus", headers: withKey,
		body: mustRaw(t, map[string]any{"postVersionId": versionID})})
	require.Equal(t, notInvestigatedBody, string(r.body), "a revoked key is not an error on the view path")
	b.waitViews(t, postID, 2)

	// What the log says: the registration carries the reporter, the first
	// view the account, the second the anonymous session.
	evs := b.postEvents(t)
	require.Len(t, evs, 3)
	reg, ok := evs[0].Payload.(*events.PostVersionRegisteredV1)
	require.True(t, ok, "%T", evs[0].Payload)
	require.Equal(t, account, reg.ReporterKey)
	first, ok := evs[1].Payload.(*events.PostViewRecordedV2)
	require.True(t, ok)
	require.Equal(t, events.ViewerInstanceAPIKey, first.ViewerKind)
	require.Equal(t, account, first.ViewerKey)
	second, ok := evs[2].Payload.(*events.PostViewRecordedV2)
	require.True(t, ok)
	require.Equal(t, events.ViewerAnonymousSession, second.ViewerKind)
	require.NotEqual(t, account, second.ViewerKey)
	for _, ev := range evs {
		raw, err := json.Marshal(ev.Payload)
		require.NoError(t, err)
		require.NotContains(t, string(raw), key, "the key never reaches the log")
		require.NotContains(t, string(raw), apikeys.Hash(key), "nor its bare hash")
	}

	// The projection keeps the hash and the revocation, no key.
	var sha, reason string
	var revokedAt *time.Time
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT key_sha256, revoked_at, revoke_reason FROM instance_api_keys WHERE key_id = $1`,
		added.KeyID).Scan(&sha, &revokedAt, &reason))
	require.Equal(t, apikeys.Hash(key), sha)
	require.NotNil(t, revokedAt)
	require.Equal(t, "rotated", reason)
}

// TestIntegrationInvestigationStatus: an investigation.requested event for a
// registered version makes recordViewAndGetStatus answer INVESTIGATING, for
// that version only; the view is still recorded.
func TestIntegrationInvestigationStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	ctx := context.Background()
	const ext = "1790000000000000202"
	versionA := registerX(t, b, ext, "The first version of the post.", nil)
	versionB := registerX(t, b, ext, "The second, edited version of the post.", nil)
	postID := events.PostID("X", ext)

	var hashA string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT version_hash FROM post_versions WHERE id = $1`, versionA).Scan(&hashA))
	ev, err := b.appender.NewEvent(&events.InvestigationRequestedV1{
		InvestigationID: events.InvestigationID(versionA), PostID: postID, PostVersionID: versionA,
		Platform: "X", ExternalID: ext, VersionHash: hashA, Source: events.RequestSourceSelector, UniqueViewScore: 1,
	}, "test", "")
	require.NoError(t, err)
	pos, err := b.appender.Append(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, b.topics.Name(events.TopicInvestigations), pos[0].Topic)
	b.waitApplied(t, pos[0])

	view := func(id string) string {
		r := post(t, b.server, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": id}))
		require.Equal(t, http.StatusOK, r.status)
		return string(r.body)
	}
	require.Equal(t, `{"result":{"data":{"investigationState":"INVESTIGATING","status":"PENDING","provenance":"CLIENT_FALLBACK",`+
		`"pendingClaims":[],"confirmedClaims":[],"priorInvestigationResult":null}}}`, view(versionA))
	require.Equal(t, notInvestigatedBody, view(versionB), "strict version rule: B is not A")
	b.waitViews(t, postID, 2)

	// batchStatus over HTTP GET: PENDING is not INVESTIGATED.
	hashOf := func(id string) string {
		var h string
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT version_hash FROM post_versions WHERE id = $1`, id).Scan(&h))
		return h
	}
	batch := func() string {
		r := get(t, b.server, queryPath("post.batchStatus", map[string]any{"posts": []any{
			map[string]any{"platform": "X", "externalId": ext, "versionHash": hashOf(versionA)},
			map[string]any{"platform": "X", "externalId": ext, "versionHash": hashOf(versionB)},
			map[string]any{"platform": "X", "externalId": "never-registered", "versionHash": hashOf(versionA)},
			map[string]any{"platform": "LESSWRONG", "externalId": ext, "versionHash": hashOf(versionA)},
		}}), nil)
		return string(resultOf(t, r))
	}
	notInv := func(platform, ext string) string {
		return fmt.Sprintf(`{"platform":%q,"externalId":%q,"investigationState":"NOT_INVESTIGATED","incorrectClaimCount":0}`, platform, ext)
	}
	require.Equal(t, `{"statuses":[`+notInv("X", ext)+`,`+notInv("X", ext)+`,`+notInv("X", "never-registered")+`,`+notInv("LESSWRONG", ext)+`]}`, batch())

	// No event completes an investigation yet (that comes with the
	// investigator); the test marks the row COMPLETE the way that
	// projection will, to check both readers against the completed state.
	_, err = b.pool.Exec(ctx, `UPDATE investigations SET status = 'COMPLETE' WHERE post_version_id = $1`, versionA)
	require.NoError(t, err)
	require.Equal(t, `{"statuses":[{"platform":"X","externalId":"`+ext+`","investigationState":"INVESTIGATED","incorrectClaimCount":0},`+
		notInv("X", ext)+`,`+notInv("X", "never-registered")+`,`+notInv("LESSWRONG", ext)+`]}`, batch())
	require.Equal(t, `{"result":{"data":{"investigationState":"INVESTIGATED","provenance":"CLIENT_FALLBACK","claims":[]}}}`, view(versionA))
	require.Equal(t, notInvestigatedBody, view(versionB))

	_, err = b.pool.Exec(ctx, `UPDATE investigations SET status = 'FAILED' WHERE post_version_id = $1`, versionA)
	require.NoError(t, err)
	require.Equal(t, notInvestigatedBody, view(versionA), "FAILED reads as NOT_INVESTIGATED")
	b.waitViews(t, postID, 5)
}
