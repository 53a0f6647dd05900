package events

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The hand-written checks answer exactly as the definitions they replace:
// the regular expressions and a canonical uuid.Parse round trip.
func TestHandWrittenChecksMatchTheirDefinitions(t *testing.T) {
	typeRE := regexp.MustCompile(`^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.v[1-9][0-9]*$`)
	hexRE := regexp.MustCompile(`^[0-9a-f]{64}$`)
	canonicalUUID := func(s string) bool {
		u, err := uuid.Parse(s)
		return err == nil && u.String() == s
	}
	id := uuid.NewSHA1(uuid.NameSpaceURL, []byte("x")).String()
	digest := strings.Repeat("0123456789abcdef", 4)
	inputs := []string{
		"", ".", "..", "a.b.v1", "post.view_recorded.v2", "post.view_recorded.v10", "post.view_recorded.v0",
		"post.view_recorded.v01", "post.view_recorded.v", "post.view_recorded.1", "Post.viewed.v1", "post.Viewed.v1",
		"_post.viewed.v1", "post._viewed.v1", "p0st_.v13w_.v9", "post.viewed.v1.", "post.viewed.v1.v2", "post..v1",
		".viewed.v1", "post.viewed", "post.viewed.v1x", "post-x.viewed.v1", "post.viewed.v1\n", "é.viewed.v1",
		id, strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, strings.ReplaceAll(id, "-", ""), id[:35] + "g",
		id[:8] + "x" + id[9:], id[:35], id + "0",
		digest, strings.ToUpper(digest), digest[:63], digest + "a", digest[:63] + "g", digest[:63] + "\x00",
	}
	for _, s := range inputs {
		if got, want := validType(s), typeRE.MatchString(s); got != want {
			t.Errorf("validType(%q) = %v, want %v", s, got, want)
		}
		if got, want := isSHA256Hex(s), hexRE.MatchString(s); got != want {
			t.Errorf("isSHA256Hex(%q) = %v, want %v", s, got, want)
		}
		if got, want := validUUID(s), canonicalUUID(s); got != want {
			t.Errorf("validUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
