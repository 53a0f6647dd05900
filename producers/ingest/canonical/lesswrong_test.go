package canonical

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// TestLessWrongRecorded: the real GraphQL contents.html, served in the
// API's envelope, yields exactly the reference text and hash.
func TestLessWrongRecorded(t *testing.T) {
	var g goldenEntry
	for _, e := range loadGolden(t) {
		if e.Platform == "LESSWRONG" {
			g = e
		}
	}
	page := loadPage(t, g.Fixture)
	p := newFakePlatform(t, nil)
	f := loopbackFetcher(t, p)

	res, err := f.LessWrong(context.Background(), g.ExternalID)
	require.NoError(t, err)
	requireSameText(t, string(readShared(t, g.NormalizedTextFile)), res.Text, "canonical text")
	require.Equal(t, g.ContentHash, res.ContentHash)
	require.Equal(t, g.ContentHash, content.ContentHash(res.Text))
	require.Equal(t, g.WordCount, content.WordCount(res.Text))
	require.Equal(t, page.HTML, res.HTML, "HTML is kept exactly as served")
	require.Equal(t, events.PlatformLessWrong, res.Platform)
	require.Equal(t, p.URL+fakeLessWrongPath, res.SourceURL)
	require.Equal(t, &LessWrongIdentity{PostID: g.ExternalID, Slug: "did-claude-3-opus-align-itself-via-gradient-hacking"}, res.LessWrong)
	require.Nil(t, res.Wikipedia)
	require.Nil(t, res.Substack)
	require.Empty(t, res.Mismatches)

	reqs := p.recorded()
	require.Len(t, reqs, 1)
	require.Equal(t, http.MethodPost, reqs[0].Method)
	require.Equal(t, "application/json", reqs[0].Header.Get("Content-Type"))
	require.Contains(t, reqs[0].Header.Get("User-Agent"), "Errata")
	var body lessWrongRequestBody
	require.NoError(t, json.Unmarshal(reqs[0].Body, &body))
	require.Equal(t, lessWrongPostQuery, body.Query)
	require.Equal(t, map[string]string{"id": g.ExternalID}, body.Variables)
}

func TestLessWrongResponses(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantErr  error
		wantID   *LessWrongIdentity
		mismatch []IdentityMismatch
	}{
		{
			name:   "identity fields",
			body:   `{"data":{"post":{"result":{"_id":"abc123","slug":"a-post","title":" A post ","user":{"slug":"jdoe","displayName":"J Doe"},"contents":{"html":"<p>Hello</p><p>world</p>"}}}}}`,
			wantID: &LessWrongIdentity{PostID: "abc123", Slug: "a-post", Title: "A post", AuthorSlug: "jdoe", AuthorDisplayName: "J Doe"},
		},
		{
			name:     "different _id",
			body:     `{"data":{"post":{"result":{"_id":"zzz999","contents":{"html":"<p>Hello world</p>"}}}}}`,
			wantID:   &LessWrongIdentity{PostID: "zzz999"},
			mismatch: []IdentityMismatch{{Field: "external_id", Observed: "abc123", Server: "zzz999"}},
		},
		{name: "no result", body: `{"data":{"post":{"result":null}}}`, wantErr: ErrNotFound},
		{name: "graphql error", body: `{"errors":[{"message":"app.missing_document"}],"data":{"post":null}}`, wantErr: ErrBadResponse},
		{name: "null contents", body: `{"data":{"post":{"result":{"_id":"abc123","contents":null}}}}`, wantErr: ErrNoContent},
		{name: "empty html", body: `{"data":{"post":{"result":{"_id":"abc123","contents":{"html":"  "}}}}}`, wantErr: ErrNoContent},
		{name: "html without text", body: `{"data":{"post":{"result":{"_id":"abc123","contents":{"html":"<p> </p><img src=x>"}}}}}`, wantErr: ErrNoContent},
		{name: "not JSON", body: `<html>Just a moment...</html>`, wantErr: ErrBadResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.body) })
			res, err := loopbackFetcher(t, p).LessWrong(context.Background(), "abc123")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Len(t, p.recorded(), 1, "answered requests are not retried")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "Hello world", res.Text)
			require.Equal(t, tc.wantID, res.LessWrong)
			require.Equal(t, tc.mismatch, res.Mismatches)
		})
	}
}

// TestPlatformMessagesBounded: a platform's own error text is quoted and cut
// short before it reaches our error message (and the event log).
func TestPlatformMessagesBounded(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	p := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"errors":[{"message":"`+long+`"}]}`)
	})
	_, err := loopbackFetcher(t, p).LessWrong(context.Background(), "abc123")
	require.ErrorIs(t, err, ErrBadResponse)
	require.Less(t, len(err.Error()), 500)
	require.Contains(t, err.Error(), `GraphQL error "xxx`)
}

func TestLessWrongInvalidPostID(t *testing.T) {
	p := newFakePlatform(t, nil)
	f := loopbackFetcher(t, p)
	for _, id := range []string{"", "abc/../def", "abc def", `abc"}`, "abc\x00"} {
		_, err := f.LessWrong(context.Background(), id)
		require.ErrorIs(t, err, ErrInvalidRequest, "%q", id)
	}
	require.Empty(t, p.recorded())
}
