package content

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/fixtures"
)

// fixtureDir locates shared/fixtures/openerrata.
func fixtureDir(t testing.TB) string { return fixtures.Dir(t) }

func readFixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(t), name))
	require.NoError(t, err)
	return string(b)
}

func readJSONFixture(t testing.TB, name string, into any) {
	t.Helper()
	require.NoError(t, json.Unmarshal([]byte(readFixture(t, name)), into))
}

// hashVectors mirrors normalization-and-hash-vectors.json.
type hashVectors struct {
	GeneratedWith              string `json:"generatedWith"`
	EmptyOccurrencesSerialized string `json:"emptyOccurrencesSerialized"`
	EmptyOccurrencesHash       string `json:"emptyOccurrencesHash"`
	Normalization              []struct {
		Input        string `json:"input"`
		Output       string `json:"output"`
		OutputSha256 string `json:"outputSha256"`
		WordCount    int    `json:"wordCount"`
	} `json:"normalization"`
	HTML []struct {
		Platform          string             `json:"platform"`
		Input             string             `json:"input"`
		NormalizedText    string             `json:"normalizedText"`
		Markdown          string             `json:"markdown"`
		ImagePlaceholders []ImagePlaceholder `json:"imagePlaceholders"`
	} `json:"html"`
	Version []struct {
		ContentText           string            `json:"contentText"`
		ImageOccurrences      []ImageOccurrence `json:"imageOccurrences"`
		ContentHash           string            `json:"contentHash"`
		OccurrencesSerialized string            `json:"occurrencesSerialized"`
		OccurrencesHash       string            `json:"occurrencesHash"`
		VersionHashSeed       string            `json:"versionHashSeed"`
		VersionHash           string            `json:"versionHash"`
		WordCount             int               `json:"wordCount"`
		UTF16Length           int               `json:"utf16Length"`
	} `json:"version"`
	SerializeObservedVersionIdentityExample string `json:"serializeObservedVersionIdentityExample"`
}

// goldenFixture mirrors one entry of golden.json.
type goldenFixture struct {
	Fixture                 string                `json:"fixture"`
	Platform                string                `json:"platform"`
	SourceURL               string                `json:"sourceUrl"`
	ExternalID              string                `json:"externalId"`
	PageID                  string                `json:"pageId"`
	RevisionID              string                `json:"revisionId"`
	InputField              string                `json:"inputField"`
	InputSha256             string                `json:"inputSha256"`
	NormalizedTextFile      string                `json:"normalizedTextFile"`
	MarkdownFile            string                `json:"markdownFile"`
	MarkdownRendererVersion string                `json:"markdownRendererVersion"`
	ImagePlaceholders       []ImagePlaceholder    `json:"imagePlaceholders"`
	ImagePlaceholderCount   *int                  `json:"imagePlaceholderCount"`
	URLIdentity             *WikipediaURLIdentity `json:"urlIdentity"`
	ContentHash             string                `json:"contentHash"`
	OccurrencesSerialized   string                `json:"occurrencesSerialized"`
	OccurrencesHash         string                `json:"occurrencesHash"`
	VersionHashSeed         string                `json:"versionHashSeed"`
	VersionHash             string                `json:"versionHash"`
	WordCount               int                   `json:"wordCount"`
	UTF16Length             int                   `json:"utf16Length"`
}

// pageFixture holds the fields of a saved page fixture that golden.json
// refers to.
type pageFixture struct {
	Key          string `json:"key"`
	ExternalID   string `json:"externalId"`
	SourceURL    string `json:"sourceUrl"`
	Language     string `json:"language"`
	PageID       string `json:"pageId"`
	RevisionID   string `json:"revisionId"`
	HTML         string `json:"html"`
	ParseAPIHTML string `json:"parseApiHtml"`
}

func (p pageFixture) field(name string) string {
	switch name {
	case "html":
		return p.HTML
	case "parseApiHtml":
		return p.ParseAPIHTML
	}
	return ""
}

var (
	pageCacheMu sync.Mutex
	pageCache   = map[string]pageFixture{}
)

// loadPage reads a page fixture once per test binary; the Wikipedia ones are
// megabytes of JSON.
func loadPage(t testing.TB, name string) pageFixture {
	t.Helper()
	pageCacheMu.Lock()
	defer pageCacheMu.Unlock()
	if p, ok := pageCache[name]; ok {
		return p
	}
	var p pageFixture
	readJSONFixture(t, name, &p)
	pageCache[name] = p
	return p
}
