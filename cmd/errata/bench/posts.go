package bench

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// vocabulary is what generated posts are written with: ordinary English,
// so word counts and text sizes are those of real articles.
var vocabulary = strings.Fields(`the of and to in a is that for it as was with be by on not he this are or
his from at which but have an they you were her she there been one all we their has would when
if so no will more can its about what out up into than them only other some time could these two
may then first any like now over such our most even new also after did many before through where
much should well people way because each just those how too good very year years world study data
water energy report evidence science climate growth market policy research results percent model
city river population history museum century record measured average estimate survey sample`)

// Post is one generated post: the registerObservedVersion body and the
// identity the server must derive from it.
type Post struct {
	Body          []byte
	PostID        string
	PostVersionID string
	VersionHash   string
	ExternalID    string
}

// NewPost generates the distinct Substack post number (worker, seq): words
// of already-normalized text (single spaces, plain ASCII), so the client
// knows its version id in advance and can check the server's answer.
func NewPost(worker, seq, words int) (Post, error) {
	ext := fmt.Sprintf("%d", 1_000_000_000+worker*10_000_000+seq)
	rng := rand.New(rand.NewPCG(uint64(worker), uint64(seq))) //nolint:gosec // G404: a post's words must follow from (worker, seq); nothing secret
	var b strings.Builder
	fmt.Fprintf(&b, "Post %s by writer %d reports that", ext, worker)
	for i := 0; i < words; i++ {
		b.WriteByte(' ')
		b.WriteString(vocabulary[rng.IntN(len(vocabulary))])
		if i%14 == 13 {
			fmt.Fprintf(&b, " %d.", rng.IntN(2100))
		}
	}
	b.WriteByte('.')
	text := b.String()
	id, err := content.ComputeVersionIdentity(text, nil)
	if err != nil {
		return Post{}, fmt.Errorf("version identity: %w", err)
	}
	postID := events.PostID(events.PlatformSubstack, ext)
	body, err := json.Marshal(map[string]any{
		"platform":            events.PlatformSubstack,
		"externalId":          ext,
		"url":                 "https://bench" + fmt.Sprint(worker) + ".substack.com/p/post-" + ext,
		"observedContentText": text,
		"observedImageUrls":   []string{},
		"metadata": map[string]any{
			"substackPostId":       ext,
			"publicationSubdomain": fmt.Sprintf("bench%d", worker),
			"slug":                 "post-" + ext,
			"title":                "Post " + ext,
			"authorName":           fmt.Sprintf("Writer %d", worker),
		},
	})
	if err != nil {
		return Post{}, err
	}
	return Post{Body: body, PostID: postID, PostVersionID: events.PostVersionID(postID, id.VersionHash),
		VersionHash: id.VersionHash, ExternalID: ext}, nil
}

// ViewBody is recordViewAndGetStatus's body for a post.
func (p Post) ViewBody() []byte {
	return []byte(`{"postVersionId":"` + p.PostVersionID + `"}`)
}

var loopback = netip.MustParseAddr("127.0.0.1")
