package graphql_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/events"
)

// TestPlatformEnumIsTheEventPlatforms: the schema's Platform lists every
// platform the log knows, in the same order, Bluesky and Threads marked
// as Errata's additions; the OpenErrata four keep their names.
func TestPlatformEnumIsTheEventPlatforms(t *testing.T) {
	var names []string
	for _, p := range graphql.AllPlatform {
		names = append(names, string(p))
	}
	require.Equal(t, events.Platforms, names)

	r := newRig(t)
	status, _, body := r.post(t, map[string]any{"query": `{ __type(name: "Platform") { enumValues { name description } } }`})
	require.Equal(t, http.StatusOK, status, body)
	var out struct {
		Data struct {
			Type struct {
				EnumValues []struct {
					Name        string  `json:"name"`
					Description *string `json:"description"`
				} `json:"enumValues"`
			} `json:"__type"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	values := out.Data.Type.EnumValues
	require.Len(t, values, 6)
	for i, v := range values {
		require.Equal(t, events.Platforms[i], v.Name)
		if i < 4 {
			require.Nil(t, v.Description, "the contract's values are unchanged")
		} else {
			require.NotNil(t, v.Description)
			require.Contains(t, *v.Description, "Errata extension")
		}
	}
}

// TestNewPlatformsReachTheStores: BLUESKY and THREADS are accepted as
// arguments and handed to the read models as the log spells them.
func TestNewPlatformsReachTheStores(t *testing.T) {
	r := newRig(t)
	status, _, body := r.post(t, map[string]any{"query": `{ searchInvestigations(query: "sea level", platform: BLUESKY) { total } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, `"errors"`)
	require.Equal(t, events.PlatformBluesky, r.search.last.Platform)

	status, _, body = r.post(t, map[string]any{"query": `{ publicMetrics(platform: THREADS) { totalInvestigatedPosts } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, `"errors"`)
	require.Equal(t, events.PlatformThreads, r.metrics.last.Platform)

	status, _, body = r.post(t, map[string]any{
		"query":     `query($id: String!) { postInvestigations(platform: BLUESKY, externalId: $id) { post { url } investigations { id } } }`,
		"variables": map[string]any{"id": "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/3lbg6v5ctk22w"},
	})
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, `"errors"`)
	require.EqualValues(t, 1, r.serving.postQueries.Load())

	status, _, body = r.post(t, map[string]any{"query": `{ publicMetrics(platform: MASTODON) { totalInvestigatedPosts } }`})
	require.NotEqual(t, http.StatusOK, status)
	require.Contains(t, body, "MASTODON")
}
