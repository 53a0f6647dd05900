package canonical

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/httpsafe"
)

func TestNewFetcherValidation(t *testing.T) {
	client, err := httpsafe.New()
	require.NoError(t, err)

	_, err = NewFetcher(nil, Endpoints{}, nil)
	require.Error(t, err)
	for name, e := range map[string]Endpoints{
		"relative":   {LessWrongGraphQL: "/graphql"},
		"bad scheme": {WikipediaAPI: "ftp://{lang}.wikipedia.org/w/api.php"},
		"no host":    {SubstackPost: "https:///api/v1/posts/{slug}"},
	} {
		_, err := NewFetcher(client, e, nil)
		require.Error(t, err, name)
	}
	// Several bad endpoints: the first in declaration order is named, every time.
	for range 20 {
		_, err := NewFetcher(client, Endpoints{BlueskyThread: "/thread", SubstackPost: "/post", WikipediaAPI: "/w"}, nil)
		require.EqualError(t, err, `canonical: endpoint WikipediaAPI "/w" is not an absolute http(s) URL`)
	}
	for name, o := range map[string]Option{
		"no attempts":    WithRetryPolicy(RetryPolicy{Attempts: 0}),
		"negative delay": WithRetryPolicy(RetryPolicy{Attempts: 1, BaseDelay: -1}),
		"negative cap":   WithRetryPolicy(RetryPolicy{Attempts: 1, MaxDelay: -1}),
		"zero size":      WithMaxResponseBytes(0),
	} {
		_, err := NewFetcher(client, Endpoints{}, nil, o)
		require.Error(t, err, name)
	}

	f, err := NewFetcher(client, Endpoints{}, nil)
	require.NoError(t, err)
	require.Equal(t, Endpoints{
		LessWrongGraphQL: "https://www.lesswrong.com/graphql",
		WikipediaAPI:     "https://{lang}.wikipedia.org/w/api.php",
		SubstackPost:     "https://{publication}.substack.com/api/v1/posts/{slug}",
		BlueskyThread:    "https://public.api.bsky.app/xrpc/app.bsky.feed.getPostThread",
	}, f.endpoints)
	require.Equal(t, DefaultRetryPolicy(), f.retry)
	require.EqualValues(t, DefaultMaxResponseBytes, f.maxBytes)
}

// TestProductionURLs pins the exact URLs sent to the real platforms.
func TestProductionURLs(t *testing.T) {
	client, err := httpsafe.New()
	require.NoError(t, err)
	f, err := NewFetcher(client, Endpoints{}, nil)
	require.NoError(t, err)

	for lang, want := range map[string]string{
		"en":         "https://en.wikipedia.org/w/api.php?action=parse&format=json&formatversion=2&oldid=1339833339&prop=text%7Crevid%7Cdisplaytitle",
		"zh-min-nan": "https://zh-min-nan.wikipedia.org/w/api.php?action=parse&format=json&formatversion=2&oldid=1339833339&prop=text%7Crevid%7Cdisplaytitle",
	} {
		got, err := f.wikipediaParseURL(lang, "1339833339")
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	got, err := f.substackPostURL("astralcodexten", "my-post")
	require.NoError(t, err)
	require.Equal(t, "https://astralcodexten.substack.com/api/v1/posts/my-post", got)
	require.Equal(t, "https://www.lesswrong.com/graphql", f.endpoints.LessWrongGraphQL)
}
