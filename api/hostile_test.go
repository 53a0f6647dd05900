package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostileRegistrationsNeverReachIngest: a stored string the stores
// would refuse is a BAD_REQUEST naming the field, decided before the
// ingest service (which appends) is called. The integration test
// TestIntegrationHostileStringsAppendNothing checks the same against the
// real log and projector.
func TestHostileRegistrationsNeverReachIngest(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		v          any
		field, msg string
	}{
		{"X authorHandle @", "metadata.authorHandle", "@", "metadata.authorHandle", `must name the author (got only "@")`},
		{"X authorHandle spaced @", "metadata.authorHandle", " @ ", "metadata.authorHandle", `must name the author (got only "@")`},
		{"X authorHandle NUL", "metadata.authorHandle", "a\x00", "metadata.authorHandle", "must not contain NUL (U+0000)"},
		{"X authorHandle 4,000 characters", "metadata.authorHandle", strings.Repeat("a", 4000), "metadata.authorHandle", "longer than 64 characters (got 4000)"},
		{"X text NUL", "metadata.text", "\x00", "metadata.text", "must not contain NUL (U+0000)"},
		{"X mediaUrls javascript", "metadata.mediaUrls", []any{"javascript:alert(1)"}, "metadata.mediaUrls[0]", "must be an absolute http(s) URL"},
		{"X mediaUrls data", "metadata.mediaUrls", []any{"data:image/png;base64,AAAA"}, "metadata.mediaUrls[0]", "must be an absolute http(s) URL"},
		{"X mediaUrls relative", "metadata.mediaUrls", []any{"media/a.jpg"}, "metadata.mediaUrls[0]", "must be an absolute http(s) URL"},
		{"externalId NUL", "externalId", "1\x00", "externalId", "must not contain NUL (U+0000)"},
		{"externalId 257 characters", "externalId", strings.Repeat("1", 257), "externalId", "longer than 256 characters (got 257)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi := newFakeServer(t)
			r := post(t, s, "post.registerObservedVersion", mustRaw(t, patched("X", tc.path, tc.v)))
			expectError(t, r, "BAD_REQUEST", "post.registerObservedVersion")
			msg, _, _ := errorEnvelopeOf(t, r)
			require.Equal(t, tc.field+": "+tc.msg, msg)
			registers, views := fi.calls()
			require.Zero(t, registers+views, "nothing reaches the service that appends")
		})
	}
}

// TestCorrelationIDIsStorable: x-request-id becomes the events' correlation
// id, so only short printable ASCII is kept; anything else is replaced by a
// fresh id (even where no middleware checked it first).
func TestCorrelationIDIsStorable(t *testing.T) {
	body := mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID})
	for _, tc := range []struct {
		name, id string
		kept     bool
	}{
		{"printable", "req-123_ABC.x", true},
		{"128 bytes", strings.Repeat("r", 128), true},
		{"129 bytes", strings.Repeat("r", 129), false},
		{"space", "req 123", false},
		{"non-ASCII", "req-\u00e9", false},
		{"DEL", "req\x7f", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi := newFakeServer(t)
			r := do(t, s, request{path: "/trpc/post.recordViewAndGetStatus", body: body, headers: map[string]string{"X-Request-Id": tc.id}})
			resultOf(t, r)
			require.Len(t, fi.callers, 1)
			got := fi.callers[0].CorrelationID
			if tc.kept {
				require.Equal(t, tc.id, got)
				return
			}
			require.NotEqual(t, tc.id, got)
			require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, got)
		})
	}
}
