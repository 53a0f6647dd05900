package canonical

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

const (
	harborDID  = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
	harborRKey = "3lbg6v5ctk22w"
	// The recorded post's text after normalization: curly quotes, the em
	// dash and the ellipsis folded, the blank line and line break collapsed.
	harborText = `Sea level along the Dutch coast rose about 20 cm over the last century, per the "Zeespiegelmonitor 2022". ` +
		"The Afsluitdijk was finished in 1932 - and it's 32 km long \U0001F30A ipcc.ch/report/ar6/syr/... #climate"
)

func TestBlueskyPost(t *testing.T) {
	p := newFakePlatform(t, nil)
	res, err := loopbackFetcher(t, p).Bluesky(context.Background(), BlueskyRequest{
		DID: harborDID, RKey: harborRKey, Handle: "harbor-notes.bsky.social",
	})
	require.NoError(t, err)
	require.Equal(t, events.PlatformBluesky, res.Platform)
	require.Equal(t, harborText, res.Text)
	require.Equal(t, content.ContentHash(harborText), res.ContentHash)
	require.Empty(t, res.HTML, "a Bluesky post is plain text")
	created := time.Date(2024, 11, 22, 17, 4, 5, 123_000_000, time.UTC)
	require.Equal(t, &BlueskyIdentity{
		URI: "at://" + harborDID + "/app.bsky.feed.post/" + harborRKey, DID: harborDID, RKey: harborRKey,
		CID: "bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu", Handle: "harbor-notes.bsky.social",
		DisplayName: "Harbor Notes \U0001F30A", CreatedAt: &created,
	}, res.Bluesky)
	require.Empty(t, res.Mismatches)

	reqs := p.recorded()
	require.Len(t, reqs, 1)
	require.Equal(t, http.MethodGet, reqs[0].Method)
	require.Equal(t, fakeBlueskyPath, reqs[0].Path)
	require.Equal(t, url.Values{
		"uri": {"at://" + harborDID + "/app.bsky.feed.post/" + harborRKey}, "depth": {"0"}, "parentHeight": {"0"},
	}, url.Values(reqs[0].Query))
	require.Equal(t, "application/json", reqs[0].Header.Get("Accept"))
	require.Empty(t, reqs[0].Header.Get("Authorization"), "the public AppView needs no credentials")
	require.Equal(t, p.URL+fakeBlueskyPath+"?depth=0&parentHeight=0&uri="+url.QueryEscape("at://"+harborDID+"/app.bsky.feed.post/"+harborRKey), res.SourceURL)
}

// TestBlueskyHandleMismatch: the client saw another handle (an old one, or
// a lie); the AppView's wins and the disagreement is surfaced. A reply
// whose author has no display name has none.
func TestBlueskyHandleMismatch(t *testing.T) {
	p := newFakePlatform(t, nil)
	res, err := loopbackFetcher(t, p).Bluesky(context.Background(), BlueskyRequest{
		DID: "did:plc:4rbd5d3qpcnwjxcqf6tzbhkw", RKey: "3lc2mxq7ynp2c", Handle: "tidegauge.bsky.social",
	})
	require.NoError(t, err)
	require.Equal(t, "The Afsluitdijk is 32 km long, yes, but it was closed in 1932 and only opened in 1933.", res.Text)
	require.Equal(t, "tidegauge.example.org", res.Bluesky.Handle)
	require.Empty(t, res.Bluesky.DisplayName)
	require.Equal(t, time.Date(2024, 11, 23, 8, 15, 0, 0, time.UTC), *res.Bluesky.CreatedAt)
	require.Equal(t, []IdentityMismatch{{Field: "handle", Observed: "tidegauge.bsky.social", Server: "tidegauge.example.org"}}, res.Mismatches)
}

func TestBlueskyNotVerifiable(t *testing.T) {
	const uri = "at://" + harborDID + "/app.bsky.feed.post/" + harborRKey
	post := func(patch string) string {
		fields := map[string]string{
			"uri": `"` + uri + `"`, "cid": `"bafyreihlcdxw5bq2ecsyjhwsjdsb5o3s5ksk6bquvwzuz6bzrtwdmzqjsu"`,
			"author": `{"did":"` + harborDID + `","handle":"harbor-notes.bsky.social"}`,
			"record": `{"$type":"app.bsky.feed.post","text":"Hello.","createdAt":"2024-11-22T17:04:05Z"}`,
		}
		if k, v, ok := strings.Cut(patch, "="); ok {
			fields[k] = v
		}
		var b strings.Builder
		for k, v := range fields {
			if v == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + k + `":` + v)
		}
		return `{"thread":{"$type":"app.bsky.feed.defs#threadViewPost","post":{` + b.String() + `}}}`
	}
	tests := []struct {
		name    string
		rkey    string
		status  int
		body    string
		wantErr error
		wantMsg string
	}{
		{name: "unknown post (XRPC NotFound)", rkey: "3kaaaaaaaaaaa", wantErr: ErrNotFound, wantMsg: "HTTP 400"},
		{name: "not found in the thread", body: `{"thread":{"$type":"app.bsky.feed.defs#notFoundPost","uri":"` + uri + `","notFound":true}}`, wantErr: ErrNotFound},
		{name: "blocked", body: `{"thread":{"$type":"app.bsky.feed.defs#blockedPost","uri":"` + uri + `","blocked":true,"author":{"did":"` + harborDID + `"}}}`, wantErr: ErrPaywalled},
		{name: "other 400", status: 400, body: `{"error":"InvalidRequest","message":"bad uri"}`, wantErr: ErrUpstreamStatus},
		{name: "not JSON", body: `<html>AppView</html>`, wantErr: ErrBadResponse},
		{name: "no thread", body: `{}`, wantErr: ErrBadResponse},
		{name: "unknown thread type", body: `{"thread":{"$type":"app.bsky.feed.defs#somethingNew"}}`, wantErr: ErrBadResponse},
		{name: "no post", body: `{"thread":{"$type":"app.bsky.feed.defs#threadViewPost"}}`, wantErr: ErrBadResponse},
		{name: "another record", body: post(`uri="at://` + harborDID + `/app.bsky.feed.post/3kbbbbbbbbbbb"`), wantErr: ErrBadResponse, wantMsg: "answered about"},
		{name: "another author", body: post(`author={"did":"did:plc:4rbd5d3qpcnwjxcqf6tzbhkw","handle":"a.example"}`), wantErr: ErrBadResponse, wantMsg: "author DID"},
		{name: "not a post record", body: post(`record={"$type":"app.bsky.feed.like","text":"x"}`), wantErr: ErrBadResponse, wantMsg: "record type"},
		{name: "text absent", body: post(`record={"$type":"app.bsky.feed.post"}`), wantErr: ErrBadResponse, wantMsg: "record.text"},
		{name: "text not a string", body: post(`record={"$type":"app.bsky.feed.post","text":7}`), wantErr: ErrBadResponse},
		{name: "text beyond the lexicon", body: post(`record={"$type":"app.bsky.feed.post","text":"` + strings.Repeat("a", 3001) + `"}`), wantErr: ErrBadResponse, wantMsg: "3001 bytes"},
		{name: "images only", body: post(`record={"$type":"app.bsky.feed.post","text":" \n\u200b"}`), wantErr: ErrNoContent},
		{name: "bad cid", body: post(`cid="Qm<script>"`), wantErr: ErrBadResponse, wantMsg: "cid"},
		{name: "cid absent", body: post(`cid=`), wantErr: ErrBadResponse, wantMsg: "cid"},
		{name: "handle not a handle", body: post(`author={"did":"` + harborDID + `","handle":"javascript:alert(1)"}`), wantErr: ErrBadResponse, wantMsg: "handle"},
		{name: "handle not lowercase", body: post(`author={"did":"` + harborDID + `","handle":"Harbor-Notes.bsky.social"}`), wantErr: ErrBadResponse, wantMsg: "handle"},
		{name: "handle with NUL", body: post(`author={"did":"` + harborDID + `","handle":"harbor\u0000.bsky.social"}`), wantErr: ErrBadResponse, wantMsg: "handle"},
		{name: "display name with NUL", body: post(`author={"did":"` + harborDID + `","handle":"harbor-notes.bsky.social","displayName":"a\u0000b"}`), wantErr: ErrBadResponse, wantMsg: "displayName"},
		{name: "display name beyond the lexicon", body: post(`author={"did":"` + harborDID + `","handle":"harbor-notes.bsky.social","displayName":"` + strings.Repeat("n", 641) + `"}`), wantErr: ErrBadResponse, wantMsg: "displayName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var handler http.HandlerFunc
			if tc.body != "" {
				handler = func(w http.ResponseWriter, _ *http.Request) {
					if tc.status != 0 {
						w.WriteHeader(tc.status)
					}
					_, _ = io.WriteString(w, tc.body)
				}
			}
			rkey := tc.rkey
			if rkey == "" {
				rkey = harborRKey
			}
			p := newFakePlatform(t, handler)
			_, err := loopbackFetcher(t, p).Bluesky(context.Background(), BlueskyRequest{DID: harborDID, RKey: rkey, Handle: "harbor-notes.bsky.social"})
			require.ErrorIs(t, err, tc.wantErr)
			require.ErrorContains(t, err, "bluesky canonical fetch of at://"+harborDID+"/app.bsky.feed.post/"+rkey)
			require.ErrorContains(t, err, tc.wantMsg)
			require.Len(t, p.recorded(), 1, "answers that would repeat are not retried")
		})
	}
}

// TestBlueskyRejectsBadRequests: identity that is not canonical never
// becomes a request.
func TestBlueskyRejectsBadRequests(t *testing.T) {
	p := newFakePlatform(t, nil)
	f := loopbackFetcher(t, p)
	for _, req := range []BlueskyRequest{
		{DID: "harbor-notes.bsky.social", RKey: harborRKey},
		{DID: harborDID + "&uri=at://x", RKey: harborRKey},
		{DID: harborDID, RKey: harborRKey + "&depth=1000"},
		{DID: harborDID, RKey: "../../xrpc/com.atproto.server.createSession"},
	} {
		_, err := f.Bluesky(context.Background(), req)
		require.ErrorIs(t, err, ErrInvalidRequest, "%+v", req)
	}
	require.Empty(t, p.recorded())
}

// TestBlueskyAppViewDown: 5xx answers are retried, then the error says so.
func TestBlueskyAppViewDown(t *testing.T) {
	p := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"InternalServerError"}`, http.StatusBadGateway)
	})
	f := loopbackFetcher(t, p)
	_, err := f.Bluesky(context.Background(), BlueskyRequest{DID: harborDID, RKey: harborRKey, Handle: "harbor-notes.bsky.social"})
	require.ErrorIs(t, err, ErrUpstreamStatus)
	require.NotErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "gave up after 3 attempts")
	require.ErrorContains(t, err, "HTTP 502 Bad Gateway")
	require.Len(t, p.recorded(), 3)
	require.Equal(t, []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}, f.sleeps.recorded())
}

// TestBlueskyDefaultEndpoint: production asks the public AppView, and a
// production client refuses a loopback one.
func TestBlueskyDefaultEndpoint(t *testing.T) {
	require.Equal(t, "https://public.api.bsky.app/xrpc/app.bsky.feed.getPostThread", Endpoints{}.withDefaults().BlueskyThread)
	p := newFakePlatform(t, nil)
	prod := newTestFetcher(t, p.endpoints(), nil)
	_, err := prod.Bluesky(context.Background(), BlueskyRequest{DID: harborDID, RKey: harborRKey})
	require.ErrorIs(t, err, httpsafe.ErrBlockedAddress)
	require.Empty(t, p.recorded())

	_, err = NewFetcher(mustClient(t), Endpoints{BlueskyThread: "javascript:alert(1)"}, nil)
	require.ErrorContains(t, err, "BlueskyThread")
}

func mustClient(t *testing.T) *httpsafe.Client {
	t.Helper()
	c, err := httpsafe.New()
	require.NoError(t, err)
	return c
}
