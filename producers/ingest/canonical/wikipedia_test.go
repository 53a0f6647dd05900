package canonical

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// TestWikipediaRecorded: the real parse API HTML of two articles, served in
// the API's envelope, yields exactly the reference text and hash, and the
// request is pinned to the observed revision.
func TestWikipediaRecorded(t *testing.T) {
	for _, g := range loadGolden(t) {
		if g.Platform != "WIKIPEDIA" {
			continue
		}
		t.Run(g.Fixture, func(t *testing.T) {
			page := loadPage(t, g.Fixture)
			p := newFakePlatform(t, nil)
			f := loopbackFetcher(t, p)

			res, err := f.Wikipedia(context.Background(), WikipediaRequest{Language: page.Language, PageID: g.PageID, RevisionID: g.RevisionID})
			require.NoError(t, err)
			requireSameText(t, string(readShared(t, g.NormalizedTextFile)), res.Text, "canonical text")
			require.Equal(t, g.ContentHash, res.ContentHash)
			require.Equal(t, g.WordCount, content.WordCount(res.Text))
			require.Equal(t, page.ParseAPIHTML, res.HTML)
			require.Equal(t, events.PlatformWikipedia, res.Platform)
			require.NotNil(t, res.Wikipedia)
			require.Equal(t, page.Language, res.Wikipedia.Language)
			require.Equal(t, g.PageID, res.Wikipedia.PageID)
			require.Equal(t, g.RevisionID, res.Wikipedia.RevisionID)
			require.Equal(t, g.ExternalID, res.Wikipedia.ExternalID())
			wantTitle := strings.ReplaceAll(strings.TrimPrefix(page.SourceURL, "https://en.wikipedia.org/wiki/"), "_", " ")
			require.Equal(t, wantTitle, res.Wikipedia.Title)
			require.Equal(t, `<span class="mw-page-title-main">`+wantTitle+`</span>`, res.Wikipedia.DisplayTitleHTML)
			require.Empty(t, res.Mismatches)

			reqs := p.recorded()
			require.Len(t, reqs, 1)
			require.Equal(t, http.MethodGet, reqs[0].Method)
			require.Equal(t, "/wikipedia/"+page.Language+"/w/api.php", reqs[0].Path)
			require.Equal(t, map[string][]string{
				"action": {"parse"}, "oldid": {g.RevisionID}, "prop": {"text|revid|displaytitle"},
				"format": {"json"}, "formatversion": {"2"},
			}, reqs[0].Query)
			require.Equal(t, res.SourceURL, p.URL+reqs[0].Path+"?action=parse&format=json&formatversion=2&oldid="+g.RevisionID+"&prop=text%7Crevid%7Cdisplaytitle")
		})
	}
}

// TestWikipediaPageIDMismatch: the revision decides the page; the server's
// page id wins and the disagreement is surfaced for an anomaly.
func TestWikipediaPageIDMismatch(t *testing.T) {
	p := newFakePlatform(t, nil)
	res, err := loopbackFetcher(t, p).Wikipedia(context.Background(), WikipediaRequest{Language: "en", PageID: "999", RevisionID: "1339833339"})
	require.NoError(t, err)
	require.Equal(t, "736", res.Wikipedia.PageID)
	require.Equal(t, "en:736", res.Wikipedia.ExternalID())
	require.Equal(t, []IdentityMismatch{{Field: "page_id", Observed: "999", Server: "736"}}, res.Mismatches)
}

func TestWikipediaResponses(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr error
	}{
		{"other revision served", `{"parse":{"title":"T","pageid":1,"revid":43,"text":"<p>x</p>"}}`, ErrRevisionMismatch},
		{"no such revision", `{"error":{"code":"nosuchrevid","info":"There is no revision with ID 42."}}`, ErrNotFound},
		{"hidden revision", `{"error":{"code":"permissiondenied","info":"You don't have permission to view deleted text."}}`, ErrNotFound},
		{"other API error", `{"error":{"code":"internal_api_error_DBQueryError","info":"A database query error has occurred."}}`, ErrBadResponse},
		{"formatversion 1 shape", `{"parse":{"title":"T","pageid":1,"revid":42,"text":{"*":"<p>x</p>"}}}`, ErrBadResponse},
		{"text missing", `{"parse":{"title":"T","pageid":1,"revid":42}}`, ErrBadResponse},
		{"page id missing", `{"parse":{"title":"T","revid":42,"text":"<p>x</p>"}}`, ErrBadResponse},
		{"empty article", `{"parse":{"title":"T","pageid":1,"revid":42,"text":"<div class=\"mw-parser-output\"></div>"}}`, ErrNoContent},
		{"not JSON", `<!DOCTYPE html><title>Wikimedia Error</title>`, ErrBadResponse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, tc.body) })
			_, err := loopbackFetcher(t, p).Wikipedia(context.Background(), WikipediaRequest{Language: "en", PageID: "1", RevisionID: "42"})
			require.ErrorIs(t, err, tc.wantErr)
			require.Len(t, p.recorded(), 1)
		})
	}
}

// TestWikipediaInvalidRequest: fields that could steer the URL elsewhere are
// refused before any request.
func TestWikipediaInvalidRequest(t *testing.T) {
	p := newFakePlatform(t, nil)
	f := loopbackFetcher(t, p)
	tests := []WikipediaRequest{
		{Language: "", PageID: "1", RevisionID: "2"},
		{Language: "EN", PageID: "1", RevisionID: "2"},
		{Language: "en.evil.example", PageID: "1", RevisionID: "2"},
		{Language: "evil.example/", PageID: "1", RevisionID: "2"},
		{Language: "en@evil", PageID: "1", RevisionID: "2"},
		{Language: "en:8080", PageID: "1", RevisionID: "2"},
		{Language: "en_gb", PageID: "1", RevisionID: "2"},
		{Language: "-en", PageID: "1", RevisionID: "2"},
		{Language: "en--x", PageID: "1", RevisionID: "2"},
		{Language: "1en", PageID: "1", RevisionID: "2"},
		{Language: strings.Repeat("a", 21), PageID: "1", RevisionID: "2"},
		{Language: "en", PageID: "1", RevisionID: ""},
		{Language: "en", PageID: "1", RevisionID: "0"},
		{Language: "en", PageID: "1", RevisionID: "012"},
		{Language: "en", PageID: "1", RevisionID: "12&action=edit"},
		{Language: "en", PageID: "1", RevisionID: "99999999999999999999"},
		{Language: "en", PageID: "x", RevisionID: "2"},
	}
	for _, req := range tests {
		_, err := f.Wikipedia(context.Background(), req)
		require.ErrorIs(t, err, ErrInvalidRequest, "%+v", req)
	}
	require.Empty(t, p.recorded())

	for _, lang := range []string{"en", "de", "simple", "zh-min-nan", "be-tarask"} {
		_, err := f.Wikipedia(context.Background(), WikipediaRequest{Language: lang, PageID: "1", RevisionID: "2"})
		require.ErrorIs(t, err, ErrNotFound, lang)
	}
}
