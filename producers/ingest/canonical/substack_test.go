package canonical

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

func TestSubstackPublicPost(t *testing.T) {
	p := newFakePlatform(t, nil)
	res, err := loopbackFetcher(t, p).Substack(context.Background(), SubstackRequest{
		PostID: "148123456", PublicationSubdomain: "Example", Slug: "remote-work-forecasts",
	})
	require.NoError(t, err)
	want := string(readTestdata(t, "substack-post-remote-work-forecasts.normalized.txt"))
	require.Equal(t, want, res.Text)
	require.Equal(t, content.ContentHash(want), res.ContentHash)
	require.Equal(t, events.PlatformSubstack, res.Platform)
	date := time.Date(2024, 5, 14, 12, 30, 5, 123_000_000, time.UTC)
	require.Equal(t, &SubstackIdentity{
		PostID: "148123456", Slug: "remote-work-forecasts", Title: "What the remote-work forecasts got wrong",
		Subtitle: "Four years of office data, revisited", Audience: "everyone",
		CanonicalURL: "https://example.substack.com/p/remote-work-forecasts", PostDate: &date,
	}, res.Substack)
	require.Empty(t, res.Mismatches)

	reqs := p.recorded()
	require.Len(t, reqs, 1)
	require.Equal(t, http.MethodGet, reqs[0].Method)
	require.Equal(t, "/substack/example/api/v1/posts/remote-work-forecasts", reqs[0].Path, "subdomain lower-cased")
	require.Equal(t, p.URL+reqs[0].Path, res.SourceURL)
}

// TestSubstackPostIDMismatch: the slug resolved to another post; the
// server's id wins and the disagreement is surfaced.
func TestSubstackPostIDMismatch(t *testing.T) {
	p := newFakePlatform(t, nil)
	res, err := loopbackFetcher(t, p).Substack(context.Background(), SubstackRequest{
		PostID: "1", PublicationSubdomain: "example", Slug: "remote-work-forecasts",
	})
	require.NoError(t, err)
	require.Equal(t, "148123456", res.Substack.PostID)
	require.Equal(t, []IdentityMismatch{{Field: "substack_post_id", Observed: "1", Server: "148123456"}}, res.Mismatches)
}

func TestSubstackNotVerifiable(t *testing.T) {
	tests := []struct {
		name    string
		slug    string
		body    string
		wantErr error
	}{
		{name: "paid audience (recorded)", slug: "paid-deep-dive", wantErr: ErrPaywalled},
		{name: "founding audience", body: `{"id":5,"audience":"founding","body_html":"<p>Preview</p>"}`, wantErr: ErrPaywalled},
		{name: "subscribers only", body: `{"id":5,"audience":"only_free","body_html":"<p>Preview</p>"}`, wantErr: ErrPaywalled},
		{name: "audience missing", body: `{"id":5,"body_html":"<p>Text</p>"}`, wantErr: ErrPaywalled},
		{name: "body cut at paywall", body: `{"id":5,"audience":"everyone","body_html":"<p>Free part</p><div class=\"paywall-jump\" data-component-name=\"PaywallToDOM\"></div>"}`, wantErr: ErrPaywalled},
		{name: "body absent", body: `{"id":5,"audience":"everyone","body_html":null}`, wantErr: ErrNoContent},
		{name: "body blank", body: `{"id":5,"audience":"everyone","body_html":"  "}`, wantErr: ErrNoContent},
		{name: "id missing", body: `{"audience":"everyone","body_html":"<p>x</p>"}`, wantErr: ErrBadResponse},
		{name: "id not a number", body: `{"id":"5","audience":"everyone","body_html":"<p>x</p>"}`, wantErr: ErrBadResponse},
		{name: "unknown post (recorded 404)", slug: "no-such-post", wantErr: ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var handler http.HandlerFunc
			if tc.body != "" {
				handler = func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.body) }
			}
			slug := tc.slug
			if slug == "" {
				slug = "a-post"
			}
			p := newFakePlatform(t, handler)
			_, err := loopbackFetcher(t, p).Substack(context.Background(), SubstackRequest{PostID: "5", PublicationSubdomain: "example", Slug: slug})
			require.ErrorIs(t, err, tc.wantErr)
			require.Len(t, p.recorded(), 1, "not retried")
		})
	}
}

func TestSubstackInvalidRequest(t *testing.T) {
	p := newFakePlatform(t, nil)
	f := loopbackFetcher(t, p)
	tests := []SubstackRequest{
		{PostID: "1", PublicationSubdomain: "", Slug: "s"},
		{PostID: "1", PublicationSubdomain: "evil.example", Slug: "s"},
		{PostID: "1", PublicationSubdomain: "a/b", Slug: "s"},
		{PostID: "1", PublicationSubdomain: "-ex", Slug: "s"},
		{PostID: "1", PublicationSubdomain: "ex@127.0.0.1", Slug: "s"},
		{PostID: "1", PublicationSubdomain: "example", Slug: ""},
		{PostID: "1", PublicationSubdomain: "example", Slug: ".."},
		{PostID: "1", PublicationSubdomain: "example", Slug: "../../admin"},
		{PostID: "1", PublicationSubdomain: "example", Slug: "a?b=c"},
		{PostID: "1", PublicationSubdomain: "example", Slug: "a#b"},
		{PostID: "", PublicationSubdomain: "example", Slug: "s"},
		{PostID: "12x", PublicationSubdomain: "example", Slug: "s"},
	}
	for _, req := range tests {
		_, err := f.Substack(context.Background(), req)
		require.ErrorIs(t, err, ErrInvalidRequest, "%+v", req)
	}
	require.Empty(t, p.recorded())
}

// TestXNotVerifiable: no request is made, even with a client that could not
// reach anything.
func TestXNotVerifiable(t *testing.T) {
	client, err := httpsafe.New()
	require.NoError(t, err)
	f, err := NewFetcher(client, Endpoints{}, nil)
	require.NoError(t, err)
	res, err := f.X(context.Background(), "1234567890")
	require.ErrorIs(t, err, ErrNotVerifiable)
	require.Equal(t, Result{}, res)
}
