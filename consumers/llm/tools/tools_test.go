package tools_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/schema"
	"github.com/errata-dev/errata/consumers/llm/tools"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSchemasAreStrict(t *testing.T) {
	for _, tool := range []llm.Tool{tools.SubmitCorrection(), tools.RetainCorrection(), tools.Verdict()} {
		require.NoError(t, tool.Parameters.CheckStrict(), tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
	}
	require.NoError(t, tools.VerdictSchema().CheckStrict())
}

// TestToolDefinitionsGolden pins the exact schemas and descriptions the
// model sees: a change here is a prompt change (version it).
func TestToolDefinitionsGolden(t *testing.T) {
	type def struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  *schema.Schema `json:"parameters"`
	}
	var defs []def
	for _, tool := range []llm.Tool{tools.SubmitCorrection(), tools.RetainCorrection(), tools.Verdict()} {
		defs = append(defs, def{tool.Name, tool.Description, tool.Parameters})
	}
	got, err := json.MarshalIndent(defs, "", "  ")
	require.NoError(t, err)
	golden(t, "tools.golden.json", append(got, '\n'))
}

func TestDecode(t *testing.T) {
	c, err := tools.DecodeCorrection([]byte(`{"text":"90 degrees","context":"Water boils at 90 degrees at sea level.","summary":"It boils at 100 °C.",
		"reasoning":"Standard reference values.","sources":[{"url":"https://en.wikipedia.org/wiki/Boiling_point","title":"Boiling point","snippet":"100 °C"}]}`))
	require.NoError(t, err)
	require.Equal(t, "90 degrees", c.Text)
	require.Equal(t, "https://en.wikipedia.org/wiki/Boiling_point", c.Sources[0].URL)

	for _, bad := range []string{
		`{"text":"a","context":"b","summary":"c","reasoning":"d","sources":[]}`,
		`{"text":"a","context":"b","summary":"c","reasoning":"d","sources":[{"url":"not a url","title":"t","snippet":"s"}]}`,
		`{"text":"a","context":"b","summary":"c","sources":[{"url":"https://x.org","title":"t","snippet":"s"}]}`,
		`{"text":"a","context":"b","summary":"c","reasoning":"d","sources":[{"url":"https://x.org","title":"t","snippet":"s"}],"confidence":1}`,
	} {
		_, err := tools.DecodeCorrection([]byte(bad))
		var verr *schema.ValidationError
		require.ErrorAs(t, err, &verr, bad)
	}

	r, err := tools.DecodeRetain([]byte(`{"id":"c-1"}`))
	require.NoError(t, err)
	require.Equal(t, "c-1", r.ID)
	_, err = tools.DecodeRetain([]byte(`{"id":1}`))
	require.Error(t, err)

	v, err := tools.DecodeVerdict([]byte(`{"approved":false,"reason":"The source says otherwise."}`))
	require.NoError(t, err)
	require.False(t, v.Approved)
	_, err = tools.DecodeVerdict([]byte(`{"approved":"no","reason":"x"}`))
	require.Error(t, err)
}

func TestFreshValues(t *testing.T) {
	a := tools.SubmitCorrection()
	a.Parameters.Properties[0].Schema.Description = "changed"
	require.NotEqual(t, "changed", tools.SubmitCorrection().Parameters.Properties[0].Schema.Description)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update once to create %s", path)
	require.Equal(t, string(want), string(got))
}
