package ingest

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers/ingest/canonical"
)

// fakeVerifier answers from fixed results and counts calls.
type fakeVerifier struct {
	res   canonical.Result
	err   error
	calls atomic.Int32
}

func (f *fakeVerifier) answer() (canonical.Result, error) { f.calls.Add(1); return f.res, f.err }
func (f *fakeVerifier) LessWrong(context.Context, string) (canonical.Result, error) {
	return f.answer()
}
func (f *fakeVerifier) Wikipedia(context.Context, canonical.WikipediaRequest) (canonical.Result, error) {
	return f.answer()
}
func (f *fakeVerifier) Substack(context.Context, canonical.SubstackRequest) (canonical.Result, error) {
	return f.answer()
}
func (f *fakeVerifier) Bluesky(context.Context, canonical.BlueskyRequest) (canonical.Result, error) {
	return f.answer()
}

func mustParse(t *testing.T, body string) *RegisterInput {
	t.Helper()
	in, err := ParseRegisterInput([]byte(body))
	require.NoError(t, err)
	return in
}

const lwBody = `{"platform":"LESSWRONG","externalId":"abc123","url":"https://www.lesswrong.com/posts/abc123/x",
 "metadata":{"slug":"x","htmlContent":"<p>The moon is made of cheese.</p>","tags":[]}}`

const wikiBody = `{"platform":"WIKIPEDIA","url":"https://en.wikipedia.org/wiki/Moon","observedContentText":"The Moon orbits Earth.",
 "observedImageOccurrences":[{"originalIndex":0,"normalizedTextOffset":22,"sourceUrl":"https://upload.wikimedia.org/m.png"}],
 "metadata":{"language":"en","title":"Moon","pageId":"19331","revisionId":"1000"}}`

func TestVerify(t *testing.T) {
	moon := "The moon is made of cheese."
	tests := []struct {
		name           string
		body           string
		verifier       *fakeVerifier
		wantProvenance string
		wantText       string
		wantExternalID string
		wantAnomalies  []string // kind/field
		wantFetchError string
		wantOccs       int
	}{
		{
			name: "lesswrong verified and matching", body: lwBody,
			verifier:       &fakeVerifier{res: canonical.Result{Text: moon, HTML: "<p>The moon is made of cheese.</p>"}},
			wantProvenance: events.ProvenanceServerVerified, wantText: moon, wantExternalID: "abc123",
		},
		{
			name: "lesswrong content differs: server version wins, anomaly recorded", body: lwBody,
			verifier:       &fakeVerifier{res: canonical.Result{Text: "The moon is made of rock.", HTML: "<p>The moon is made of rock.</p>"}},
			wantProvenance: events.ProvenanceServerVerified, wantText: "The moon is made of rock.", wantExternalID: "abc123",
			wantAnomalies: []string{"CONTENT_MISMATCH/content_hash"},
		},
		{
			name: "platform unreachable: client fallback with the reason", body: lwBody,
			verifier:       &fakeVerifier{err: errors.New("lesswrong: 503 Service Unavailable")},
			wantProvenance: events.ProvenanceClientFallback, wantText: moon, wantExternalID: "abc123",
			wantFetchError: "lesswrong: 503 Service Unavailable",
		},
		{
			name: "empty canonical text is not a verification", body: lwBody,
			verifier:       &fakeVerifier{res: canonical.Result{Text: ""}},
			wantProvenance: events.ProvenanceClientFallback, wantText: moon, wantExternalID: "abc123",
			wantFetchError: "the platform's canonical content normalizes to empty text",
		},
		{
			// The stores refuse NUL: the platform's HTML is not registered.
			name: "canonical HTML with NUL is not a verification", body: lwBody,
			verifier:       &fakeVerifier{res: canonical.Result{Text: moon, HTML: "<p>The moon is made of cheese.\x00</p>"}},
			wantProvenance: events.ProvenanceClientFallback, wantText: moon, wantExternalID: "abc123",
			wantFetchError: "the platform's canonical content contains NUL (U+0000)",
		},
		{
			name: "wikipedia page id corrected by the server", body: wikiBody,
			verifier: &fakeVerifier{res: canonical.Result{
				Text: "The Moon orbits Earth.", HTML: "<p>The Moon orbits Earth.</p>",
				Wikipedia:  &canonical.WikipediaIdentity{Language: "en", PageID: "19332", RevisionID: "1000", Title: "Moon"},
				Mismatches: []canonical.IdentityMismatch{{Field: "page_id", Observed: "19331", Server: "19332"}},
			}},
			wantProvenance: events.ProvenanceServerVerified, wantText: "The Moon orbits Earth.", wantExternalID: "en:19332",
			wantAnomalies: []string{"IDENTITY_MISMATCH/page_id"}, wantOccs: 1,
		},
		{
			name: "image positions invalid on the canonical text are dropped", body: wikiBody,
			verifier: &fakeVerifier{res: canonical.Result{
				Text: "Moon.", Wikipedia: &canonical.WikipediaIdentity{Language: "en", PageID: "19331", RevisionID: "1000"},
			}},
			wantProvenance: events.ProvenanceServerVerified, wantText: "Moon.", wantExternalID: "en:19331",
			wantAnomalies: []string{"CONTENT_MISMATCH/content_hash", "CONTENT_MISMATCH/image_occurrences"}, wantOccs: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewService(nil, WithVerifier(tc.verifier, time.Second))
			in := mustParse(t, tc.body)
			p, err := BuildRegistration(in)
			require.NoError(t, err)
			anomalies, err := s.verify(context.Background(), in, p)
			require.NoError(t, err)
			require.NoError(t, p.Validate())
			require.Equal(t, tc.wantProvenance, p.Provenance)
			require.Equal(t, tc.wantText, p.ContentText)
			require.Equal(t, tc.wantExternalID, p.ExternalID)
			require.Equal(t, tc.wantFetchError, p.ServerFetchError)
			require.Len(t, p.ImageOccurrences, tc.wantOccs)
			require.Equal(t, events.PostID(p.Platform, p.ExternalID), p.PostID)
			id, err := content.ComputeVersionIdentity(p.ContentText, toContentOccurrences(p.ImageOccurrences))
			require.NoError(t, err)
			require.Equal(t, id.VersionHash, p.VersionHash, "the registered version is the canonical text's")
			var got []string
			for _, a := range anomalies {
				require.NoError(t, a.Validate())
				require.Equal(t, p.PostVersionID, a.PostVersionID)
				got = append(got, a.Kind+"/"+a.Field)
			}
			require.Equal(t, tc.wantAnomalies, got)
		})
	}
}

// TestVerifyRecordsOnlyStorableValues: what a platform or a fetch error
// says is recorded for diagnosis, so it must be storable whatever it is:
// no NUL, valid UTF-8, cut on a character boundary.
func TestVerifyRecordsOnlyStorableValues(t *testing.T) {
	long := strings.Repeat("\u20ac", 200) // 600 bytes
	v := &fakeVerifier{res: canonical.Result{
		Text: "The Moon orbits Earth.", HTML: "<p>The Moon orbits Earth.</p>",
		Wikipedia: &canonical.WikipediaIdentity{Language: "en", PageID: "19331", RevisionID: "1000", Title: "Moon"},
		Mismatches: []canonical.IdentityMismatch{
			{Field: "title", Observed: "Moon", Server: "Mo\x00on\xff"},
			{Field: "display_title", Observed: "Moon", Server: long},
		},
	}}
	s := NewService(nil, WithVerifier(v, time.Second))
	in := mustParse(t, wikiBody)
	p, err := BuildRegistration(in)
	require.NoError(t, err)
	anomalies, err := s.verify(context.Background(), in, p)
	require.NoError(t, err)
	require.Len(t, anomalies, 2)
	require.Equal(t, "Mo\uFFFDon\uFFFD", anomalies[0].ServerValue)
	require.Equal(t, strings.Repeat("\u20ac", 166), anomalies[1].ServerValue, "cut to 500 bytes on a character boundary")

	v = &fakeVerifier{err: errors.New("lesswrong: bad title \"a\x00b\xed\xa0\x80\"")}
	s = NewService(nil, WithVerifier(v, time.Second))
	in = mustParse(t, lwBody)
	p, err = BuildRegistration(in)
	require.NoError(t, err)
	_, err = s.verify(context.Background(), in, p)
	require.NoError(t, err)
	require.Equal(t, "lesswrong: bad title \"a\uFFFDb\uFFFD\"", p.ServerFetchError)
}

func TestVerifyXIsNeverFetched(t *testing.T) {
	v := &fakeVerifier{}
	s := NewService(nil, WithVerifier(v, time.Second))
	in := mustParse(t, `{"platform":"X","externalId":"1","url":"https://x.com/a/status/1","observedContentText":"hi",
		"metadata":{"authorHandle":"a","text":"hi","mediaUrls":[]}}`)
	p, err := BuildRegistration(in)
	require.NoError(t, err)
	anomalies, err := s.verify(context.Background(), in, p)
	require.NoError(t, err)
	require.Empty(t, anomalies)
	require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
	require.Equal(t, "X posts cannot be verified server-side", p.ServerFetchError)
	require.Zero(t, v.calls.Load())
}

func TestVerifyWithoutVerifierSaysSo(t *testing.T) {
	s := NewService(nil)
	in := mustParse(t, lwBody)
	p, err := BuildRegistration(in)
	require.NoError(t, err)
	_, err = s.verify(context.Background(), in, p)
	require.NoError(t, err)
	require.Equal(t, events.ProvenanceClientFallback, p.Provenance)
	require.Contains(t, p.ServerFetchError, "disabled")
}

func TestVerifyCallerGoneIsAnError(t *testing.T) {
	v := &fakeVerifier{err: context.Canceled}
	s := NewService(nil, WithVerifier(v, time.Second))
	in := mustParse(t, lwBody)
	p, err := BuildRegistration(in)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.verify(ctx, in, p)
	require.ErrorIs(t, err, context.Canceled)
}

func TestVerifyCache(t *testing.T) {
	v := &fakeVerifier{res: canonical.Result{Text: "x"}}
	c := newVerifyCache(v)
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	ctx := context.Background()

	for i := 0; i < 3; i++ {
		_, err := c.LessWrong(ctx, "a")
		require.NoError(t, err)
	}
	require.EqualValues(t, 1, v.calls.Load(), "answers are reused")
	_, _ = c.LessWrong(ctx, "b")
	require.EqualValues(t, 2, v.calls.Load(), "per post")
	now = now.Add(cacheTTLMutable + time.Second)
	_, _ = c.LessWrong(ctx, "a")
	require.EqualValues(t, 3, v.calls.Load(), "expired after the mutable TTL")

	req := canonical.WikipediaRequest{Language: "en", PageID: "1", RevisionID: "2"}
	_, _ = c.Wikipedia(ctx, req)
	now = now.Add(time.Hour)
	_, _ = c.Wikipedia(ctx, req)
	require.EqualValues(t, 4, v.calls.Load(), "a pinned revision is kept longer")

	v.err = errors.New("down")
	_, err := c.Substack(ctx, canonical.SubstackRequest{PostID: "1", PublicationSubdomain: "p", Slug: "s"})
	require.Error(t, err)
	_, err = c.Substack(ctx, canonical.SubstackRequest{PostID: "1", PublicationSubdomain: "p", Slug: "s"})
	require.Error(t, err)
	require.EqualValues(t, 5, v.calls.Load(), "failures are remembered briefly")
	now = now.Add(cacheTTLFailure + time.Second)
	_, _ = c.Substack(ctx, canonical.SubstackRequest{PostID: "1", PublicationSubdomain: "p", Slug: "s"})
	require.EqualValues(t, 6, v.calls.Load())
}
