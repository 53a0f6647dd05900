package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers/ingest/canonical"
)

// Verifier fetches a post's canonical content from its platform
// (canonical.Fetcher in production).
type Verifier interface {
	LessWrong(ctx context.Context, postID string) (canonical.Result, error)
	Wikipedia(ctx context.Context, req canonical.WikipediaRequest) (canonical.Result, error)
	Substack(ctx context.Context, req canonical.SubstackRequest) (canonical.Result, error)
	Bluesky(ctx context.Context, req canonical.BlueskyRequest) (canonical.Result, error)
}

// Option configures a Service.
type Option func(*Service)

// WithVerifier makes registrations verify content against the platform.
// Without it every registration is CLIENT_FALLBACK (for deployments that
// cannot reach the platforms).
func WithVerifier(v Verifier, timeout time.Duration) Option {
	return func(s *Service) {
		s.verifier = newVerifyCache(v)
		s.verifyTimeout = timeout
	}
}

// errXNotVerifiable explains X posts' provenance: X offers no public API the
// server could check a tweet against.
var errXNotVerifiable = errors.New("X posts cannot be verified server-side") //nolint:staticcheck // ST1005: X is a name; the text is recorded in events and pinned by golden files

// errThreadsNotVerifiable explains Threads posts' provenance: Threads has
// no public API a server can read a post from without an account, so
// Threads versions are always CLIENT_FALLBACK.
var errThreadsNotVerifiable = fmt.Errorf("Threads has no public API to read a post from: %w", canonical.ErrNotVerifiable) //nolint:staticcheck // ST1005: Threads is a name; the text is recorded in events and pinned by golden files

// verify replaces the client-derived registration p with the platform's
// canonical version when the platform answers, and returns the integrity
// anomalies between the two. When verification fails p stays
// CLIENT_FALLBACK with the reason recorded.
func (s *Service) verify(ctx context.Context, in *RegisterInput, p *events.PostVersionRegisteredV1) ([]*events.PostIntegrityAnomalyRecordedV1, error) {
	if in.x != nil {
		p.ServerFetchError = errXNotVerifiable.Error()
		return nil, nil
	}
	if in.threads != nil {
		p.ServerFetchError = errThreadsNotVerifiable.Error()
		return nil, nil
	}
	if s.verifier == nil {
		p.ServerFetchError = "server verification is disabled on this instance"
		return nil, nil
	}
	vctx, cancel := context.WithTimeout(ctx, s.verifyTimeout)
	defer cancel()
	var res canonical.Result
	var err error
	switch {
	case in.lesswrong != nil:
		res, err = s.verifier.LessWrong(vctx, p.ExternalID)
	case in.wikipedia != nil:
		res, err = s.verifier.Wikipedia(vctx, canonical.WikipediaRequest{
			Language: in.wikipedia.Language, PageID: in.wikipedia.PageID, RevisionID: in.wikipedia.RevisionID,
		})
	case in.substack != nil:
		res, err = s.verifier.Substack(vctx, canonical.SubstackRequest{
			PostID: p.ExternalID, PublicationSubdomain: in.substack.PublicationSubdomain, Slug: in.substack.Slug,
		})
	case in.bluesky != nil:
		res, err = s.verifier.Bluesky(vctx, canonical.BlueskyRequest{
			DID: p.Bluesky.DID, RKey: p.Bluesky.RKey, Handle: p.Bluesky.Handle,
		})
	}
	if err == nil && res.Text == "" {
		err = errors.New("the platform's canonical content normalizes to empty text")
	}
	if err == nil && (strings.IndexByte(res.HTML, 0) >= 0 || strings.IndexByte(res.Text, 0) >= 0) {
		// The stores refuse NUL: such content is not registered as canonical.
		err = errors.New("the platform's canonical content contains NUL (U+0000)")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the caller gave up; do not record a verdict
		}
		p.ServerFetchError = storable(err.Error(), 500)
		return nil, nil
	}

	observed := *p
	// The client's image positions were measured on the client's text; they
	// carry over only if they are valid on the canonical text.
	occs, occErr := content.CanonicalizeOccurrences(toContentOccurrences(p.ImageOccurrences), res.Text)
	if occErr != nil {
		occs = nil
	}
	id, err := content.ComputeVersionIdentity(res.Text, occs)
	if err != nil {
		return nil, fmt.Errorf("canonical identity: %w", err)
	}
	if res.Wikipedia != nil {
		// Identity binding: the server's page id wins.
		p.ExternalID = res.Wikipedia.ExternalID()
		p.Wikipedia.PageID = res.Wikipedia.PageID
		p.Wikipedia.RevisionID = res.Wikipedia.RevisionID
	}
	if b := res.Bluesky; b != nil && p.Bluesky != nil {
		// The AppView's account identity and record; the DID and record
		// key were the question, so they cannot differ.
		m := *p.Bluesky
		m.Handle, m.DisplayName, m.CID = b.Handle, b.DisplayName, b.CID
		if b.CreatedAt != nil {
			m.CreatedAt = b.CreatedAt
		}
		p.Bluesky = &m
		p.Author = &events.AuthorV1{PlatformUserID: m.DID, DisplayName: blueskyAuthorName(&m)}
	}
	p.PostID = events.PostID(p.Platform, p.ExternalID)
	p.PostVersionID = events.PostVersionID(p.PostID, id.VersionHash)
	p.ContentText = res.Text
	p.WordCount = content.WordCount(res.Text)
	p.ContentHash, p.OccurrencesHash, p.VersionHash = id.ContentHash, id.OccurrencesHash, id.VersionHash
	p.ImageOccurrences = fromContentOccurrences(occs)
	p.Provenance = events.ProvenanceServerVerified
	p.ServerFetchError = ""
	p.ServerHTML = res.HTML

	anomaly := func(kind, field, observedValue, serverValue string) *events.PostIntegrityAnomalyRecordedV1 {
		return &events.PostIntegrityAnomalyRecordedV1{
			PostID: p.PostID, PostVersionID: p.PostVersionID, Platform: p.Platform, ExternalID: p.ExternalID,
			Kind: kind, Field: field, ObservedValue: storable(observedValue, 500), ServerValue: storable(serverValue, 500),
		}
	}
	var out []*events.PostIntegrityAnomalyRecordedV1
	for _, m := range res.Mismatches {
		out = append(out, anomaly(events.AnomalyIdentityMismatch, m.Field, m.Observed, m.Server))
	}
	if observed.ContentHash != p.ContentHash {
		out = append(out, anomaly(events.AnomalyContentMismatch, "content_hash", observed.ContentHash, p.ContentHash))
	}
	if occErr != nil && len(observed.ImageOccurrences) > 0 {
		out = append(out, anomaly(events.AnomalyContentMismatch, "image_occurrences", observed.OccurrencesHash, p.OccurrencesHash))
	}
	return out, nil
}

// storable makes a value recorded for diagnosis (a fetch error, a
// platform's identity field) safe to store: NUL and invalid UTF-8 become
// U+FFFD, and it is cut to at most n bytes on a character boundary.
func storable(s string, n int) string {
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func toContentOccurrences(in []events.ImageOccurrenceV1) []content.ImageOccurrence {
	out := make([]content.ImageOccurrence, len(in))
	for i, o := range in {
		out[i] = content.ImageOccurrence{OriginalIndex: o.OriginalIndex, NormalizedTextOffset: o.NormalizedTextOffset, SourceURL: o.SourceURL}
		if o.CaptionText != "" {
			caption := o.CaptionText
			out[i].CaptionText = &caption
		}
	}
	return out
}

func fromContentOccurrences(in []content.ImageOccurrence) []events.ImageOccurrenceV1 {
	out := make([]events.ImageOccurrenceV1, len(in))
	for i, o := range in {
		out[i] = events.ImageOccurrenceV1{OriginalIndex: o.OriginalIndex, NormalizedTextOffset: o.NormalizedTextOffset, SourceURL: o.SourceURL}
		if o.CaptionText != nil {
			out[i].CaptionText = *o.CaptionText
		}
	}
	return out
}

// verifyCache keeps recent platform answers so that every view of a popular
// post does not refetch it: a pinned Wikipedia revision never changes; other
// platforms are trusted for a short while. Failures are remembered briefly
// so an outage does not add retries to every request.
type verifyCache struct {
	next    Verifier
	mu      sync.Mutex
	entries map[string]cacheEntry
	now     func() time.Time
}

type cacheEntry struct {
	res     canonical.Result
	err     error
	expires time.Time
}

const (
	cacheMaxEntries   = 2048
	cacheTTLRevision  = 24 * time.Hour
	cacheTTLMutable   = 2 * time.Minute
	cacheTTLFailure   = 30 * time.Second
	cacheKeySeparator = "\x00"
)

func newVerifyCache(next Verifier) *verifyCache {
	return &verifyCache{next: next, entries: map[string]cacheEntry{}, now: time.Now}
}

func (c *verifyCache) get(ctx context.Context, key string, ttl time.Duration, fetch func(context.Context) (canonical.Result, error)) (canonical.Result, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.res, e.err
	}
	res, err := fetch(ctx)
	if ctx.Err() != nil {
		return res, err // an abandoned request says nothing about the platform
	}
	if err != nil {
		ttl = cacheTTLFailure
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= cacheMaxEntries {
		for k, e := range c.entries {
			if now.After(e.expires) || len(c.entries) >= cacheMaxEntries {
				delete(c.entries, k)
			}
		}
	}
	c.entries[key] = cacheEntry{res: res, err: err, expires: now.Add(ttl)}
	return res, err
}

func (c *verifyCache) LessWrong(ctx context.Context, postID string) (canonical.Result, error) {
	return c.get(ctx, "lw"+cacheKeySeparator+postID, cacheTTLMutable, func(ctx context.Context) (canonical.Result, error) {
		return c.next.LessWrong(ctx, postID)
	})
}

func (c *verifyCache) Wikipedia(ctx context.Context, req canonical.WikipediaRequest) (canonical.Result, error) {
	key := "wp" + cacheKeySeparator + req.Language + cacheKeySeparator + req.PageID + cacheKeySeparator + req.RevisionID
	return c.get(ctx, key, cacheTTLRevision, func(ctx context.Context) (canonical.Result, error) {
		return c.next.Wikipedia(ctx, req)
	})
}

func (c *verifyCache) Bluesky(ctx context.Context, req canonical.BlueskyRequest) (canonical.Result, error) {
	key := "bs" + cacheKeySeparator + req.DID + cacheKeySeparator + req.RKey + cacheKeySeparator + req.Handle
	return c.get(ctx, key, cacheTTLMutable, func(ctx context.Context) (canonical.Result, error) {
		return c.next.Bluesky(ctx, req)
	})
}

func (c *verifyCache) Substack(ctx context.Context, req canonical.SubstackRequest) (canonical.Result, error) {
	key := "ss" + cacheKeySeparator + req.PublicationSubdomain + cacheKeySeparator + req.Slug + cacheKeySeparator + req.PostID
	return c.get(ctx, key, cacheTTLMutable, func(ctx context.Context) (canonical.Result, error) {
		return c.next.Substack(ctx, req)
	})
}
