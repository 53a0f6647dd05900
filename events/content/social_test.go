package content

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBlueskyPostURI(t *testing.T) {
	t.Parallel()
	const plc = "did:plc:z72i7hdynmk6r22z27h6tvur"
	tests := []struct {
		uri      string
		did      string
		rkey     string
		errorHas string
	}{
		{uri: "at://" + plc + "/app.bsky.feed.post/3lbg6v5ctk22w", did: plc, rkey: "3lbg6v5ctk22w"},
		{uri: "at://did:web:example.com/app.bsky.feed.post/3jzfcijpj2z2a", did: "did:web:example.com", rkey: "3jzfcijpj2z2a"},
		{uri: "at://did:web:xn--bcher-kva.example/app.bsky.feed.post/3jzfcijpj2z2a", did: "did:web:xn--bcher-kva.example", rkey: "3jzfcijpj2z2a"},
		// A handle authority names an account only until the handle moves.
		{uri: "at://bsky.app/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://DID:PLC:Z72I7HDYNMK6R22Z27H6TVUR/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://did:plc:z72i7hdynmk6r22z27h6tvu/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://did:web:localhost%3A8080/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://did:web:bücher.example/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "at://" + plc + "/app.bsky.feed.like/3lbg6v5ctk22w", errorHas: "collection"},
		{uri: "at://" + plc + "/app.bsky.feed.post/self", errorHas: "TID"},
		{uri: "at://" + plc + "/app.bsky.feed.post/3LBG6V5CTK22W", errorHas: "TID"},
		{uri: "at://" + plc + "/app.bsky.feed.post/3lbg6v5ctk22w?x=1", errorHas: "TID"},
		{uri: "at://" + plc + "/app.bsky.feed.post/3lbg6v5ctk22w#f", errorHas: "TID"},
		{uri: "at://" + plc + "/app.bsky.feed.post/3lbg6v5ctk22w/", errorHas: "must be at://"},
		{uri: "at://" + plc + "/app.bsky.feed.post", errorHas: "must be at://"},
		{uri: "https://bsky.app/profile/bsky.app/post/3lbg6v5ctk22w", errorHas: "must start with"},
		{uri: "AT://" + plc + "/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "must start with"},
		{uri: plc + "/3lbg6v5ctk22w", errorHas: "must start with"},
		{uri: "at://" + plc + "\x00/app.bsky.feed.post/3lbg6v5ctk22w", errorHas: "the author's DID"},
		{uri: "", errorHas: "must start with"},
	}
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			did, rkey, err := ParseBlueskyPostURI(tc.uri)
			if tc.errorHas != "" {
				require.ErrorIs(t, err, ErrBadIdentity)
				require.ErrorContains(t, err, tc.errorHas)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.did, did)
			require.Equal(t, tc.rkey, rkey)
			require.Equal(t, tc.uri, BlueskyPostURI(did, rkey), "one spelling per post")
		})
	}
	require.False(t, ValidBlueskyDID("did:web:"+strings.Repeat("a.", 130)+"com"), "a did:web host is a DNS name of at most 253 characters")
}

func TestNormalizeBlueskyHandle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{"alice.bsky.social", "alice.bsky.social"},
		{" @Alice.Bsky.Social ", "alice.bsky.social"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"handle.invalid", "handle.invalid"},
		{"a-b.c0", "a-b.c0"},
	} {
		got, err := NormalizeBlueskyHandle(tc.raw)
		require.NoError(t, err, tc.raw)
		require.Equal(t, tc.want, got)
	}
	for _, raw := range []string{
		"", "@", "alice", "alice.", ".alice.com", "alice..com", "-alice.com", "alice-.com", "alice.123",
		"bücher.example", "alice.bsky.social\x00", "al ice.bsky.social", "@@alice.bsky.social",
		"did:plc:z72i7hdynmk6r22z27h6tvur", strings.Repeat("a", 64) + ".com",
		strings.Repeat("abcdefghi.", 26) + "com", // 263 characters
		strings.Repeat("h", 10_000) + ".com",
	} {
		_, err := NormalizeBlueskyHandle(raw)
		require.ErrorIs(t, err, ErrBadIdentity, "%q", raw)
	}
	longest := strings.Repeat("abcdefghi.", 25) + "com" // 253 characters
	got, err := NormalizeBlueskyHandle(longest)
	require.NoError(t, err)
	require.Len(t, got, MaxBlueskyHandleChars)
}

func TestThreadsIdentity(t *testing.T) {
	t.Parallel()
	for _, code := range []string{"DBxK2mYsQpL", "C8HkLcXRJQm", "Ab_-9", strings.Repeat("a", 64)} {
		require.True(t, ValidThreadsCode(code), code)
	}
	for _, code := range []string{"", "abcd", strings.Repeat("a", 65), "DBxK2mYsQpL/", "DBxK2mYs QpL", "DBxK2mYsQpL\x00", "DBxK2mYsQpL?x", "DBxK2mYs%51pL", "DBxK2mYsQpĹ"} {
		require.False(t, ValidThreadsCode(code), "%q", code)
	}
	for _, tc := range []struct{ raw, want string }{
		{"zuck", "zuck"}, {" @Some.User_1 ", "some.user_1"}, {strings.Repeat("a", 30), strings.Repeat("a", 30)},
	} {
		got, err := NormalizeThreadsUsername(tc.raw)
		require.NoError(t, err, tc.raw)
		require.Equal(t, tc.want, got)
	}
	for _, raw := range []string{"", "@", strings.Repeat("a", 31), "some-user", "some user", "zuck\x00", "zück", "@@zuck"} {
		_, err := NormalizeThreadsUsername(raw)
		require.ErrorIs(t, err, ErrBadIdentity, "%q", raw)
	}
}
