package llm_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testKey looks like a real project key so that shape-based redaction is
// exercised too.
const testKey = "sk-proj-TESTKEY0123456789abcdefghijklmnopqrstuvwxyz"

func creds(f *fakeopenai.Server) llm.Credentials {
	return llm.Credentials{BaseURL: f.URL, APIKey: logging.Secret(testKey)}
}

// pngPixel is a 1x1 PNG.
var pngPixel = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 'I', 'H', 'D', 'R', 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89}

// turn is a representative investigator turn: instructions, a post with
// an image by URL and one by bytes interleaved in the text, the two
// function tools, native web search, reasoning and limits.
func turn() llm.Request {
	return llm.Request{
		Model:        "gpt-5",
		Instructions: "You check posts for factual errors. Report only claims contradicted by concrete evidence.",
		Input: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
			llm.TextPart("Post text:\nWater boils at 90 degrees at sea level."),
			llm.ImageURLPart("https://images.example.org/kettle.jpg"),
			llm.TextPart("The kettle above proves it."),
			llm.ImageDataPart("image/png", pngPixel),
		}}},
		Tools:            []llm.Tool{tools.SubmitCorrection(), tools.RetainCorrection()},
		WebSearch:        &llm.WebSearch{ContextSize: "medium"},
		ReasoningEffort:  "medium",
		ReasoningSummary: "auto",
		MaxOutputTokens:  20000,
		Metadata:         map[string]string{"investigation_id": "inv-1", "attempt": "1"},
	}
}

const correctionArgs = `{"text":"Water boils at 90 degrees at sea level.","context":"Post text: Water boils at 90 degrees at sea level. The kettle above proves it.",` +
	`"summary":"At sea level water boils at about 100 °C, not 90.","reasoning":"Reference tables give 100 °C at 1 atm.",` +
	`"sources":[{"url":"https://en.wikipedia.org/wiki/Boiling_point","title":"Boiling point","snippet":"water boils at 100 °C at sea level"}]}`

// golden compares got (JSON) indented against testdata/name; -update
// rewrites the file. Indenting keeps every byte's order and value.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, got, "", "  "))
	b.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update once to create %s", path)
	require.Equal(t, string(want), b.String(), "%s differs (go test -update rewrites it)", path)
}

// requireKeyOnlyInAuthorization checks a recorded request: the key is the
// bearer token and appears in no other header and not in the body.
func requireKeyOnlyInAuthorization(t *testing.T, r fakeopenai.Request) {
	t.Helper()
	require.Equal(t, "Bearer "+testKey, r.Header.Get("Authorization"))
	for k, vs := range r.Header {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			continue
		}
		for _, v := range vs {
			require.NotContains(t, v, testKey, "header %s", k)
		}
	}
	require.NotContains(t, string(r.Body), testKey)
	require.NotContains(t, r.Path, testKey)
}

// requireNoKey checks every rendering of an error.
func requireNoKey(t *testing.T, err error) {
	t.Helper()
	for _, s := range []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		require.NotContains(t, s, testKey)
		require.NotContains(t, s, strings.TrimPrefix(testKey, "sk-proj-"))
	}
	if e, ok := llm.AsError(err); ok {
		require.NotContains(t, e.Message, testKey)
		require.NotContains(t, e.Code, testKey)
	}
}
