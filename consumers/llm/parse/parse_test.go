package parse_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm/parse"
	"github.com/errata-dev/errata/consumers/llm/schema"
)

func verdict() *schema.Schema {
	return schema.Obj("",
		schema.Prop("approved", schema.Bool("")),
		schema.Prop("reason", schema.Str("")),
	)
}

func list() *schema.Schema {
	return &schema.Schema{Type: schema.Array, Items: schema.Str("")}
}

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		schema   *schema.Schema
		want     string // the JSON returned
		appended string // non-empty: repaired with this
		fenced   bool
		err      error // errors.Is target
		violates bool  // a *schema.ValidationError
	}{
		{name: "bare object", in: `{"approved":true,"reason":"ok"}`, schema: verdict(), want: `{"approved":true,"reason":"ok"}`},
		{name: "fenced json", in: "Here you go:\n```json\n{\"approved\": false, \"reason\": \"no\"}\n```\nThanks.", schema: verdict(),
			want: `{"approved": false, "reason": "no"}`, fenced: true},
		{name: "fence without language", in: "```\n[\"a\", \"b\"]\n```", schema: list(), want: `["a", "b"]`, fenced: true},
		{name: "fence on one line", in: "```json{\"approved\":true,\"reason\":\"r\"}```", schema: verdict(), want: `{"approved":true,"reason":"r"}`, fenced: true},
		{name: "fence of another language then prose JSON", in: "```bash\necho hi\n```\nAnswer: {\"approved\":true,\"reason\":\"r\"}", schema: verdict(),
			want: `{"approved":true,"reason":"r"}`},
		{name: "leading and trailing prose", in: "After checking, my verdict is {\"approved\":true,\"reason\":\"a {brace} in a string\"} as requested.", schema: verdict(),
			want: `{"approved":true,"reason":"a {brace} in a string"}`},
		{name: "think block removed", in: "<think>Maybe {\"approved\": false, \"reason\": \"draft\"}?</think>\n{\"approved\":true,\"reason\":\"final\"}", schema: verdict(),
			want: `{"approved":true,"reason":"final"}`},
		{name: "thinking tag, any case", in: "<Thinking>hmm [1]</Thinking>{\"approved\":true,\"reason\":\"r\"}", schema: verdict(), want: `{"approved":true,"reason":"r"}`},
		{name: "missing opening think tag", in: "reasoning with {\"approved\": false, \"reason\": \"x\"}</think>\n{\"approved\":true,\"reason\":\"y\"}", schema: verdict(),
			want: `{"approved":true,"reason":"y"}`},
		{name: "unclosed think block", in: "<think>I am still thinking {\"approved\":true,\"reason\":\"y\"}", schema: verdict(), err: parse.ErrTruncated},
		{name: "bracket in prose is not the answer", in: "As source [1] shows: {\"approved\":true,\"reason\":\"see [1]\"}", schema: verdict(),
			want: `{"approved":true,"reason":"see [1]"}`},
		{name: "identical duplicates", in: "{\"approved\":true,\"reason\":\"r\"}\nAgain: { \"approved\": true, \"reason\": \"r\" }", schema: verdict(),
			want: `{"approved":true,"reason":"r"}`},
		{name: "only one candidate matches the schema", in: "Example: {\"foo\": 1}. Answer: {\"approved\":true,\"reason\":\"r\"}", schema: verdict(),
			want: `{"approved":true,"reason":"r"}`},

		// Truncation: repaired only when just closers are missing.
		{name: "cut inside a string value", in: `{"approved":true,"reason":"the source say`, schema: verdict(),
			want: `{"approved":true,"reason":"the source say"}`, appended: `"}`},
		{name: "cut after a complete value", in: "```json\n{\"approved\": false, \"reason\": \"no\"\n", schema: verdict(),
			want: `{"approved": false, "reason": "no"}`, appended: `}`, fenced: true},
		{name: "cut in nested containers", in: `["a", "b"`, schema: list(), want: `["a", "b"]`, appended: `]`},
		{name: "cut after true", in: `{"reason":"r","approved":true`, schema: verdict(), want: `{"reason":"r","approved":true}`, appended: `}`},
		{name: "repaired but incomplete", in: `{"approved":true`, schema: verdict(), violates: true},
		{name: "cut after a comma", in: `{"approved":true,`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut after a colon", in: `{"approved":true,"reason":`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut inside a key", in: `{"approved":true,"rea`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut inside a number", in: `{"reason":"r","approved":true,"n":12`, err: parse.ErrTruncated},
		{name: "cut inside a literal", in: `{"reason":"r","approved":tr`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut inside an escape", in: `{"approved":true,"reason":"a \u00`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut after a backslash", in: `{"approved":true,"reason":"a \`, schema: verdict(), err: parse.ErrTruncated},
		{name: "cut right after an opening bracket", in: `{"approved":true,"list":[`, err: parse.ErrTruncated},
		{name: "cut inside a multi-byte character", in: "{\"approved\":true,\"reason\":\"caf\xc3", schema: verdict(), err: parse.ErrTruncated},
		{name: "complete value then a cut one", in: `{"approved":true,"reason":"a"} {"approved":false,"reason":"b`, schema: verdict(), err: parse.ErrAmbiguous},
		{name: "incomplete value in a closed fence", in: "```json\n{\"approved\":true,\"reason\":\"a\"\n```", schema: verdict(), err: parse.ErrMalformed},

		// Never guessed.
		{name: "two different answers", in: `{"approved":true,"reason":"a"} or {"approved":false,"reason":"b"}`, schema: verdict(), err: parse.ErrAmbiguous},
		{name: "two different values without schema", in: `{"a":1} {"b":2}`, err: parse.ErrAmbiguous},
		{name: "trailing comma", in: `{"approved":true,"reason":"a",}`, schema: verdict(), err: parse.ErrMalformed},
		{name: "single quotes", in: `{'approved': true}`, schema: verdict(), err: parse.ErrMalformed},
		{name: "comment", in: "{\"approved\": true, // yes\n\"reason\": \"a\"}", schema: verdict(), err: parse.ErrMalformed},
		{name: "malformed next to a valid one", in: `{"approved":true,"reason":"a",} {"approved":true,"reason":"a"}`, schema: verdict(), err: parse.ErrAmbiguous},
		{name: "no JSON", in: "I could not find anything wrong.", schema: verdict(), err: parse.ErrNoJSON},
		{name: "wrong top-level type", in: `["approved"]`, schema: verdict(), err: parse.ErrNoJSON},
		{name: "duplicate keys", in: `{"approved":true,"approved":false,"reason":"a"}`, schema: verdict(), err: schema.ErrInvalidJSON},

		// Schema violations.
		{name: "missing field", in: `{"approved":true}`, schema: verdict(), violates: true},
		{name: "wrong type", in: "```json\n{\"approved\":\"yes\",\"reason\":\"a\"}\n```", schema: verdict(), violates: true},
		{name: "additional property", in: `{"approved":true,"reason":"a","confidence":0.9}`, schema: verdict(), violates: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse.Decode(tc.in, tc.schema)
			switch {
			case tc.err != nil:
				require.True(t, errors.Is(err, tc.err), "want %v, got %v", tc.err, err)
				return
			case tc.violates:
				var verr *schema.ValidationError
				require.ErrorAs(t, err, &verr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got.JSON))
			require.Equal(t, tc.appended != "", got.Repaired)
			require.Equal(t, tc.appended, got.Appended)
			require.Equal(t, tc.fenced, got.Fenced)
		})
	}
}

func TestDecodeInto(t *testing.T) {
	var v struct {
		Approved bool   `json:"approved"`
		Reason   string `json:"reason"`
	}
	_, err := parse.DecodeInto("<think>x</think>```json\n{\"approved\":true,\"reason\":\"fine\"}\n```", verdict(), &v)
	require.NoError(t, err)
	require.True(t, v.Approved)
	require.Equal(t, "fine", v.Reason)
}

func TestExtractWithoutSchema(t *testing.T) {
	got, err := parse.Extract("Sure! [1, 2, 3]")
	require.NoError(t, err)
	require.Equal(t, "[1, 2, 3]", string(got.JSON))

	_, err = parse.Extract("See [1]. {\"a\": 1}")
	require.ErrorIs(t, err, parse.ErrAmbiguous, "without a schema, a bracket in prose is a candidate too")
}

func TestStripThinking(t *testing.T) {
	out, err := parse.StripThinking("<think>a</think>b<think>c</think>d")
	require.NoError(t, err)
	require.Equal(t, "bd", out)
	_, err = parse.StripThinking("b<think>c")
	require.ErrorIs(t, err, parse.ErrTruncated)
}

// FuzzDecode checks that Decode never panics and that whatever it returns
// is valid JSON matching the schema.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"approved":true,"reason":"a"}`, "```json\n{\"approved\":", `<think>`, `{"a":[{"b":"c`, `[1,2`, `{"x":"\u12`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := parse.Decode(in, verdict())
		if err == nil {
			require.NoError(t, verdict().ValidateJSON(got.JSON))
		}
	})
}

// TestEveryPrefixIsRepairedOrRejected cuts a real answer at every byte: the
// result is an error, or the prefix itself plus nothing but closing quotes
// and brackets (never a guessed value).
func TestEveryPrefixIsRepairedOrRejected(t *testing.T) {
	doc := `{"text": "90 degrees", "n": 12, "ok": true, "sources": [{"url": "https://x.org/a\"b", "tags": ["a", "é"]}, {}], "z": null}`
	repaired := 0
	for i := 1; i < len(doc); i++ {
		prefix := doc[:i]
		got, err := parse.Extract(prefix)
		if err != nil {
			require.True(t, errors.Is(err, parse.ErrTruncated) || errors.Is(err, parse.ErrNoJSON) || errors.Is(err, schema.ErrInvalidJSON), "%q: %v", prefix, err)
			continue
		}
		require.True(t, got.Repaired, prefix)
		require.Equal(t, strings.TrimRight(prefix, " "), strings.TrimSuffix(string(got.JSON), got.Appended), "%q", prefix)
		require.Empty(t, strings.Trim(got.Appended, `"]}`), "%q appended %q", prefix, got.Appended)
		repaired++
	}
	require.Greater(t, repaired, 10)
}
