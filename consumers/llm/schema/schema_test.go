package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm/schema"
)

func sample() *schema.Schema {
	return schema.Obj("A sample.",
		schema.Prop("name", schema.Str("A name.")),
		schema.Prop("ok", schema.Bool("A flag.")),
		schema.Prop("count", schema.Int("A count.")),
		schema.Prop("kind", schema.Enum("A kind.", "a", "b")),
		schema.Prop("links", schema.Arr("Links.", schema.Obj("A link.",
			schema.Prop("url", schema.URI("An address.")),
		), 1)),
	)
}

func TestMarshalKeepsDeclarationOrder(t *testing.T) {
	raw, err := json.Marshal(sample())
	require.NoError(t, err)
	require.Equal(t, `{"type":"object","description":"A sample.","properties":{`+
		`"name":{"type":"string","description":"A name."},`+
		`"ok":{"type":"boolean","description":"A flag."},`+
		`"count":{"type":"integer","description":"A count."},`+
		`"kind":{"type":"string","description":"A kind.","enum":["a","b"]},`+
		`"links":{"type":"array","description":"Links.","items":{"type":"object","description":"A link.","properties":{"url":{"type":"string","description":"An address.","format":"uri"}},"required":["url"],"additionalProperties":false},"minItems":1}},`+
		`"required":["name","ok","count","kind","links"],"additionalProperties":false}`, string(raw))

	// Map keeps the order of properties when marshaled again.
	m, err := json.Marshal(sample().Map())
	require.NoError(t, err)
	require.Less(t, strings.Index(string(m), `"name"`), strings.Index(string(m), `"links"`))
	require.JSONEq(t, string(raw), string(m))
}

func TestCheckStrict(t *testing.T) {
	require.NoError(t, sample().CheckStrict())

	open := sample()
	open.AllowAdditional = true
	require.ErrorContains(t, open.CheckStrict(), "additionalProperties")

	optional := sample()
	optional.Required = optional.Required[1:]
	require.ErrorContains(t, optional.CheckStrict(), `"name" must be required`)

	nested := sample()
	nested.Property("links").Items.Required = nil
	require.ErrorContains(t, nested.CheckStrict(), `$.links[]: property "url" must be required`)

	noItems := schema.Obj("", schema.Prop("a", &schema.Schema{Type: schema.Array}))
	require.ErrorContains(t, noItems.CheckStrict(), "items")

	badFormat := schema.Obj("", schema.Prop("a", &schema.Schema{Type: schema.String, Format: "email"}))
	require.ErrorContains(t, badFormat.CheckStrict(), "format")

	dup := schema.Obj("", schema.Prop("a", schema.Str("")), schema.Prop("a", schema.Str("")))
	require.ErrorContains(t, dup.CheckStrict(), "duplicate")
}

func TestCloneIsDeep(t *testing.T) {
	a := sample()
	b := a.Clone()
	b.Property("links").Items.Property("url").Description = "changed"
	*b.Property("links").MinItems = 5
	require.Equal(t, "An address.", a.Property("links").Items.Property("url").Description)
	require.Equal(t, 1, *a.Property("links").MinItems)
}

var validationCases = []struct {
	name  string
	doc   string
	paths []string // violation paths; empty: valid
}{
	{"valid", `{"name":"x","ok":true,"count":3,"kind":"a","links":[{"url":"https://example.org/a"}]}`, nil},
	{"integer written as float", `{"name":"x","ok":true,"count":3.0,"kind":"a","links":[{"url":"http://example.org"}]}`, nil},
	{"missing required", `{"ok":true,"count":3,"kind":"a","links":[{"url":"https://example.org"}]}`, []string{"$"}},
	{"wrong types", `{"name":1,"ok":"yes","count":1.5,"kind":"a","links":[{"url":"https://example.org"}]}`, []string{"$.count", "$.name", "$.ok"}},
	{"additional property", `{"name":"x","ok":true,"count":3,"kind":"a","links":[{"url":"https://example.org"}],"extra":1}`, []string{"$"}},
	{"nested additional property", `{"name":"x","ok":true,"count":3,"kind":"a","links":[{"url":"https://example.org","t":1}]}`, []string{"$.links[0]"}},
	{"enum", `{"name":"x","ok":true,"count":3,"kind":"c","links":[{"url":"https://example.org"}]}`, []string{"$.kind"}},
	{"min items", `{"name":"x","ok":true,"count":3,"kind":"a","links":[]}`, []string{"$.links"}},
	{"uri not absolute", `{"name":"x","ok":true,"count":3,"kind":"a","links":[{"url":"example.org/a"}]}`, []string{"$.links[0].url"}},
	{"null for a string", `{"name":null,"ok":true,"count":3,"kind":"a","links":[{"url":"https://example.org"}]}`, []string{"$.name"}},
	{"not an object", `[1,2]`, []string{"$"}},
}

func TestValidate(t *testing.T) {
	for _, tc := range validationCases {
		t.Run(tc.name, func(t *testing.T) {
			err := sample().ValidateJSON([]byte(tc.doc))
			if len(tc.paths) == 0 {
				require.NoError(t, err)
				return
			}
			var verr *schema.ValidationError
			require.ErrorAs(t, err, &verr)
			var paths []string
			for _, v := range verr.Violations {
				paths = append(paths, v.Path)
			}
			require.Equal(t, tc.paths, paths, "%v", err)
		})
	}
}

// TestValidatorAgreesWithAReferenceImplementation checks the small
// validator against a full JSON Schema implementation on the same schema
// and documents (only http(s) addresses are used for "uri", where the two
// agree; the small validator is stricter about other schemes on purpose).
func TestValidatorAgreesWithAReferenceImplementation(t *testing.T) {
	raw, err := json.Marshal(sample())
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	require.NoError(t, c.AddResource("mem://sample.json", doc))
	ref, err := c.Compile("mem://sample.json")
	require.NoError(t, err)
	for _, tc := range validationCases {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.doc))
		require.NoError(t, err)
		refErr := ref.Validate(v)
		ourErr := sample().ValidateJSON([]byte(tc.doc))
		require.Equal(t, refErr == nil, ourErr == nil, "%s: reference %v, ours %v", tc.name, refErr, ourErr)
	}
}

func TestDecodeStrict(t *testing.T) {
	for _, doc := range []string{`{"a":1,"a":2}`, `{"a":1} {"b":2}`, `{"a":1,}`, `{"a":`, ``, `{'a':1}`} {
		_, err := schema.DecodeStrict([]byte(doc))
		require.True(t, errors.Is(err, schema.ErrInvalidJSON), "%q: %v", doc, err)
	}
	v, err := schema.DecodeStrict([]byte(` {"a":[1,"x",null,true,{"b":{}}]} `))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"a": []any{json.Number("1"), "x", nil, true, map[string]any{"b": map[string]any{}}}}, v)
}
