package canonical

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// WikipediaRequest is what the client claimed about a Wikipedia version.
type WikipediaRequest struct {
	// Language is the wiki's language code, the subdomain of wikipedia.org.
	Language string
	// PageID is the client's page id; only compared with the server's.
	PageID string
	// RevisionID pins the fetch to the revision the client saw.
	RevisionID string
}

// wikipediaLanguage is deliberately narrower than a hostname label: lower-
// case letters in hyphen-separated groups ("en", "zh-min-nan"), so the
// language can only ever select a wikipedia.org subdomain.
var wikipediaLanguage = regexp.MustCompile(`^[a-z]+(?:-[a-z]+)*$`)

const maxWikipediaLanguageLen = 20

// wikipediaNotFoundCodes are MediaWiki API error codes meaning the revision
// or page does not exist (or is hidden, which for us is the same).
var wikipediaNotFoundCodes = map[string]bool{
	"nosuchrevid": true, "missingtitle": true, "nosuchpageid": true, "permissiondenied": true,
}

type wikipediaResponse struct {
	Parse *struct {
		Title        string  `json:"title"`
		PageID       int64   `json:"pageid"`
		RevID        int64   `json:"revid"`
		Text         *string `json:"text"`
		DisplayTitle string  `json:"displaytitle"`
	} `json:"parse"`
	Error *struct {
		Code string `json:"code"`
		Info string `json:"info"`
	} `json:"error"`
}

// wikipediaParseURL builds the parse API URL for a validated language and
// revision: action=parse pinned with oldid, formatversion=2 so text is a
// plain string.
func (f *Fetcher) wikipediaParseURL(language, revisionID string) (string, error) {
	u, err := url.Parse(strings.ReplaceAll(f.endpoints.WikipediaAPI, "{lang}", language))
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	q := u.Query()
	q.Set("action", "parse")
	q.Set("oldid", revisionID)
	q.Set("prop", "text|revid|displaytitle")
	q.Set("format", "json")
	q.Set("formatversion", "2")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Wikipedia fetches the revision the client saw through the MediaWiki parse
// API. The server's page id, revision id and title are returned; a page id
// different from the client's is an IdentityMismatch (the server's wins). A
// different revision is ErrRevisionMismatch: that content would not
// describe the version the client saw.
func (f *Fetcher) Wikipedia(ctx context.Context, req WikipediaRequest) (Result, error) {
	res, err := f.wikipedia(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("wikipedia canonical fetch of %s revision %s: %w", req.Language, req.RevisionID, err)
	}
	return res, nil
}

func (f *Fetcher) wikipedia(ctx context.Context, req WikipediaRequest) (Result, error) {
	if len(req.Language) > maxWikipediaLanguageLen || !wikipediaLanguage.MatchString(req.Language) {
		return Result{}, fmt.Errorf("%w: language must be lowercase letters and hyphens", ErrInvalidRequest)
	}
	if !isDecimalID(req.RevisionID) {
		return Result{}, fmt.Errorf("%w: revision id must be a positive integer", ErrInvalidRequest)
	}
	if !isDecimalID(req.PageID) {
		return Result{}, fmt.Errorf("%w: page id must be a positive integer", ErrInvalidRequest)
	}
	target, err := f.wikipediaParseURL(req.Language, req.RevisionID)
	if err != nil {
		return Result{}, err
	}
	resp, err := f.do(ctx, events.PlatformWikipedia, httpsafe.Request{
		URL: target, Header: http.Header{"Accept": {"application/json"}},
	})
	if err != nil {
		return Result{}, err
	}
	var decoded wikipediaResponse
	if err := decodeJSON(resp.Body, &decoded); err != nil {
		return Result{}, err
	}
	if decoded.Error != nil {
		kind := ErrBadResponse
		if wikipediaNotFoundCodes[decoded.Error.Code] {
			kind = ErrNotFound
		}
		return Result{}, fmt.Errorf("%w: MediaWiki error %s: %s", kind, quote(decoded.Error.Code), quote(decoded.Error.Info))
	}
	p := decoded.Parse
	if p == nil || p.Text == nil || p.PageID <= 0 || p.RevID <= 0 {
		return Result{}, fmt.Errorf("%w: parse.text, parse.pageid or parse.revid missing", ErrBadResponse)
	}
	serverRevision := strconv.FormatInt(p.RevID, 10)
	if serverRevision != req.RevisionID {
		return Result{}, fmt.Errorf("%w: asked for %s, got %s", ErrRevisionMismatch, req.RevisionID, serverRevision)
	}
	res, err := newResult(events.PlatformWikipedia, target, *p.Text, content.WikipediaHTMLToText)
	if err != nil {
		return Result{}, err
	}
	res.Wikipedia = &WikipediaIdentity{
		Language: req.Language, PageID: strconv.FormatInt(p.PageID, 10), RevisionID: serverRevision,
		Title: p.Title, DisplayTitleHTML: p.DisplayTitle,
	}
	if res.Wikipedia.PageID != req.PageID {
		res.Mismatches = append(res.Mismatches, IdentityMismatch{Field: "page_id", Observed: req.PageID, Server: res.Wikipedia.PageID})
	}
	return res, nil
}
