package canonical

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// lessWrongPostQuery selects one post by _id. contents.html is the full
// body (plaintextMainText is truncated); the other fields are identity the
// caller may compare or store.
const lessWrongPostQuery = `query ErrataCanonicalPost($id: String!) {
  post(input: {selector: {_id: $id}}) {
    result {
      _id
      slug
      title
      user {
        slug
        displayName
      }
      contents {
        html
      }
    }
  }
}`

// lessWrongPostID matches LessWrong document ids (17 alphanumerics today;
// the bound is loose on purpose).
var lessWrongPostID = regexp.MustCompile(`^[A-Za-z0-9]{1,64}$`)

type lessWrongRequestBody struct {
	Query     string            `json:"query"`
	Variables map[string]string `json:"variables"`
}

type lessWrongResponse struct {
	Data *struct {
		Post *struct {
			Result *lessWrongPost `json:"result"`
		} `json:"post"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

type lessWrongPost struct {
	ID    string `json:"_id"`
	Slug  string `json:"slug"`
	Title string `json:"title"`
	User  *struct {
		Slug        string `json:"slug"`
		DisplayName string `json:"displayName"`
	} `json:"user"`
	Contents *struct {
		HTML *string `json:"html"`
	} `json:"contents"`
}

// LessWrong fetches post postID (the externalId, LessWrong's _id) from the
// GraphQL API. The text comes from contents.html via
// content.LessWrongHTMLToText, the same function applied to the client's
// htmlContent.
func (f *Fetcher) LessWrong(ctx context.Context, postID string) (Result, error) {
	res, err := f.lessWrong(ctx, postID)
	if err != nil {
		return Result{}, fmt.Errorf("lesswrong canonical fetch of %s: %w", postID, err)
	}
	return res, nil
}

func (f *Fetcher) lessWrong(ctx context.Context, postID string) (Result, error) {
	if !lessWrongPostID.MatchString(postID) {
		return Result{}, fmt.Errorf("%w: post id must be alphanumeric", ErrInvalidRequest)
	}
	body, err := json.Marshal(lessWrongRequestBody{Query: lessWrongPostQuery, Variables: map[string]string{"id": postID}})
	if err != nil {
		return Result{}, err
	}
	resp, err := f.do(ctx, events.PlatformLessWrong, httpsafe.Request{
		Method: http.MethodPost,
		URL:    f.endpoints.LessWrongGraphQL,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
		Body:   body,
	})
	if err != nil {
		return Result{}, err
	}
	var decoded lessWrongResponse
	if err := decodeJSON(resp.Body, &decoded); err != nil {
		return Result{}, err
	}
	var post *lessWrongPost
	if decoded.Data != nil && decoded.Data.Post != nil {
		post = decoded.Data.Post.Result
	}
	if post == nil {
		if len(decoded.Errors) > 0 {
			return Result{}, fmt.Errorf("%w: GraphQL error %s", ErrBadResponse, quote(decoded.Errors[0].Message))
		}
		return Result{}, ErrNotFound
	}
	if post.Contents == nil || post.Contents.HTML == nil || strings.TrimSpace(*post.Contents.HTML) == "" {
		return Result{}, fmt.Errorf("%w: contents.html is empty", ErrNoContent)
	}
	html := *post.Contents.HTML
	res, err := newResult(events.PlatformLessWrong, f.endpoints.LessWrongGraphQL, html, content.LessWrongHTMLToText)
	if err != nil {
		return Result{}, err
	}
	id := &LessWrongIdentity{PostID: post.ID, Slug: post.Slug, Title: strings.TrimSpace(post.Title)}
	if post.User != nil {
		id.AuthorSlug = post.User.Slug
		id.AuthorDisplayName = strings.TrimSpace(post.User.DisplayName)
	}
	res.LessWrong = id
	if post.ID != "" && post.ID != postID {
		res.Mismatches = append(res.Mismatches, IdentityMismatch{Field: "external_id", Observed: postID, Server: post.ID})
	}
	return res, nil
}
