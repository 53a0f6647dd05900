package ingest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers"
)

// Caller is who made a request, reduced to keyed hashes: raw addresses and
// keys never leave the API process.
type Caller struct {
	// ViewerKey: the account (authenticated) or anonymous session.
	ViewerKey string
	// IPRangeKey: the /24 (IPv4) or /48 (IPv6) network.
	IPRangeKey    string
	Authenticated bool
	CorrelationID string
}

// Hasher derives Caller keys with HMAC-SHA256 under a server secret, so a
// key cannot be reversed by enumerating the small space of IP ranges.
type Hasher struct {
	secret []byte
}

// NewHasher returns a hasher keyed with secret.
func NewHasher(secret string) *Hasher { return &Hasher{secret: []byte(secret)} }

func (h *Hasher) sum(kind, value string) string {
	m := hmac.New(sha256.New, h.secret)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// IPRangeKey hashes the /24 (IPv4) or /48 (IPv6) prefix of ip.
func (h *Hasher) IPRangeKey(ip netip.Addr) string {
	ip = ip.Unmap()
	bits := 48
	if ip.Is4() {
		bits = 24
	}
	prefix, err := ip.Prefix(bits)
	if err != nil {
		return h.sum("ip-range", "invalid")
	}
	return h.sum("ip-range", prefix.String())
}

// AccountViewerKey is the viewer key of an authenticated caller, identified
// by the sha256 of its instance API key.
func (h *Hasher) AccountViewerKey(apiKeySHA256 string) string {
	return h.sum("account", apiKeySHA256)
}

// AnonymousViewerKey is the viewer key of an anonymous session. The
// extension sends no session id, so a session is the (address, user agent)
// pair: stable for one browser on one network.
func (h *Hasher) AnonymousViewerKey(ip netip.Addr, userAgent string) string {
	return h.sum("anonymous", ip.Unmap().String()+"\x00"+userAgent)
}

// Registered is registerObservedVersion's result.
type Registered struct {
	Platform      string
	ExternalID    string
	VersionHash   string
	PostVersionID string
	Provenance    string
	Position      producers.Position
}

// Service appends post events.
type Service struct {
	appender      *producers.Appender
	verifier      Verifier
	verifyTimeout time.Duration
}

// NewService returns the ingest service.
func NewService(a *producers.Appender, opts ...Option) *Service {
	s := &Service{appender: a, verifyTimeout: 8 * time.Second}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Register canonicalizes an observed version, verifies it against the
// platform when it can, and appends the registration followed by any
// integrity anomalies (same post, same partition, in this order).
//
// A verified registration carries the platform's canonical text and
// identity (SERVER_VERIFIED); otherwise the client's observation is used
// and marked CLIENT_FALLBACK with the reason. The server never claims a
// verification it did not do.
func (s *Service) Register(ctx context.Context, in *RegisterInput, caller Caller) (Registered, error) {
	p, err := BuildRegistration(in)
	if err != nil {
		return Registered{}, err
	}
	anomalies, err := s.verify(ctx, in, p)
	if err != nil {
		return Registered{}, err
	}
	if caller.Authenticated {
		p.ReporterKey = caller.ViewerKey
	}
	ev, err := s.appender.NewEvent(p, caller.CorrelationID, "")
	if err != nil {
		return Registered{}, err
	}
	evs := []events.Event{ev}
	for _, a := range anomalies {
		aev, err := s.appender.NewEvent(a, caller.CorrelationID, ev.ID)
		if err != nil {
			return Registered{}, err
		}
		evs = append(evs, aev)
	}
	pos, err := s.appender.Append(ctx, evs...)
	if err != nil {
		return Registered{}, err
	}
	return Registered{
		Platform: p.Platform, ExternalID: p.ExternalID, VersionHash: p.VersionHash,
		PostVersionID: p.PostVersionID, Provenance: p.Provenance, Position: pos[0],
	}, nil
}

// BuildRegistration derives the registration payload from validated input:
// canonical text, version identity, author and platform metadata.
func BuildRegistration(in *RegisterInput) (*events.PostVersionRegisteredV1, error) {
	if in.lesswrong == nil && in.x == nil && in.substack == nil && in.wikipedia == nil && in.bluesky == nil && in.threads == nil {
		return nil, errors.New("input was not validated")
	}
	var text, clientHTML string
	var err error
	if in.lesswrong != nil {
		clientHTML = in.lesswrong.HTMLContent
		text, err = content.LessWrongHTMLToText(clientHTML)
		if err != nil {
			return nil, inputErr("metadata.htmlContent", "cannot be read as HTML: %v", err)
		}
	} else {
		text = content.Normalize(*in.ObservedContentText)
	}
	if text == "" {
		return nil, inputErr("observedContentText", "content normalizes to empty text")
	}
	occs, err := content.CanonicalizeOccurrences(in.ObservedImageOccurrences, text)
	if err != nil {
		return nil, inputErr("observedImageOccurrences", "%v", err)
	}
	id, err := content.ComputeVersionIdentity(text, occs)
	if err != nil {
		return nil, inputErr("observedImageOccurrences", "%v", err)
	}
	externalID := *in.ExternalID
	postID := events.PostID(in.Platform, externalID)
	p := &events.PostVersionRegisteredV1{
		PostID:           postID,
		PostVersionID:    events.PostVersionID(postID, id.VersionHash),
		Platform:         in.Platform,
		ExternalID:       externalID,
		URL:              in.URL,
		VersionHash:      id.VersionHash,
		ContentHash:      id.ContentHash,
		OccurrencesHash:  id.OccurrencesHash,
		ContentText:      text,
		WordCount:        content.WordCount(text),
		Provenance:       events.ProvenanceClientFallback,
		ImageURLs:        append([]string{}, in.ObservedImageURLs...),
		ImageOccurrences: make([]events.ImageOccurrenceV1, len(occs)),
		ClientHTML:       clientHTML,
	}
	for i, o := range occs {
		p.ImageOccurrences[i] = events.ImageOccurrenceV1{
			OriginalIndex: o.OriginalIndex, NormalizedTextOffset: o.NormalizedTextOffset, SourceURL: o.SourceURL,
		}
		if o.CaptionText != nil {
			p.ImageOccurrences[i].CaptionText = *o.CaptionText
		}
	}
	fillPlatform(p, in)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("registration payload: %w", err)
	}
	return p, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

func fillPlatform(p *events.PostVersionRegisteredV1, in *RegisterInput) {
	switch {
	case in.lesswrong != nil:
		m := in.lesswrong
		p.LessWrong = &events.LessWrongMetaV1{
			Slug: m.Slug, Title: deref(m.Title), AuthorName: deref(m.AuthorName), AuthorSlug: deref(m.AuthorSlug),
			Tags: append([]string{}, m.Tags...), PublishedAt: optTime(m.PublishedAt),
		}
		if slug := deref(m.AuthorSlug); slug != "" {
			name := deref(m.AuthorName)
			if name == "" {
				name = slug
			}
			p.Author = &events.AuthorV1{PlatformUserID: slug, DisplayName: name}
		}
	case in.x != nil:
		m := in.x
		handle := normalizeXHandle(m.AuthorHandle)
		p.X = &events.XMetaV1{
			TweetID: p.ExternalID, Text: m.Text, AuthorHandle: handle, AuthorDisplayName: deref(m.AuthorDisplayName),
			MediaURLs: append([]string{}, m.MediaURLs...), LikeCount: m.LikeCount, RetweetCount: m.RetweetCount,
			PostedAt: optTime(m.PostedAt),
		}
		name := deref(m.AuthorDisplayName)
		if name == "" {
			name = handle
		}
		p.Author = &events.AuthorV1{PlatformUserID: strings.ToLower(handle), DisplayName: name}
	case in.substack != nil:
		m := in.substack
		p.Substack = &events.SubstackMetaV1{
			SubstackPostID: m.SubstackPostID, PublicationSubdomain: m.PublicationSubdomain, Slug: m.Slug,
			Title: m.Title, Subtitle: deref(m.Subtitle), AuthorName: m.AuthorName,
			AuthorSubstackHandle: deref(m.AuthorSubstackHandle), PublishedAt: optTime(m.PublishedAt),
			LikeCount: m.LikeCount, CommentCount: m.CommentCount,
		}
		if m.HTMLContent != nil {
			p.ClientHTML = *m.HTMLContent
		}
		// Without a handle the author is only known within the publication.
		userID := deref(m.AuthorSubstackHandle)
		if userID == "" {
			userID = m.PublicationSubdomain + ":" + strings.ToLower(strings.TrimSpace(m.AuthorName))
		}
		p.Author = &events.AuthorV1{PlatformUserID: userID, DisplayName: m.AuthorName}
	case in.wikipedia != nil:
		m := in.wikipedia
		p.Wikipedia = &events.WikipediaMetaV1{
			Language: m.Language, Title: m.Title, PageID: m.PageID, RevisionID: m.RevisionID,
			DisplayTitle: deref(m.DisplayTitle), LastModifiedAt: optTime(m.LastModifiedAt),
		}
		if m.HTMLContent != nil {
			p.ClientHTML = *m.HTMLContent
		}
		// Wikipedia articles have no single author.
	case in.bluesky != nil:
		m := in.bluesky
		did, rkey, _ := content.ParseBlueskyPostURI(p.ExternalID) // validated
		handle, _ := content.NormalizeBlueskyHandle(m.Handle)     // validated
		p.Bluesky = &events.BlueskyMetaV1{
			DID: did, RKey: rkey, Handle: handle, DisplayName: deref(m.DisplayName), CreatedAt: optTime(m.CreatedAt),
			LikeCount: m.LikeCount, RepostCount: m.RepostCount, ReplyCount: m.ReplyCount,
		}
		// The DID is the account; its handle may change.
		p.Author = &events.AuthorV1{PlatformUserID: did, DisplayName: blueskyAuthorName(p.Bluesky)}
	case in.threads != nil:
		m := in.threads
		username, _ := content.NormalizeThreadsUsername(m.Username) // validated
		p.Threads = &events.ThreadsMetaV1{
			Code: p.ExternalID, Username: username, DisplayName: deref(m.DisplayName), PostedAt: optTime(m.PostedAt),
			LikeCount: m.LikeCount, ReplyCount: m.ReplyCount, RepostCount: m.RepostCount,
		}
		name := p.Threads.DisplayName
		if name == "" {
			name = username
		}
		p.Author = &events.AuthorV1{PlatformUserID: username, DisplayName: name}
	}
}

// blueskyAuthorName is the author's display name, or the handle when the
// account has none.
func blueskyAuthorName(m *events.BlueskyMetaV1) string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.Handle
}

// RecordView appends a view of a registered version.
func (s *Service) RecordView(ctx context.Context, postID, postVersionID, platform, externalID string, caller Caller) (producers.Position, error) {
	kind := events.ViewerAnonymousSession
	if caller.Authenticated {
		kind = events.ViewerInstanceAPIKey
	}
	ev, err := s.appender.NewEvent(&events.PostViewRecordedV2{
		PostID: postID, PostVersionID: postVersionID, Platform: platform, ExternalID: externalID,
		ViewerKey: caller.ViewerKey, ViewerKind: kind, IPRangeKey: caller.IPRangeKey,
	}, caller.CorrelationID, "")
	if err != nil {
		return producers.Position{}, err
	}
	pos, err := s.appender.Append(ctx, ev)
	if err != nil {
		return producers.Position{}, err
	}
	return pos[0], nil
}
