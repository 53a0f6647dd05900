// Package ingest turns what the extension observed into post events:
// registerObservedVersion becomes post.version_registered, a view becomes
// post.view_recorded. It validates input, canonicalizes content and appends;
// it never writes a read model.
package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// Content size limits from the spec (2.13) and the wire contract; the
// limits of every other stored string are in limits.go.
const (
	MaxObservedTextUTF16 = 500_000
	MaxObservedTextBytes = 500_000
)

// InputError is a request the caller must fix; it maps to BAD_REQUEST.
type InputError struct {
	Field   string
	Message string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func inputErr(field, format string, args ...any) error {
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// SyntaxError is a body that is not JSON at all; it maps to PARSE_ERROR.
type SyntaxError struct{ Err error }

func (e *SyntaxError) Error() string { return "malformed JSON: " + e.Err.Error() }
func (e *SyntaxError) Unwrap() error { return e.Err }

// RegisterInput is registerObservedVersion's wire input.
type RegisterInput struct {
	Platform                 string                    `json:"platform"`
	ExternalID               *string                   `json:"externalId"`
	URL                      string                    `json:"url"`
	ObservedImageURLs        []string                  `json:"observedImageUrls"`
	ObservedImageOccurrences []content.ImageOccurrence `json:"observedImageOccurrences"`
	ObservedContentText      *string                   `json:"observedContentText"`
	Metadata                 json.RawMessage           `json:"metadata"`

	lesswrong *lessWrongMetadata
	x         *xMetadata
	substack  *substackMetadata
	wikipedia *wikipediaMetadata
	bluesky   *blueskyMetadata
	threads   *threadsMetadata
}

type lessWrongMetadata struct {
	Slug        string   `json:"slug"`
	Title       *string  `json:"title"`
	HTMLContent string   `json:"htmlContent"`
	AuthorName  *string  `json:"authorName"`
	AuthorSlug  *string  `json:"authorSlug"`
	Tags        []string `json:"tags"`
	PublishedAt *string  `json:"publishedAt"`
}

type xMetadata struct {
	AuthorHandle      string   `json:"authorHandle"`
	AuthorDisplayName *string  `json:"authorDisplayName"`
	Text              string   `json:"text"`
	MediaURLs         []string `json:"mediaUrls"`
	LikeCount         *int     `json:"likeCount"`
	RetweetCount      *int     `json:"retweetCount"`
	PostedAt          *string  `json:"postedAt"`
}

type substackMetadata struct {
	SubstackPostID       string  `json:"substackPostId"`
	PublicationSubdomain string  `json:"publicationSubdomain"`
	Slug                 string  `json:"slug"`
	Title                string  `json:"title"`
	Subtitle             *string `json:"subtitle"`
	HTMLContent          *string `json:"htmlContent"`
	AuthorName           string  `json:"authorName"`
	AuthorSubstackHandle *string `json:"authorSubstackHandle"`
	PublishedAt          *string `json:"publishedAt"`
	LikeCount            *int    `json:"likeCount"`
	CommentCount         *int    `json:"commentCount"`
}

type wikipediaMetadata struct {
	Language       string  `json:"language"`
	Title          string  `json:"title"`
	PageID         string  `json:"pageId"`
	RevisionID     string  `json:"revisionId"`
	DisplayTitle   *string `json:"displayTitle"`
	LastModifiedAt *string `json:"lastModifiedAt"`
	HTMLContent    *string `json:"htmlContent"`
}

// blueskyMetadata is BLUESKY's metadata. The post's identity is the
// externalId, its AT URI; the text is observedContentText (the record's
// text as the post shows it, without quoted posts, link cards or alt text).
type blueskyMetadata struct {
	Handle      string  `json:"handle"`
	DisplayName *string `json:"displayName"`
	CreatedAt   *string `json:"createdAt"`
	LikeCount   *int    `json:"likeCount"`
	RepostCount *int    `json:"repostCount"`
	ReplyCount  *int    `json:"replyCount"`
}

// threadsMetadata is THREADS' metadata. The externalId is the post code.
type threadsMetadata struct {
	Username    string  `json:"username"`
	DisplayName *string `json:"displayName"`
	PostedAt    *string `json:"postedAt"`
	LikeCount   *int    `json:"likeCount"`
	ReplyCount  *int    `json:"replyCount"`
	RepostCount *int    `json:"repostCount"`
}

// DecodeStrict decodes one JSON value into v, rejecting unknown fields and
// trailing data. Syntax errors come back as *SyntaxError, everything else
// (wrong types, unknown fields) as *InputError.
func DecodeStrict(data []byte, v any, field string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return &SyntaxError{Err: errors.New("trailing data after the JSON value")}
		}
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &SyntaxError{Err: err}
	case errors.As(err, &typ):
		name := typ.Field
		if field != "" {
			name = strings.TrimSuffix(field+"."+typ.Field, ".")
		}
		return inputErr(name, "expected %s, got JSON %s", typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return inputErr(field, "%s", strings.TrimPrefix(err.Error(), "json: "))
	default:
		return inputErr(field, "%v", err)
	}
}

// ParseRegisterInput decodes and validates a registerObservedVersion body.
func ParseRegisterInput(body []byte) (*RegisterInput, error) {
	var in RegisterInput
	if err := DecodeStrict(body, &in, ""); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return &in, nil
}

func (in *RegisterInput) validate() error {
	if !events.ValidPlatform(in.Platform) {
		return inputErr("platform", "must be one of %s", strings.Join(events.Platforms, ", "))
	}
	if err := checkHTTPURL("url", in.URL); err != nil {
		return err
	}
	if len(in.Metadata) == 0 || string(in.Metadata) == "null" {
		return inputErr("metadata", "is required")
	}
	if in.ObservedImageURLs == nil {
		in.ObservedImageURLs = []string{}
	}
	if err := checkHTTPURLs("observedImageUrls", in.ObservedImageURLs); err != nil {
		return err
	}
	if err := checkOccurrences(in.ObservedImageOccurrences); err != nil {
		return err
	}
	if in.ObservedContentText != nil {
		if err := checkObservedText("observedContentText", *in.ObservedContentText); err != nil {
			return err
		}
	}
	switch in.Platform {
	case events.PlatformLessWrong:
		return in.validateLessWrong()
	case events.PlatformX:
		return in.validateX()
	case events.PlatformSubstack:
		return in.validateSubstack()
	case events.PlatformWikipedia:
		return in.validateWikipedia()
	case events.PlatformBluesky:
		return in.validateBluesky()
	default:
		return in.validateThreads()
	}
}

func (in *RegisterInput) requireExternalID() error {
	if in.ExternalID == nil || strings.TrimSpace(*in.ExternalID) == "" {
		return inputErr("externalId", "is required for %s", in.Platform)
	}
	return CheckExternalID("externalId", *in.ExternalID)
}

func (in *RegisterInput) requireObservedText() error {
	if in.ObservedContentText == nil {
		return inputErr("observedContentText", "is required for %s", in.Platform)
	}
	return nil
}

func (in *RegisterInput) validateLessWrong() error {
	if err := in.requireExternalID(); err != nil {
		return err
	}
	if in.ObservedContentText != nil {
		return inputErr("observedContentText", "must be omitted for LESSWRONG (the server derives text from HTML)")
	}
	var m lessWrongMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	if err := checkRequired("metadata.slug", m.Slug, MaxSlugChars); err != nil {
		return err
	}
	if m.HTMLContent == "" {
		return inputErr("metadata.htmlContent", "is required for LESSWRONG")
	}
	if err := checkObservedText("metadata.htmlContent", m.HTMLContent); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		v     *string
		max   int
	}{
		{"metadata.title", m.Title, MaxTitleChars},
		{"metadata.authorName", m.AuthorName, MaxDisplayNameChars},
		{"metadata.authorSlug", m.AuthorSlug, MaxSlugChars},
	} {
		if err := checkOptional(f.field, f.v, f.max); err != nil {
			return err
		}
	}
	if len(m.Tags) > MaxTags {
		return inputErr("metadata.tags", "at most %d tags", MaxTags)
	}
	for i, tag := range m.Tags {
		if err := CheckString(fmt.Sprintf("metadata.tags[%d]", i), tag, MaxTagChars); err != nil {
			return err
		}
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	if err := checkTimes(map[string]*string{"metadata.publishedAt": m.PublishedAt}); err != nil {
		return err
	}
	in.lesswrong = &m
	return nil
}

func (in *RegisterInput) validateX() error {
	if err := in.requireExternalID(); err != nil {
		return err
	}
	if err := in.requireObservedText(); err != nil {
		return err
	}
	var m xMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	if strings.TrimSpace(m.AuthorHandle) == "" {
		return inputErr("metadata.authorHandle", "is required")
	}
	// The handle is the author's identity: one that is only "@" names nobody.
	if normalizeXHandle(m.AuthorHandle) == "" {
		return inputErr("metadata.authorHandle", "must name the author (got only %q)", strings.TrimSpace(m.AuthorHandle))
	}
	if err := CheckString("metadata.authorHandle", normalizeXHandle(m.AuthorHandle), MaxHandleChars); err != nil {
		return err
	}
	if err := checkOptional("metadata.authorDisplayName", m.AuthorDisplayName, MaxDisplayNameChars); err != nil {
		return err
	}
	if err := checkObservedText("metadata.text", m.Text); err != nil {
		return err
	}
	if m.MediaURLs == nil {
		m.MediaURLs = []string{}
	}
	if err := checkHTTPURLs("metadata.mediaUrls", m.MediaURLs); err != nil {
		return err
	}
	if err := checkCounts(map[string]*int{"metadata.likeCount": m.LikeCount, "metadata.retweetCount": m.RetweetCount}); err != nil {
		return err
	}
	if err := checkTimes(map[string]*string{"metadata.postedAt": m.PostedAt}); err != nil {
		return err
	}
	in.x = &m
	return nil
}

func (in *RegisterInput) validateSubstack() error {
	if err := in.requireExternalID(); err != nil {
		return err
	}
	if err := in.requireObservedText(); err != nil {
		return err
	}
	var m substackMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	for _, f := range []struct {
		field string
		v     string
		max   int
	}{
		{"metadata.substackPostId", m.SubstackPostID, MaxPlatformIDChars},
		{"metadata.publicationSubdomain", m.PublicationSubdomain, MaxSubdomainChars},
		{"metadata.slug", m.Slug, MaxSlugChars},
		{"metadata.title", m.Title, MaxTitleChars},
		{"metadata.authorName", m.AuthorName, MaxDisplayNameChars},
	} {
		if err := checkRequired(f.field, f.v, f.max); err != nil {
			return err
		}
	}
	if err := checkOptional("metadata.subtitle", m.Subtitle, MaxSubtitleChars); err != nil {
		return err
	}
	if err := checkOptional("metadata.authorSubstackHandle", m.AuthorSubstackHandle, MaxHandleChars); err != nil {
		return err
	}
	if m.HTMLContent != nil {
		if err := checkObservedText("metadata.htmlContent", *m.HTMLContent); err != nil {
			return err
		}
	}
	if err := checkCounts(map[string]*int{"metadata.likeCount": m.LikeCount, "metadata.commentCount": m.CommentCount}); err != nil {
		return err
	}
	if err := checkTimes(map[string]*string{"metadata.publishedAt": m.PublishedAt}); err != nil {
		return err
	}
	in.substack = &m
	return nil
}

func (in *RegisterInput) validateWikipedia() error {
	if in.ExternalID != nil {
		return inputErr("externalId", "must be omitted for WIKIPEDIA (the server derives it from language and pageId)")
	}
	if err := in.requireObservedText(); err != nil {
		return err
	}
	var m wikipediaMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	if !wikiLanguage(m.Language) {
		return inputErr("metadata.language", "must be a Wikipedia language code")
	}
	if err := checkRequired("metadata.title", m.Title, MaxTitleChars); err != nil {
		return err
	}
	if err := checkOptional("metadata.displayTitle", m.DisplayTitle, MaxTitleChars); err != nil {
		return err
	}
	if !digits(m.PageID) {
		return inputErr("metadata.pageId", "must be a positive integer string")
	}
	if !digits(m.RevisionID) {
		return inputErr("metadata.revisionId", "must be a positive integer string")
	}
	if m.HTMLContent != nil {
		if err := checkObservedText("metadata.htmlContent", *m.HTMLContent); err != nil {
			return err
		}
	}
	if err := checkTimes(map[string]*string{"metadata.lastModifiedAt": m.LastModifiedAt}); err != nil {
		return err
	}
	id := content.WikipediaExternalID(m.Language, m.PageID)
	in.ExternalID = &id
	in.wikipedia = &m
	return nil
}

func (in *RegisterInput) validateBluesky() error {
	if err := in.requireExternalID(); err != nil {
		return err
	}
	if _, _, err := content.ParseBlueskyPostURI(*in.ExternalID); err != nil {
		return inputErr("externalId", "must be the post's AT URI at://{did}/%s/{rkey}: %v", content.BlueskyPostCollection, err)
	}
	if err := in.requireObservedText(); err != nil {
		return err
	}
	var m blueskyMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	if err := checkSocialName("metadata.handle", m.Handle, MaxBlueskyHandleChars, content.NormalizeBlueskyHandle); err != nil {
		return err
	}
	if err := checkOptional("metadata.displayName", m.DisplayName, MaxDisplayNameChars); err != nil {
		return err
	}
	if err := checkCounts(map[string]*int{"metadata.likeCount": m.LikeCount, "metadata.repostCount": m.RepostCount, "metadata.replyCount": m.ReplyCount}); err != nil {
		return err
	}
	if err := checkTimes(map[string]*string{"metadata.createdAt": m.CreatedAt}); err != nil {
		return err
	}
	in.bluesky = &m
	return nil
}

func (in *RegisterInput) validateThreads() error {
	if err := in.requireExternalID(); err != nil {
		return err
	}
	if !content.ValidThreadsCode(*in.ExternalID) {
		return inputErr("externalId", "must be the Threads post code, the last segment of threads.com/@{username}/post/{code} (5 to 64 letters, digits, - or _)")
	}
	if err := in.requireObservedText(); err != nil {
		return err
	}
	var m threadsMetadata
	if err := DecodeStrict(in.Metadata, &m, "metadata"); err != nil {
		return err
	}
	if err := checkSocialName("metadata.username", m.Username, MaxHandleChars, content.NormalizeThreadsUsername); err != nil {
		return err
	}
	if err := checkOptional("metadata.displayName", m.DisplayName, MaxDisplayNameChars); err != nil {
		return err
	}
	if err := checkCounts(map[string]*int{"metadata.likeCount": m.LikeCount, "metadata.replyCount": m.ReplyCount, "metadata.repostCount": m.RepostCount}); err != nil {
		return err
	}
	if err := checkTimes(map[string]*string{"metadata.postedAt": m.PostedAt}); err != nil {
		return err
	}
	in.threads = &m
	return nil
}

// checkSocialName validates a Bluesky handle or Threads username: present,
// storable and bounded (after spaces and one "@"), then in the platform's
// syntax.
func checkSocialName(field, raw string, maxChars int, normalize func(string) (string, error)) error {
	trimmed := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(raw), "@"))
	if trimmed == "" {
		return inputErr(field, "is required")
	}
	if err := CheckString(field, trimmed, maxChars); err != nil {
		return err
	}
	if _, err := normalize(raw); err != nil {
		return inputErr(field, "%v", err)
	}
	return nil
}

func checkTimes(m map[string]*string) error {
	for field, v := range m {
		if v == nil {
			continue
		}
		if _, err := parseTime(*v); err != nil {
			return inputErr(field, "must be an ISO-8601 timestamp")
		}
	}
	return nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

func optTime(s *string) *time.Time {
	if s == nil {
		return nil
	}
	t, err := parseTime(*s)
	if err != nil {
		return nil
	}
	return &t
}

func digits(s string) bool {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func wikiLanguage(s string) bool {
	if len(s) < 2 || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '-') {
			return false
		}
	}
	return true
}
