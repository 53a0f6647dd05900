package canonical

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// SubstackRequest is what the client claimed about a Substack post.
type SubstackRequest struct {
	// PostID is the numeric post id (the externalId); compared with the
	// server's.
	PostID string
	// PublicationSubdomain is the *.substack.com subdomain, even for posts
	// read on a custom domain.
	PublicationSubdomain string
	// Slug is the post's URL slug (/p/{slug}).
	Slug string
}

var (
	// substackSubdomain is one DNS label, so it can only select a
	// substack.com subdomain.
	substackSubdomain = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)
	// substackSlug is one path segment of URL-safe characters.
	substackSlug = regexp.MustCompile(`^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,299}$`)
)

// substackPublicAudience is the only audience whose body the API returns
// whole to an anonymous reader; "only_paid", "founding" and "only_free"
// (subscribers only) are gated.
const substackPublicAudience = "everyone"

// substackPaywallMarkers appear in a body the API cut at the paywall.
var substackPaywallMarkers = []string{`data-component-name="paywall`, `class="paywall`}

type substackPost struct {
	ID           *int64  `json:"id"`
	Slug         string  `json:"slug"`
	Title        string  `json:"title"`
	Subtitle     *string `json:"subtitle"`
	PostDate     *string `json:"post_date"`
	Audience     string  `json:"audience"`
	CanonicalURL string  `json:"canonical_url"`
	BodyHTML     *string `json:"body_html"`
}

// substackPostURL builds the post API URL for a validated subdomain and slug.
func (f *Fetcher) substackPostURL(subdomain, slug string) (string, error) {
	raw := strings.NewReplacer("{publication}", subdomain, "{slug}", url.PathEscape(slug)).Replace(f.endpoints.SubstackPost)
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	return u.String(), nil
}

// Substack fetches a public post from the publication's post API. A post
// that is not fully public is ErrPaywalled: its body cannot be verified and
// the caller falls back to the client's copy. A post id different from the
// client's is an IdentityMismatch (the server's wins).
func (f *Fetcher) Substack(ctx context.Context, req SubstackRequest) (Result, error) {
	res, err := f.substack(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("substack canonical fetch of %s/%s: %w", req.PublicationSubdomain, req.Slug, err)
	}
	return res, nil
}

func (f *Fetcher) substack(ctx context.Context, req SubstackRequest) (Result, error) {
	subdomain := strings.ToLower(req.PublicationSubdomain)
	if !substackSubdomain.MatchString(subdomain) {
		return Result{}, fmt.Errorf("%w: publication subdomain must be one DNS label", ErrInvalidRequest)
	}
	if !substackSlug.MatchString(req.Slug) {
		return Result{}, fmt.Errorf("%w: slug must be one URL path segment", ErrInvalidRequest)
	}
	if !isDecimalID(req.PostID) {
		return Result{}, fmt.Errorf("%w: post id must be a positive integer", ErrInvalidRequest)
	}
	target, err := f.substackPostURL(subdomain, req.Slug)
	if err != nil {
		return Result{}, err
	}
	resp, err := f.do(ctx, events.PlatformSubstack, httpsafe.Request{
		URL: target, Header: http.Header{"Accept": {"application/json"}},
	})
	if err != nil {
		return Result{}, err
	}
	var post substackPost
	if err := decodeJSON(resp.Body, &post); err != nil {
		return Result{}, err
	}
	if post.ID == nil || *post.ID <= 0 {
		return Result{}, fmt.Errorf("%w: post id missing", ErrBadResponse)
	}
	if post.Audience != substackPublicAudience {
		return Result{}, fmt.Errorf("%w: audience %s", ErrPaywalled, quote(post.Audience))
	}
	if post.BodyHTML == nil || strings.TrimSpace(*post.BodyHTML) == "" {
		return Result{}, fmt.Errorf("%w: body_html is absent", ErrNoContent)
	}
	if hasPaywallMarker(*post.BodyHTML) {
		return Result{}, fmt.Errorf("%w: body is cut at a paywall", ErrPaywalled)
	}
	res, err := newResult(events.PlatformSubstack, target, *post.BodyHTML, content.SubstackHTMLToText)
	if err != nil {
		return Result{}, err
	}
	id := &SubstackIdentity{
		PostID: strconv.FormatInt(*post.ID, 10), Slug: post.Slug, Title: strings.TrimSpace(post.Title),
		Audience: post.Audience, CanonicalURL: post.CanonicalURL,
	}
	if post.Subtitle != nil {
		id.Subtitle = strings.TrimSpace(*post.Subtitle)
	}
	if post.PostDate != nil {
		if t, err := time.Parse(time.RFC3339Nano, *post.PostDate); err == nil {
			t = t.UTC()
			id.PostDate = &t
		}
	}
	res.Substack = id
	if id.PostID != req.PostID {
		res.Mismatches = append(res.Mismatches, IdentityMismatch{Field: "substack_post_id", Observed: req.PostID, Server: id.PostID})
	}
	return res, nil
}

func hasPaywallMarker(html string) bool {
	lower := strings.ToLower(html)
	for _, m := range substackPaywallMarkers {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}
