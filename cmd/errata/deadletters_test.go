package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
)

// TestCleanEscapesHostileText: parked records are hostile data; nothing
// that can move the cursor, clear the screen, reorder text or hide
// characters reaches the terminal.
func TestCleanEscapesHostileText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語", "plain text, ünïcödé, 日本語"},
		{"a\x00b", `a\u0000b`},
		{"\x1b[2J\x1b]0;title\x07", `\u001b[2J\u001b]0;title\u0007`},
		{"line\nbreak\r\ttab", `line\nbreak\r\ttab`},
		{"bidi \u202egnp.exe", `bidi \u202egnp.exe`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"sep \u2028 \u2029", `sep \u2028 \u2029`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{`back\slash`, `back\\slash`},
		{"tag \U000E0041", `tag \U000e0041`},
	} {
		require.Equal(t, tc.want, clean(tc.in), "%q", tc.in)
	}
	// JSON keeps its escapes and stays JSON.
	in := "{\n  \"a\": \"x\\u0000y \u202e \u0085\",\n  \"b\": \"\U000E0041\"\n}"
	out := cleanJSON(in)
	require.Equal(t, "{\n  \"a\": \"x\\u0000y \\u202e \\u0085\",\n  \"b\": \"\\udb40\\udc41\"\n}", out)
	var a, b any
	require.NoError(t, json.Unmarshal([]byte(in), &a))
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	require.Equal(t, a, b)
}

func TestParseSourcePosition(t *testing.T) {
	t.Parallel()
	topic, p, o, err := parseSourcePosition("errata.posts/2/41")
	require.NoError(t, err)
	require.Equal(t, "errata.posts", topic)
	require.EqualValues(t, 2, p)
	require.EqualValues(t, 41, o)
	for _, bad := range []string{"", "errata.posts", "errata.posts/2", "/2/3", "t/-1/3", "t/1/x", "t/99999999999/1", "t/1/-5"} {
		_, _, _, err := parseSourcePosition(bad)
		require.Error(t, err, bad)
	}
}

func TestWriteParkedRecord(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	p := kafka.ParkedRecord{
		DeadLetterKey: kafka.DeadLetterKey{Group: "errata.projector.serving", Topic: "errata.posts", Partition: 2, Offset: 41},
		EventType:     "post.version_registered.v1", EventID: "11111111-1111-4111-8111-111111111111",
		Class: kafka.ClassDeterministic, Reason: "ERROR: invalid byte sequence for encoding \"UTF8\": 0x00\nline two",
		Time: at, Copies: 2, Labelled: true, DLQPartition: 1, DLQOffset: 5, Key: []byte("post\x1b[1"),
		Value:   []byte(`{"id":"11111111-1111-4111-8111-111111111111","data":{"handle":"a\u0000b","name":"` + "\u202e" + `x"}}`),
		Headers: []kgo.RecordHeader{{Key: "errata-type", Value: []byte("post.version_registered.v1")}, {Key: "x\x07", Value: []byte("\x00")}},
	}
	var out bytes.Buffer
	writeParkedRecord(&out, p)
	require.Equal(t, `source:      errata.posts/2/41
group:       errata.projector.serving
event type:  post.version_registered.v1
event id:    11111111-1111-4111-8111-111111111111
class:       deterministic
parked at:   2026-03-04T05:06:07Z
copies:      2 (first at partition 1 offset 5 of the dead-letter topic)
reason:
  ERROR: invalid byte sequence for encoding "UTF8": 0x00\nline two
headers:
  errata-type: post.version_registered.v1
  x\u0007: \u0000
key:         post\u001b[1
payload (JSON, 88 bytes):
  {
    "id": "11111111-1111-4111-8111-111111111111",
    "data": {
      "handle": "a\u0000b",
      "name": "\u202ex"
    }
  }
`, out.String())

	p.Value = []byte("\x00\x01not json\x1b[31m")
	p.Labelled = false
	out.Reset()
	writeParkedRecord(&out, p)
	require.Contains(t, out.String(), "payload (not JSON, 15 bytes, escaped):\n  \\u0000\\u0001not json\\u001b[31m\n")
	require.Contains(t, out.String(), "note:        no dead-letter headers")

	out.Reset()
	require.NoError(t, writeDeadLetters(&out, "errata.dead-letter", []kafka.ParkedRecord{p}))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^SOURCE\s+GROUP\s+TYPE\s+EVENT ID\s+CLASS\s+PARKED AT\s+COPIES\s+REASON$`, lines[0])
	require.Regexp(t, `^errata.posts/2/41\s+errata.projector.serving\s+post.version_registered.v1\s+11111111-1111-4111-8111-111111111111\s+deterministic\s+2026-03-04T05:06:07Z\s+2\s+ERROR: invalid byte sequence for encoding "UTF8": 0x00\\nline two$`, lines[1])
	require.Equal(t, "1 parked (2 copies on errata.dead-letter)", lines[2])
}
