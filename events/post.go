package events

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Platforms a post can come from.
const (
	PlatformLessWrong = "LESSWRONG"
	PlatformX         = "X"
	PlatformSubstack  = "SUBSTACK"
	PlatformWikipedia = "WIKIPEDIA"
	// PlatformBluesky and PlatformThreads carry verdict analyses (issue
	// 15); OpenErrata's extension never sends them.
	PlatformBluesky = "BLUESKY"
	PlatformThreads = "THREADS"
)

// Platforms lists every supported platform.
var Platforms = []string{PlatformLessWrong, PlatformX, PlatformSubstack, PlatformWikipedia, PlatformBluesky, PlatformThreads}

// ValidPlatform reports whether p names a supported platform.
func ValidPlatform(p string) bool {
	for _, known := range Platforms {
		if p == known {
			return true
		}
	}
	return false
}

// Content provenance of a version: derived from the platform's canonical
// source by the server, or taken from what the client observed.
const (
	ProvenanceServerVerified = "SERVER_VERIFIED"
	ProvenanceClientFallback = "CLIENT_FALLBACK"
)

// isSHA256Hex reports whether s is a sha256 digest in lowercase hex. It is
// written out rather than a regular expression: it runs for every key of
// every decoded view, and the regexp was a tenth of a projector's CPU.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Event type strings of the post aggregate.
const (
	TypePostVersionRegisteredV1 = "post.version_registered.v1"
	// TypePostViewRecordedV1 is superseded by v2: its records decode (are
	// upcast) to PostViewRecordedV2.
	TypePostViewRecordedV1 = "post.view_recorded.v1"
	TypePostViewRecordedV2 = "post.view_recorded.v2"
)

// ImageOccurrenceV1 is one image position in a version's normalized text.
// Offsets count UTF-16 code units, as the extension measures them.
type ImageOccurrenceV1 struct {
	OriginalIndex        int    `json:"original_index"`
	NormalizedTextOffset int    `json:"normalized_text_offset"`
	SourceURL            string `json:"source_url"`
	CaptionText          string `json:"caption_text,omitempty"`
}

// AuthorV1 is the platform identity of a post's author.
type AuthorV1 struct {
	PlatformUserID string `json:"platform_user_id"`
	DisplayName    string `json:"display_name"`
}

// LessWrongMetaV1 is the LessWrong metadata observed with a version.
type LessWrongMetaV1 struct {
	Slug        string     `json:"slug"`
	Title       string     `json:"title,omitempty"`
	AuthorName  string     `json:"author_name,omitempty"`
	AuthorSlug  string     `json:"author_slug,omitempty"`
	Tags        []string   `json:"tags"`
	Karma       *int       `json:"karma,omitempty"`
	PublishedAt *time.Time `json:"published_at,omitempty"`
}

// XMetaV1 is the X (Twitter) metadata observed with a version.
type XMetaV1 struct {
	TweetID           string     `json:"tweet_id"`
	Text              string     `json:"text"`
	AuthorHandle      string     `json:"author_handle"`
	AuthorDisplayName string     `json:"author_display_name,omitempty"`
	MediaURLs         []string   `json:"media_urls"`
	LikeCount         *int       `json:"like_count,omitempty"`
	RetweetCount      *int       `json:"retweet_count,omitempty"`
	PostedAt          *time.Time `json:"posted_at,omitempty"`
}

// SubstackMetaV1 is the Substack metadata observed with a version.
type SubstackMetaV1 struct {
	SubstackPostID       string     `json:"substack_post_id"`
	PublicationSubdomain string     `json:"publication_subdomain"`
	Slug                 string     `json:"slug"`
	Title                string     `json:"title"`
	Subtitle             string     `json:"subtitle,omitempty"`
	AuthorName           string     `json:"author_name"`
	AuthorSubstackHandle string     `json:"author_substack_handle,omitempty"`
	PublishedAt          *time.Time `json:"published_at,omitempty"`
	LikeCount            *int       `json:"like_count,omitempty"`
	CommentCount         *int       `json:"comment_count,omitempty"`
}

// WikipediaMetaV1 is the Wikipedia metadata of a version. PageID and
// RevisionID are the server's values when it verified them.
type WikipediaMetaV1 struct {
	Language       string     `json:"language"`
	Title          string     `json:"title"`
	PageID         string     `json:"page_id"`
	RevisionID     string     `json:"revision_id"`
	DisplayTitle   string     `json:"display_title,omitempty"`
	LastModifiedAt *time.Time `json:"last_modified_at,omitempty"`
}

// BlueskyPostCollection is the AT Protocol collection of Bluesky posts.
const BlueskyPostCollection = "app.bsky.feed.post"

// BlueskyPostURI is a Bluesky post's external id: its AT URI under the
// author's DID (never the mutable handle), at://{did}/app.bsky.feed.post/{rkey}.
func BlueskyPostURI(did, rkey string) string {
	return "at://" + did + "/" + BlueskyPostCollection + "/" + rkey
}

// BlueskyMetaV1 is the Bluesky metadata of a version. DID and RKey are the
// parts of the external id (BlueskyPostURI). Handle, DisplayName, CID and
// CreatedAt are the AppView's values when the server verified the post
// (CID only then); the counts are what the client observed.
type BlueskyMetaV1 struct {
	DID         string     `json:"did"`
	RKey        string     `json:"rkey"`
	Handle      string     `json:"handle"`
	DisplayName string     `json:"display_name,omitempty"`
	CID         string     `json:"cid,omitempty"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	LikeCount   *int       `json:"like_count,omitempty"`
	RepostCount *int       `json:"repost_count,omitempty"`
	ReplyCount  *int       `json:"reply_count,omitempty"`
}

// ThreadsMetaV1 is the Threads metadata observed with a version. Code is
// the external id: the post code of threads.com/@{username}/post/{code}.
type ThreadsMetaV1 struct {
	Code        string     `json:"code"`
	Username    string     `json:"username"`
	DisplayName string     `json:"display_name,omitempty"`
	PostedAt    *time.Time `json:"posted_at,omitempty"`
	LikeCount   *int       `json:"like_count,omitempty"`
	ReplyCount  *int       `json:"reply_count,omitempty"`
	RepostCount *int       `json:"repost_count,omitempty"`
}

// PostVersionRegisteredV1 records one observation of a post's content version
// by registerObservedVersion: the canonical text and identity it resolved to,
// how it was obtained, and the metadata observed with it. Every observation is
// its own event; projections count them (seenCount) and latch verification.
type PostVersionRegisteredV1 struct {
	PostID          string `json:"post_id"`
	PostVersionID   string `json:"post_version_id"`
	Platform        string `json:"platform"`
	ExternalID      string `json:"external_id"`
	URL             string `json:"url"`
	VersionHash     string `json:"version_hash"`
	ContentHash     string `json:"content_hash"`
	OccurrencesHash string `json:"occurrences_hash"`
	// ContentText is the normalized text the version hash was computed from.
	ContentText string `json:"content_text"`
	WordCount   int    `json:"word_count"`
	Provenance  string `json:"provenance"`
	// ServerFetchError says why server verification failed (CLIENT_FALLBACK).
	ServerFetchError string              `json:"server_fetch_error,omitempty"`
	ImageURLs        []string            `json:"image_urls"`
	ImageOccurrences []ImageOccurrenceV1 `json:"image_occurrences"`
	// ServerHTML is the canonical HTML the server fetched; ClientHTML what
	// the client sent. Projections store them content-addressed.
	ServerHTML string    `json:"server_html,omitempty"`
	ClientHTML string    `json:"client_html,omitempty"`
	Author     *AuthorV1 `json:"author,omitempty"`
	// ReporterKey is the keyed hash of the authenticated caller, if any.
	ReporterKey string           `json:"reporter_key,omitempty"`
	LessWrong   *LessWrongMetaV1 `json:"lesswrong,omitempty"`
	X           *XMetaV1         `json:"x,omitempty"`
	Substack    *SubstackMetaV1  `json:"substack,omitempty"`
	Wikipedia   *WikipediaMetaV1 `json:"wikipedia,omitempty"`
	Bluesky     *BlueskyMetaV1   `json:"bluesky,omitempty"`
	Threads     *ThreadsMetaV1   `json:"threads,omitempty"`
}

// EventType implements Payload.
func (PostVersionRegisteredV1) EventType() string { return TypePostVersionRegisteredV1 }

// Validate implements Payload.
func (p PostVersionRegisteredV1) Validate() error {
	var errs []error
	if !ValidPlatform(p.Platform) {
		errs = append(errs, fmt.Errorf("platform %q is unknown", p.Platform))
	}
	if p.ExternalID == "" {
		errs = append(errs, errors.New("external_id is empty"))
	}
	if p.PostID != PostID(p.Platform, p.ExternalID) {
		errs = append(errs, errors.New("post_id does not derive from platform and external_id"))
	}
	if p.PostVersionID != PostVersionID(p.PostID, p.VersionHash) {
		errs = append(errs, errors.New("post_version_id does not derive from post_id and version_hash"))
	}
	// In a fixed order: a parked event's reason must be the same on replay.
	for _, h := range []struct{ name, v string }{
		{"version_hash", p.VersionHash}, {"content_hash", p.ContentHash}, {"occurrences_hash", p.OccurrencesHash},
	} {
		if !isSHA256Hex(h.v) {
			errs = append(errs, fmt.Errorf("%s is not 64 lowercase hex characters", h.name))
		}
	}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("url %q is not an absolute http(s) URL", p.URL))
	}
	if p.ContentText == "" {
		errs = append(errs, errors.New("content_text is empty"))
	}
	if p.WordCount < 0 {
		errs = append(errs, errors.New("word_count is negative"))
	}
	switch p.Provenance {
	case ProvenanceServerVerified, ProvenanceClientFallback:
	default:
		errs = append(errs, fmt.Errorf("provenance %q is unknown", p.Provenance))
	}
	if p.ImageURLs == nil || p.ImageOccurrences == nil {
		errs = append(errs, errors.New("image_urls and image_occurrences must be arrays"))
	}
	metas := 0
	for _, present := range []bool{p.LessWrong != nil, p.X != nil, p.Substack != nil, p.Wikipedia != nil, p.Bluesky != nil, p.Threads != nil} {
		if present {
			metas++
		}
	}
	wantMeta := map[string]bool{
		PlatformLessWrong: p.LessWrong != nil, PlatformX: p.X != nil,
		PlatformSubstack: p.Substack != nil, PlatformWikipedia: p.Wikipedia != nil,
		PlatformBluesky: p.Bluesky != nil, PlatformThreads: p.Threads != nil,
	}[p.Platform]
	if metas != 1 || !wantMeta {
		errs = append(errs, fmt.Errorf("exactly the %s metadata must be present", p.Platform))
	}
	if m := p.Bluesky; m != nil && (m.DID == "" || m.RKey == "" || m.Handle == "" || p.ExternalID != BlueskyPostURI(m.DID, m.RKey)) {
		errs = append(errs, errors.New("bluesky needs did, rkey and handle, and external_id must be at://{did}/app.bsky.feed.post/{rkey}"))
	}
	if m := p.Threads; m != nil && (m.Code == "" || m.Username == "" || p.ExternalID != m.Code) {
		errs = append(errs, errors.New("threads needs code and username, and external_id must be the code"))
	}
	if p.Author != nil && (p.Author.PlatformUserID == "" || p.Author.DisplayName == "") {
		errs = append(errs, errors.New("author needs platform_user_id and display_name"))
	}
	return errors.Join(errs...)
}

// PostViewRecordedV1 records one view of a registered post version. Viewer
// and network identity are keyed hashes only; raw addresses never reach the log.
// Superseded by PostViewRecordedV2: decoding a v1 record yields a v2 payload.
type PostViewRecordedV1 struct {
	PostID        string `json:"post_id"`
	PostVersionID string `json:"post_version_id"`
	Platform      string `json:"platform"`
	ExternalID    string `json:"external_id"`
	// ViewerKey identifies the account (authenticated) or anonymous session.
	ViewerKey string `json:"viewer_key"`
	// IPRangeKey identifies the caller's /24 (IPv4) or /48 (IPv6) network.
	IPRangeKey    string `json:"ip_range_key"`
	Authenticated bool   `json:"authenticated"`
}

// EventType implements Payload.
func (PostViewRecordedV1) EventType() string { return TypePostViewRecordedV1 }

// Validate implements Payload.
func (p PostViewRecordedV1) Validate() error {
	var errs []error
	if !ValidPlatform(p.Platform) {
		errs = append(errs, fmt.Errorf("platform %q is unknown", p.Platform))
	}
	if p.PostID == "" || p.PostID != PostID(p.Platform, p.ExternalID) {
		errs = append(errs, errors.New("post_id does not derive from platform and external_id"))
	}
	if !validUUID(p.PostVersionID) {
		errs = append(errs, errors.New("post_version_id is not a UUID"))
	}
	if !isSHA256Hex(p.ViewerKey) {
		errs = append(errs, errors.New("viewer_key is not a sha256 hex digest"))
	}
	if !isSHA256Hex(p.IPRangeKey) {
		errs = append(errs, errors.New("ip_range_key is not a sha256 hex digest"))
	}
	return errors.Join(errs...)
}

// Kinds of viewer: the hash domain a view's viewer_key was derived in.
const (
	// ViewerInstanceAPIKey: the caller sent a valid instance API key; the
	// viewer key is the keyed hash of that key's sha256 (one account).
	ViewerInstanceAPIKey = "INSTANCE_API_KEY"
	// ViewerAnonymousSession: no valid key; the viewer key is the keyed
	// hash of the anonymous session (address and user agent).
	ViewerAnonymousSession = "ANONYMOUS_SESSION"
)

// PostViewRecordedV2 records one view of a registered post version. It
// replaces v1's authenticated boolean with ViewerKind, which names the kind
// of identity behind ViewerKey, so a new kind of viewer is a new value
// rather than another breaking change.
type PostViewRecordedV2 struct {
	PostID        string `json:"post_id"`
	PostVersionID string `json:"post_version_id"`
	Platform      string `json:"platform"`
	ExternalID    string `json:"external_id"`
	// ViewerKey identifies the account or anonymous session (ViewerKind).
	ViewerKey  string `json:"viewer_key"`
	ViewerKind string `json:"viewer_kind"`
	// IPRangeKey identifies the caller's /24 (IPv4) or /48 (IPv6) network.
	IPRangeKey string `json:"ip_range_key"`
}

// EventType implements Payload.
func (PostViewRecordedV2) EventType() string { return TypePostViewRecordedV2 }

// Validate implements Payload.
func (p PostViewRecordedV2) Validate() error {
	v1 := PostViewRecordedV1{PostID: p.PostID, PostVersionID: p.PostVersionID, Platform: p.Platform,
		ExternalID: p.ExternalID, ViewerKey: p.ViewerKey, IPRangeKey: p.IPRangeKey}
	errs := []error{v1.Validate()}
	switch p.ViewerKind {
	case ViewerInstanceAPIKey, ViewerAnonymousSession:
	default:
		errs = append(errs, fmt.Errorf("viewer_kind %q is unknown", p.ViewerKind))
	}
	return errors.Join(errs...)
}

// upcastPostViewRecordedV1 maps a stored v1 view to v2: authenticated views
// were made with an instance API key, the others by anonymous sessions.
// Every other field carries over unchanged.
func upcastPostViewRecordedV1(old Payload) (Payload, error) {
	var v PostViewRecordedV1
	switch p := old.(type) {
	case *PostViewRecordedV1:
		v = *p
	case PostViewRecordedV1:
		v = p
	default:
		return nil, fmt.Errorf("not a %s payload: %T", TypePostViewRecordedV1, old)
	}
	kind := ViewerAnonymousSession
	if v.Authenticated {
		kind = ViewerInstanceAPIKey
	}
	return &PostViewRecordedV2{
		PostID: v.PostID, PostVersionID: v.PostVersionID, Platform: v.Platform, ExternalID: v.ExternalID,
		ViewerKey: v.ViewerKey, ViewerKind: kind, IPRangeKey: v.IPRangeKey,
	}, nil
}

// TypePostIntegrityAnomalyRecordedV1 is the integrity anomaly event type.
const TypePostIntegrityAnomalyRecordedV1 = "post.integrity_anomaly_recorded.v1"

// Kinds of integrity anomaly.
const (
	// AnomalyContentMismatch: the server's canonical content differs from
	// what the client observed; the server's version is the one registered.
	AnomalyContentMismatch = "CONTENT_MISMATCH"
	// AnomalyIdentityMismatch: the platform's identity (e.g. Wikipedia page
	// id) differs from what the client sent; the server's value is stored.
	AnomalyIdentityMismatch = "IDENTITY_MISMATCH"
)

// PostIntegrityAnomalyRecordedV1 records a disagreement between what a client
// observed and what the platform served to the server for the same post.
type PostIntegrityAnomalyRecordedV1 struct {
	PostID        string `json:"post_id"`
	PostVersionID string `json:"post_version_id"`
	Platform      string `json:"platform"`
	ExternalID    string `json:"external_id"`
	Kind          string `json:"kind"`
	// Field names what disagreed (content_hash, page_id, ...), with the
	// client's and the server's values.
	Field         string `json:"field"`
	ObservedValue string `json:"observed_value"`
	ServerValue   string `json:"server_value"`
}

// EventType implements Payload.
func (PostIntegrityAnomalyRecordedV1) EventType() string { return TypePostIntegrityAnomalyRecordedV1 }

// Validate implements Payload.
func (p PostIntegrityAnomalyRecordedV1) Validate() error {
	var errs []error
	if !ValidPlatform(p.Platform) {
		errs = append(errs, fmt.Errorf("platform %q is unknown", p.Platform))
	}
	if p.PostID != PostID(p.Platform, p.ExternalID) {
		errs = append(errs, errors.New("post_id does not derive from platform and external_id"))
	}
	if !validUUID(p.PostVersionID) {
		errs = append(errs, errors.New("post_version_id is not a UUID"))
	}
	switch p.Kind {
	case AnomalyContentMismatch, AnomalyIdentityMismatch:
	default:
		errs = append(errs, fmt.Errorf("kind %q is unknown", p.Kind))
	}
	if p.Field == "" {
		errs = append(errs, errors.New("field is empty"))
	}
	return errors.Join(errs...)
}
