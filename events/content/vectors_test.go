package content

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func loadHashVectors(t testing.TB) hashVectors {
	t.Helper()
	var v hashVectors
	readJSONFixture(t, "normalization-and-hash-vectors.json", &v)
	require.NotEmpty(t, v.Normalization)
	require.NotEmpty(t, v.HTML)
	require.NotEmpty(t, v.Version)
	return v
}

// TestNormalizationVectors checks output, outputSha256 and wordCount of every
// normalization vector computed by the reference.
func TestNormalizationVectors(t *testing.T) {
	t.Parallel()
	v := loadHashVectors(t)
	for _, tc := range v.Normalization {
		t.Run(tc.Input, func(t *testing.T) {
			got := Normalize(tc.Input)
			require.Equal(t, tc.Output, got, "output")
			require.Equal(t, tc.OutputSha256, ContentHash(got), "outputSha256")
			require.Equal(t, tc.WordCount, WordCount(got), "wordCount")
		})
	}
}

// TestHTMLVectors checks normalizedText, markdown and imagePlaceholders of
// every HTML vector, on the platform path the vector names.
func TestHTMLVectors(t *testing.T) {
	t.Parallel()
	v := loadHashVectors(t)
	for _, tc := range v.HTML {
		t.Run(tc.Platform+"/"+tc.Input, func(t *testing.T) {
			var (
				text string
				md   Markdown
				err  error
			)
			switch tc.Platform {
			case "LESSWRONG":
				text, err = LessWrongHTMLToText(tc.Input)
				require.NoError(t, err)
				md, err = LessWrongHTMLToMarkdown(tc.Input)
			case "WIKIPEDIA":
				text, err = WikipediaHTMLToText(tc.Input)
				require.NoError(t, err)
				md, err = WikipediaHTMLToMarkdown(tc.Input)
			default:
				t.Fatalf("unexpected platform %q", tc.Platform)
			}
			require.NoError(t, err)
			require.Equal(t, tc.NormalizedText, text, "normalizedText")
			require.Equal(t, tc.Markdown, md.Text, "markdown")
			require.Equal(t, tc.ImagePlaceholders, md.ImagePlaceholders, "imagePlaceholders")
			require.Equal(t, MarkdownRendererVersion, md.RendererVersion)
		})
	}
}

// TestVersionVectors checks every field of the version identity vectors.
func TestVersionVectors(t *testing.T) {
	t.Parallel()
	v := loadHashVectors(t)
	require.Equal(t, "[]", v.EmptyOccurrencesSerialized)
	require.Equal(t, v.EmptyOccurrencesHash, EmptyOccurrencesHash)
	empty, err := SerializeOccurrences(nil, "")
	require.NoError(t, err)
	require.Equal(t, v.EmptyOccurrencesSerialized, empty, "emptyOccurrencesSerialized")
	emptyHash, err := OccurrencesHash([]ImageOccurrence{}, "text")
	require.NoError(t, err)
	require.Equal(t, v.EmptyOccurrencesHash, emptyHash, "emptyOccurrencesHash")

	for _, tc := range v.Version {
		t.Run(tc.ContentText, func(t *testing.T) {
			require.Equal(t, tc.ContentHash, ContentHash(tc.ContentText), "contentHash")
			serialized, err := SerializeOccurrences(tc.ImageOccurrences, tc.ContentText)
			require.NoError(t, err)
			require.Equal(t, tc.OccurrencesSerialized, serialized, "occurrencesSerialized")
			hash, err := OccurrencesHash(tc.ImageOccurrences, tc.ContentText)
			require.NoError(t, err)
			require.Equal(t, tc.OccurrencesHash, hash, "occurrencesHash")
			require.Equal(t, tc.VersionHashSeed, VersionHashSeed(tc.ContentHash, tc.OccurrencesHash), "versionHashSeed")
			require.Equal(t, tc.VersionHash, VersionHash(tc.ContentHash, tc.OccurrencesHash), "versionHash")
			require.Equal(t, tc.WordCount, WordCount(tc.ContentText), "wordCount")
			require.Equal(t, tc.UTF16Length, UTF16Length(tc.ContentText), "utf16Length")

			id, err := ComputeVersionIdentity(tc.ContentText, tc.ImageOccurrences)
			require.NoError(t, err)
			require.Equal(t, VersionIdentity{
				ContentHash:           tc.ContentHash,
				OccurrencesSerialized: tc.OccurrencesSerialized,
				OccurrencesHash:       tc.OccurrencesHash,
				VersionHash:           tc.VersionHash,
			}, id)
		})
	}
}

// TestSerializeObservedVersionIdentityExample checks the reference's
// observed-identity serialization against the one example it ships, built
// from the version vector with the same text.
func TestSerializeObservedVersionIdentityExample(t *testing.T) {
	t.Parallel()
	v := loadHashVectors(t)
	found := false
	for _, tc := range v.Version {
		if !strings.Contains(v.SerializeObservedVersionIdentityExample, `"contentText":"`+tc.ContentText+`"`) {
			continue
		}
		found = true
		got, err := SerializeObservedVersionIdentity(tc.ContentText, tc.ImageOccurrences)
		require.NoError(t, err)
		require.Equal(t, v.SerializeObservedVersionIdentityExample, got)
	}
	require.True(t, found, "no version vector matches the example")
}
