package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers/ingest/canonical"
	"github.com/errata-dev/errata/projections/serving"
)

// appView is a local stand-in for public.api.bsky.app: it answers
// app.bsky.feed.getPostThread from the saved answers in
// canonical/testdata, or as the AppView does for an unknown post, or with
// a 503 while down. It never forwards anything.
type appView struct {
	*httptest.Server
	down  atomic.Bool
	calls atomic.Int32
}

func newAppView(t *testing.T) *appView {
	t.Helper()
	a := &appView{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.calls.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if a.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"InternalServerError","message":"Internal Server Error"}`))
			return
		}
		uri := r.URL.Query().Get("uri")
		if r.URL.Path != "/xrpc/app.bsky.feed.getPostThread" || r.URL.Query().Get("depth") != "0" {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("canonical", "testdata", "bluesky-getPostThread-"+filepath.Base(uri[strings.LastIndex(uri, "/")+1:])+".json"))
		if err != nil || !strings.Contains(string(b), `"uri":"`+uri+`"`) {
			w.WriteHeader(http.StatusBadRequest)
			msg, _ := json.Marshal("Post not found: " + uri)
			_, _ = w.Write([]byte(`{"error":"NotFound","message":` + string(msg) + `}`))
			return
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(a.Close)
	return a
}

// service is an ingest service verifying against the local AppView
// through the production fetcher and an SSRF-safe client that may reach
// only that server.
func (a *appView) service(t *testing.T) *Service {
	t.Helper()
	client, err := httpsafe.New(httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(a.Listener.Addr().String())))
	require.NoError(t, err)
	f, err := canonical.NewFetcher(client, canonical.Endpoints{BlueskyThread: a.URL + "/xrpc/app.bsky.feed.getPostThread"}, nil,
		canonical.WithRetryPolicy(canonical.RetryPolicy{Attempts: 2}))
	require.NoError(t, err)
	return NewService(nil, WithVerifier(f, 5*time.Second))
}

func blueskyBody(t *testing.T, externalID, handle, text string) *RegisterInput {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"platform": "BLUESKY", "externalId": externalID,
		"url":                 "https://bsky.app/profile/" + handle + "/post/" + externalID[strings.LastIndex(externalID, "/")+1:],
		"observedContentText": text,
		"metadata":            map[string]any{"handle": handle, "displayName": "Someone", "likeCount": 5},
	})
	require.NoError(t, err)
	return mustParse(t, string(b))
}

const (
	harborURI      = "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w"
	harborObserved = "Sea level along the Dutch coast rose about 20 cm over the last century, per the \u201cZeespiegelmonitor 2022\u201d.\n\n" +
		"The Afsluitdijk was finished in 1932 \u2014 and it\u2019s 32 km long \U0001F30A\nipcc.ch/report/ar6/syr/\u2026 #climate"
	harborCanonical = `Sea level along the Dutch coast rose about 20 cm over the last century, per the "Zeespiegelmonitor 2022". ` +
		"The Afsluitdijk was finished in 1932 - and it's 32 km long \U0001F30A ipcc.ch/report/ar6/syr/... #climate"
)

func TestVerifyBlueskyAgainstTheAppView(t *testing.T) {
	av := newAppView(t)
	s := av.service(t)
	ctx := context.Background()
	created := time.Date(2024, 11, 22, 17, 4, 5, 123_000_000, time.UTC)

	t.Run("verified: the record's text, exactly", func(t *testing.T) {
		in := blueskyBody(t, harborURI, "harbor-notes.bsky.social", harborObserved)
		p, err := BuildRegistration(in)
		require.NoError(t, err)
		anomalies, err := s.verify(ctx, in, p)
		require.NoError(t, err)
		require.Empty(t, anomalies)
		require.NoError(t, p.Validate())
		require.Equal(t, events.ProvenanceServerVerified, p.Provenance)
		require.Empty(t, p.ServerFetchError)
		require.Equal(t, harborCanonical, p.ContentText)
		id, err := content.ComputeVersionIdentity(harborCanonical, nil)
		require.NoError(t, err)
		require.Equal(t, id.VersionHash, p.VersionHash)
		require.Equal(t, events.PostVersionID(events.PostID("BLUESKY", harborURI), id.VersionHash), p.PostVersionID)
		require.Empty(t, p.ServerHTML, "a Bluesky post has no HTML")
		require.Equal(t, &events.BlueskyMetaV1{
			DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", RKey: "3lbg6v5ctk22w", Handle: "harbor-notes.bsky.social",
			DisplayName: "Harbor Notes \U0001F30A", CID: "bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu",
			CreatedAt: &created, LikeCount: ptr(5),
		}, p.Bluesky, "the AppView's identity, the client's counts")
		require.Equal(t, &events.AuthorV1{PlatformUserID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", DisplayName: "Harbor Notes \U0001F30A"}, p.Author)
	})

	t.Run("mismatch: the AppView's text and handle win, both recorded", func(t *testing.T) {
		in := blueskyBody(t, harborURI, "harbor.example.com", "Sea level along the Dutch coast rose about 2 m over the last century.")
		p, err := BuildRegistration(in)
		require.NoError(t, err)
		observedHash := p.ContentHash
		anomalies, err := s.verify(ctx, in, p)
		require.NoError(t, err)
		require.NoError(t, p.Validate())
		require.Equal(t, events.ProvenanceServerVerified, p.Provenance)
		require.Equal(t, harborCanonical, p.ContentText)
		require.Equal(t, "harbor-notes.bsky.social", p.Bluesky.Handle)
		require.Len(t, anomalies, 2)
		for _, a := range anomalies {
			require.NoError(t, a.Validate())
			require.Equal(t, p.PostVersionID, a.PostVersionID)
			require.Equal(t, harborURI, a.ExternalID)
		}
		require.Equal(t, events.AnomalyIdentityMismatch, anomalies[0].Kind)
		require.Equal(t, "handle", anomalies[0].Field)
		require.Equal(t, "harbor.example.com", anomalies[0].ObservedValue)
		require.Equal(t, "harbor-notes.bsky.social", anomalies[0].ServerValue)
		require.Equal(t, events.AnomalyContentMismatch, anomalies[1].Kind)
		require.Equal(t, "content_hash", anomalies[1].Field)
		require.Equal(t, observedHash, anomalies[1].ObservedValue)
		require.Equal(t, content.ContentHash(harborCanonical), anomalies[1].ServerValue)
	})

	t.Run("unknown post: client fallback, not found", func(t *testing.T) {
		in := blueskyBody(t, "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3kaaaaaaaaaaa", "harbor-notes.bsky.social", "Deleted since.")
		p, err := BuildRegistration(in)
		require.NoError(t, err)
		anomalies, err := s.verify(ctx, in, p)
		require.NoError(t, err)
		require.Empty(t, anomalies)
		require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
		require.Equal(t, "Deleted since.", p.ContentText)
		require.Contains(t, p.ServerFetchError, "bluesky canonical fetch of at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3kaaaaaaaaaaa: post not found on platform")
		require.Empty(t, p.Bluesky.CID)
	})

	t.Run("AppView down: client fallback with the reason", func(t *testing.T) {
		av.down.Store(true)
		defer av.down.Store(false)
		before := av.calls.Load()
		in := blueskyBody(t, "at://did:plc:4rbd5d3qpcnwjxcqf6tzbhkw/app.bsky.feed.post/3lc2mxq7ynp2c", "tidegauge.example.org", "The Afsluitdijk is 32 km long.")
		p, err := BuildRegistration(in)
		require.NoError(t, err)
		anomalies, err := s.verify(ctx, in, p)
		require.NoError(t, err)
		require.Empty(t, anomalies)
		require.NoError(t, p.Validate())
		require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
		require.Equal(t, "The Afsluitdijk is 32 km long.", p.ContentText)
		require.Equal(t, "bluesky canonical fetch of at://did:plc:4rbd5d3qpcnwjxcqf6tzbhkw/app.bsky.feed.post/3lc2mxq7ynp2c: gave up after 2 attempts: GET "+
			av.URL+"/xrpc/app.bsky.feed.getPostThread?depth=0&parentHeight=0&uri=at%3A%2F%2Fdid%3Aplc%3A4rbd5d3qpcnwjxcqf6tzbhkw%2Fapp.bsky.feed.post%2F3lc2mxq7ynp2c: HTTP 503 Service Unavailable",
			p.ServerFetchError)
		require.Equal(t, before+2, av.calls.Load(), "retried once")
		require.Equal(t, &events.AuthorV1{PlatformUserID: "did:plc:4rbd5d3qpcnwjxcqf6tzbhkw", DisplayName: "Someone"}, p.Author)
	})
}

func TestVerifyThreadsIsNeverFetched(t *testing.T) {
	v := &fakeVerifier{}
	s := NewService(nil, WithVerifier(v, time.Second))
	in := mustParse(t, `{"platform":"THREADS","externalId":"DBxK2mYsQpL","url":"https://www.threads.net/@some.user/post/DBxK2mYsQpL",
		"observedContentText":"The Great Wall is visible from the Moon.","metadata":{"username":"some.user"}}`)
	p, err := BuildRegistration(in)
	require.NoError(t, err)
	anomalies, err := s.verify(context.Background(), in, p)
	require.NoError(t, err)
	require.Empty(t, anomalies)
	require.NoError(t, p.Validate())
	require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
	require.Equal(t, "Threads has no public API to read a post from: platform content cannot be verified server-side", p.ServerFetchError)
	require.ErrorIs(t, errThreadsNotVerifiable, canonical.ErrNotVerifiable)
	require.Zero(t, v.calls.Load())
}

func TestVerifyCacheBluesky(t *testing.T) {
	v := &fakeVerifier{res: canonical.Result{Text: "x"}}
	c := newVerifyCache(v)
	ctx := context.Background()
	req := canonical.BlueskyRequest{DID: "did:plc:ewvi7nxzyoun6zhxrhs64oiz", RKey: "3lbg6v5ctk22w", Handle: "a.example"}
	_, _ = c.Bluesky(ctx, req)
	_, _ = c.Bluesky(ctx, req)
	require.EqualValues(t, 1, v.calls.Load())
	req.Handle = "b.example"
	_, _ = c.Bluesky(ctx, req)
	require.EqualValues(t, 2, v.calls.Load(), "the handle the client saw decides the mismatch: it is part of the key")
}

func ptr[T any](v T) *T { return &v }

// TestRegisterBlueskyThroughTheLog registers Bluesky posts through the
// service on a real log and serving projection, verified against the
// local AppView: the verified version carries the AppView's text and
// identity (and is latched SERVER_VERIFIED), a client that saw other text
// and another handle gets the AppView's version registered and both
// anomalies appended after it, and an AppView outage falls back to the
// client's text with the reason.
func TestRegisterBlueskyThroughTheLog(t *testing.T) {
	st := teststack.Serving(t, teststack.Options{})
	av := newAppView(t)
	base := av.service(t)
	svc := NewService(st.Appender, WithVerifier(base.verifier, 5*time.Second))
	ctx := context.Background()
	wait := func(reg Registered, extra int64) {
		t.Helper()
		require.NoError(t, st.Watermark.WaitFor(ctx, reg.Position.Topic, reg.Position.Partition, reg.Position.Offset+extra, time.Minute))
	}
	reader := serving.NewReader(st.Pool)

	reg, err := svc.Register(ctx, blueskyBody(t, harborURI, "harbor-notes.bsky.social", harborObserved), Caller{CorrelationID: "test"})
	require.NoError(t, err)
	require.Equal(t, events.ProvenanceServerVerified, reg.Provenance)
	require.Equal(t, harborURI, reg.ExternalID)
	id, err := content.ComputeVersionIdentity(harborCanonical, nil)
	require.NoError(t, err)
	require.Equal(t, id.VersionHash, reg.VersionHash)
	wait(reg, 0)
	src, err := reader.Source(ctx, reg.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, harborCanonical, src.Text, "exactly the record's text, normalized")
	require.Equal(t, events.ProvenanceServerVerified, src.Provenance())
	var handle, cid, author string
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT m.handle, m.cid, a.display_name FROM bluesky_version_meta m
		JOIN post_versions pv ON pv.id = m.post_version_id JOIN posts p ON p.id = pv.post_id JOIN authors a ON a.id = p.author_id
		WHERE m.post_version_id = $1`, reg.PostVersionID).Scan(&handle, &cid, &author))
	require.Equal(t, []string{"harbor-notes.bsky.social", "bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu", "Harbor Notes \U0001F30A"},
		[]string{handle, cid, author})

	// Another client saw other words under an old handle: the same
	// canonical version is registered again, with two anomalies.
	reg2, err := svc.Register(ctx, blueskyBody(t, harborURI, "harbor.example.com", "Sea level rose 2 m."), Caller{CorrelationID: "test"})
	require.NoError(t, err)
	require.Equal(t, reg.PostVersionID, reg2.PostVersionID)
	wait(reg2, 2)
	require.Equal(t, 2, seenCount(t, st, reg.PostVersionID))
	rows, err := st.Pool.Query(ctx, `SELECT kind || '/' || field || '/' || observed_value || '/' || server_value FROM integrity_anomalies
		WHERE post_version_id = $1 ORDER BY field`, reg.PostVersionID)
	require.NoError(t, err)
	var anomalies []string
	for rows.Next() {
		var a string
		require.NoError(t, rows.Scan(&a))
		anomalies = append(anomalies, a)
	}
	require.NoError(t, rows.Err())
	observed, err := content.ComputeVersionIdentity("Sea level rose 2 m.", nil)
	require.NoError(t, err)
	require.Equal(t, []string{
		"CONTENT_MISMATCH/content_hash/" + observed.ContentHash + "/" + id.ContentHash,
		"IDENTITY_MISMATCH/handle/harbor.example.com/harbor-notes.bsky.social",
	}, anomalies)

	// The AppView goes down.
	av.down.Store(true)
	reg3, err := svc.Register(ctx, blueskyBody(t, "at://did:plc:4rbd5d3qpcnwjxcqf6tzbhkw/app.bsky.feed.post/3lc2mxq7ynp2c",
		"tidegauge.example.org", "The Afsluitdijk is 32 km long."), Caller{CorrelationID: "test"})
	require.NoError(t, err)
	require.Equal(t, events.ProvenanceClientFallback, reg3.Provenance)
	wait(reg3, 0)
	v, err := reader.VersionByID(ctx, reg3.PostVersionID)
	require.NoError(t, err)
	require.Nil(t, v.ServerVerifiedAt)
	var noCID bool
	require.NoError(t, st.Pool.QueryRow(ctx, `SELECT cid IS NULL FROM bluesky_version_meta WHERE post_version_id = $1`,
		reg3.PostVersionID).Scan(&noCID))
	require.True(t, noCID, "stored, without a CID")
}

func seenCount(t *testing.T, st *teststack.Stack, versionID string) int {
	t.Helper()
	var n int
	require.NoError(t, st.Pool.QueryRow(context.Background(), `SELECT seen_count FROM post_versions WHERE id = $1`, versionID).Scan(&n))
	return n
}
