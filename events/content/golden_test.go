package content

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenFixtures checks every field of golden.json against real saved
// LessWrong and Wikipedia pages.
func TestGoldenFixtures(t *testing.T) {
	t.Parallel()
	var fixtures []goldenFixture
	readJSONFixture(t, "golden.json", &fixtures)
	require.Len(t, fixtures, 3)

	for _, g := range fixtures {
		t.Run(g.Fixture, func(t *testing.T) {
			t.Parallel()
			page := loadPage(t, g.Fixture)
			input := page.field(g.InputField)
			require.NotEmpty(t, input, "input field %q", g.InputField)
			require.Equal(t, g.InputSha256, sha256Hex(input), "inputSha256")
			if g.ExternalID != "" && page.ExternalID != "" {
				require.Equal(t, g.ExternalID, page.ExternalID, "externalId")
			}

			var (
				text string
				md   Markdown
				err  error
			)
			switch g.Platform {
			case "LESSWRONG":
				text, err = LessWrongHTMLToText(input)
				require.NoError(t, err)
				md, err = LessWrongHTMLToMarkdown(input)
				require.NoError(t, err)
			case "WIKIPEDIA":
				text, err = WikipediaHTMLToText(input)
				require.NoError(t, err)
				md, err = WikipediaHTMLToMarkdown(input)
				require.NoError(t, err)
			default:
				t.Fatalf("unexpected platform %q", g.Platform)
			}

			requireSameText(t, readFixture(t, g.NormalizedTextFile), text, "normalizedTextFile")
			require.Equal(t, g.ContentHash, ContentHash(text), "contentHash")
			require.Equal(t, g.WordCount, WordCount(text), "wordCount")
			require.Equal(t, g.UTF16Length, UTF16Length(text), "utf16Length")

			id, err := ComputeVersionIdentity(text, nil)
			require.NoError(t, err)
			require.Equal(t, g.ContentHash, id.ContentHash, "contentHash")
			require.Equal(t, g.OccurrencesSerialized, id.OccurrencesSerialized, "occurrencesSerialized")
			require.Equal(t, g.OccurrencesHash, id.OccurrencesHash, "occurrencesHash")
			require.Equal(t, g.VersionHashSeed, VersionHashSeed(id.ContentHash, id.OccurrencesHash), "versionHashSeed")
			require.Equal(t, g.VersionHash, id.VersionHash, "versionHash")

			requireSameText(t, readFixture(t, g.MarkdownFile), md.Text, "markdownFile")
			require.Equal(t, g.MarkdownRendererVersion, MarkdownRendererVersion, "markdownRendererVersion")
			require.Equal(t, g.MarkdownRendererVersion, md.RendererVersion, "markdownRendererVersion")
			if g.ImagePlaceholders != nil {
				require.Equal(t, g.ImagePlaceholders, md.ImagePlaceholders, "imagePlaceholders")
			}
			if g.ImagePlaceholderCount != nil {
				require.Len(t, md.ImagePlaceholders, *g.ImagePlaceholderCount, "imagePlaceholderCount")
			}
			for i, p := range md.ImagePlaceholders {
				require.Equal(t, i, p.Index)
				require.Equal(t, MatchBySourceURL, p.MatchBy)
				require.True(t, strings.Contains(md.Text, "[IMAGE:"+itoa(i)+"]"), "placeholder %d missing", i)
			}

			if g.Platform == "WIKIPEDIA" {
				require.Equal(t, g.PageID, page.PageID, "pageId")
				require.Equal(t, g.RevisionID, page.RevisionID, "revisionId")
				require.Equal(t, g.SourceURL, page.SourceURL, "sourceUrl")
				require.Equal(t, g.ExternalID, WikipediaExternalID(page.Language, page.PageID), "externalId")
				require.NotNil(t, g.URLIdentity)
				identity, err := ParseWikipediaURL(g.SourceURL)
				require.NoError(t, err)
				require.Equal(t, *g.URLIdentity, identity, "urlIdentity")
			}
		})
	}
}
