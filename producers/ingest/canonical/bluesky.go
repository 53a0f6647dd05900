package canonical

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// BlueskyRequest is what the client claimed about a Bluesky post.
type BlueskyRequest struct {
	// DID and RKey are the parts of the post's AT URI (the externalId).
	DID  string
	RKey string
	// Handle is the author's handle as the client saw it (normalized);
	// compared with the AppView's.
	Handle string
}

// BlueskyIdentity is what the AppView reports for a post.
type BlueskyIdentity struct {
	URI    string
	DID    string
	RKey   string
	CID    string
	Handle string
	// DisplayName is "" when the account has none.
	DisplayName string
	// CreatedAt is the record's createdAt; nil when absent or unparsable.
	CreatedAt *time.Time
}

// Lexicon bounds of app.bsky.feed.post and app.bsky.actor.profile (in
// UTF-8 bytes). An answer beyond them is not a post the AppView would
// index: it is refused rather than stored.
const (
	blueskyMaxTextBytes        = 3000
	blueskyMaxDisplayNameBytes = 640
)

const (
	blueskyThreadViewPost = "app.bsky.feed.defs#threadViewPost"
	blueskyNotFoundPost   = "app.bsky.feed.defs#notFoundPost"
	blueskyBlockedPost    = "app.bsky.feed.defs#blockedPost"
	blueskyPostRecordType = "app.bsky.feed.post"
)

// blueskyCID: a CIDv1 in base32 (multibase prefix "b"), as the AppView
// serializes record CIDs.
var blueskyCID = regexp.MustCompile(`^b[a-z2-7]{10,200}$`)

type blueskyThreadResponse struct {
	Thread *struct {
		Type     string           `json:"$type"`
		Post     *blueskyPostView `json:"post"`
		NotFound bool             `json:"notFound"`
		Blocked  bool             `json:"blocked"`
	} `json:"thread"`
}

type blueskyPostView struct {
	URI    string `json:"uri"`
	CID    string `json:"cid"`
	Author struct {
		DID         string  `json:"did"`
		Handle      string  `json:"handle"`
		DisplayName *string `json:"displayName"`
	} `json:"author"`
	Record *struct {
		Type      string  `json:"$type"`
		Text      *string `json:"text"`
		CreatedAt string  `json:"createdAt"`
	} `json:"record"`
}

// blueskyThreadURL builds the getPostThread request for a validated URI:
// only the post itself (depth 0, no parents).
func (f *Fetcher) blueskyThreadURL(uri string) (string, error) {
	u, err := url.Parse(f.endpoints.BlueskyThread)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	q := u.Query()
	q.Set("uri", uri)
	q.Set("depth", "0")
	q.Set("parentHeight", "0")
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Bluesky reads a post from the public AppView (app.bsky.feed.getPostThread).
// Its canonical text is the record's text, normalized like any observed
// text; a Bluesky post has no HTML. A handle other than the client's is an
// IdentityMismatch (the AppView's wins: handles move, the DID stays). An
// answer about another record, or one outside the lexicon's bounds, is
// ErrBadResponse; a post the AppView does not serve is ErrNotFound, one it
// withholds ErrPaywalled, one without text (images only) ErrNoContent.
func (f *Fetcher) Bluesky(ctx context.Context, req BlueskyRequest) (Result, error) {
	res, err := f.bluesky(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("bluesky canonical fetch of %s: %w", content.BlueskyPostURI(req.DID, req.RKey), err)
	}
	return res, nil
}

func (f *Fetcher) bluesky(ctx context.Context, req BlueskyRequest) (Result, error) {
	if !content.ValidBlueskyDID(req.DID) {
		return Result{}, fmt.Errorf("%w: the DID must be a lowercase did:plc or did:web", ErrInvalidRequest)
	}
	if !content.ValidBlueskyRKey(req.RKey) {
		return Result{}, fmt.Errorf("%w: the record key must be a TID", ErrInvalidRequest)
	}
	uri := content.BlueskyPostURI(req.DID, req.RKey)
	target, err := f.blueskyThreadURL(uri)
	if err != nil {
		return Result{}, err
	}
	resp, err := f.do(ctx, events.PlatformBluesky, httpsafe.Request{
		URL: target, Header: http.Header{"Accept": {"application/json"}},
	})
	if err != nil {
		return Result{}, blueskyStatusError(err)
	}
	var decoded blueskyThreadResponse
	if err := decodeJSON(resp.Body, &decoded); err != nil {
		return Result{}, err
	}
	th := decoded.Thread
	switch {
	case th == nil:
		return Result{}, fmt.Errorf("%w: thread is absent", ErrBadResponse)
	case th.Type == blueskyNotFoundPost || th.NotFound:
		return Result{}, fmt.Errorf("%w: the AppView answered %s", ErrNotFound, blueskyNotFoundPost)
	case th.Type == blueskyBlockedPost || th.Blocked:
		return Result{}, fmt.Errorf("%w: the AppView answered %s", ErrPaywalled, blueskyBlockedPost)
	case th.Type != blueskyThreadViewPost:
		return Result{}, fmt.Errorf("%w: thread type %s", ErrBadResponse, quote(th.Type))
	case th.Post == nil || th.Post.Record == nil:
		return Result{}, fmt.Errorf("%w: thread.post.record is absent", ErrBadResponse)
	}
	post := th.Post
	switch {
	case post.URI != uri:
		return Result{}, fmt.Errorf("%w: asked for %s, the AppView answered about %s", ErrBadResponse, uri, quote(post.URI))
	case post.Author.DID != req.DID:
		return Result{}, fmt.Errorf("%w: author DID %s is not the URI's", ErrBadResponse, quote(post.Author.DID))
	case post.Record.Type != blueskyPostRecordType:
		return Result{}, fmt.Errorf("%w: record type %s", ErrBadResponse, quote(post.Record.Type))
	case post.Record.Text == nil:
		return Result{}, fmt.Errorf("%w: record.text is absent", ErrBadResponse)
	case len(*post.Record.Text) > blueskyMaxTextBytes:
		return Result{}, fmt.Errorf("%w: record.text has %d bytes, more than the lexicon's %d", ErrBadResponse, len(*post.Record.Text), blueskyMaxTextBytes)
	case !blueskyCID.MatchString(post.CID):
		return Result{}, fmt.Errorf("%w: cid %s is not a base32 CID", ErrBadResponse, quote(post.CID))
	}
	handle, err := content.NormalizeBlueskyHandle(post.Author.Handle)
	if err != nil || handle != post.Author.Handle {
		return Result{}, fmt.Errorf("%w: author handle %s is not a handle", ErrBadResponse, quote(post.Author.Handle))
	}
	id := &BlueskyIdentity{URI: uri, DID: req.DID, RKey: req.RKey, CID: post.CID, Handle: handle}
	if dn := post.Author.DisplayName; dn != nil {
		if len(*dn) > blueskyMaxDisplayNameBytes || strings.IndexByte(*dn, 0) >= 0 {
			return Result{}, fmt.Errorf("%w: author displayName is outside the lexicon", ErrBadResponse)
		}
		id.DisplayName = strings.TrimSpace(*dn)
	}
	if t, err := time.Parse(time.RFC3339Nano, post.Record.CreatedAt); err == nil {
		t = t.UTC()
		id.CreatedAt = &t
	}
	text := content.Normalize(*post.Record.Text)
	if text == "" {
		return Result{}, fmt.Errorf("%w: the post has no text", ErrNoContent)
	}
	res := Result{
		Platform: events.PlatformBluesky, SourceURL: target, Text: text, ContentHash: content.ContentHash(text),
		Bluesky: id,
	}
	if req.Handle != handle {
		res.Mismatches = append(res.Mismatches, IdentityMismatch{Field: "handle", Observed: req.Handle, Server: handle})
	}
	return res, nil
}

// blueskyStatusError reads the XRPC error of a failed request: getPostThread
// answers 400 {"error":"NotFound"} for a post it does not serve (deleted,
// taken down, never existed).
func blueskyStatusError(err error) error {
	var serr *StatusError
	if !errors.As(err, &serr) || serr.StatusCode != http.StatusBadRequest {
		return err
	}
	var xrpc struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(serr.Body, &xrpc) == nil && xrpc.Error == "NotFound" {
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	return err
}
