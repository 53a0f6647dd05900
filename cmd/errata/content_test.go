package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/fixtures"
)

// TestContentNormalizeMatchesGolden runs `errata content normalize` as a user
// would, on every golden fixture, and compares its JSON with the reference.
func TestContentNormalizeMatchesGolden(t *testing.T) {
	t.Parallel()
	dir := fixtures.Dir(t)
	raw, err := os.ReadFile(filepath.Join(dir, "golden.json"))
	require.NoError(t, err)
	var golden []struct {
		Fixture        string `json:"fixture"`
		Platform       string `json:"platform"`
		InputField     string `json:"inputField"`
		NormalizedFile string `json:"normalizedTextFile"`
		ContentHash    string `json:"contentHash"`
		VersionHash    string `json:"versionHash"`
		WordCount      int    `json:"wordCount"`
		UTF16Length    int    `json:"utf16Length"`
	}
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.NotEmpty(t, golden)
	for _, g := range golden {
		t.Run(g.Fixture, func(t *testing.T) {
			fixRaw, err := os.ReadFile(filepath.Join(dir, g.Fixture))
			require.NoError(t, err)
			var fix map[string]any
			require.NoError(t, json.Unmarshal(fixRaw, &fix))
			html, ok := fix[g.InputField].(string)
			require.True(t, ok, "fixture field %s", g.InputField)
			htmlFile := filepath.Join(t.TempDir(), "in.html")
			require.NoError(t, os.WriteFile(htmlFile, []byte(html), 0o644))

			out, err := exec.Command(binary, "content", "normalize", "--platform", g.Platform, "--html-file", htmlFile).Output()
			require.NoError(t, err)
			var got struct {
				NormalizedText string `json:"normalizedText"`
				ContentHash    string `json:"contentHash"`
				VersionHash    string `json:"versionHash"`
				WordCount      int    `json:"wordCount"`
				UTF16Length    int    `json:"utf16Length"`
			}
			require.NoError(t, json.Unmarshal(out, &got))
			want, err := os.ReadFile(filepath.Join(dir, g.NormalizedFile))
			require.NoError(t, err)
			require.Equal(t, string(want), got.NormalizedText)
			require.Equal(t, g.ContentHash, got.ContentHash)
			require.Equal(t, g.VersionHash, got.VersionHash)
			require.Equal(t, g.WordCount, got.WordCount)
			require.Equal(t, g.UTF16Length, got.UTF16Length)
		})
	}
}

func TestContentNormalizeRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"content", "normalize", "--platform", "X"},
		{"content", "normalize", "--platform", "MYSPACE", "--html-file", "/dev/null"},
		{"content", "normalize", "--platform", "X", "--html-file", "/dev/null"},
		{"content", "normalize", "--html-file", "/dev/null"},
	} {
		out, err := exec.Command(binary, args...).CombinedOutput()
		require.Error(t, err, "%v: %s", args, out)
	}
}
