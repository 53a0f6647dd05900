package textdiff

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestDiffLines(t *testing.T) {
	tests := []struct {
		name        string
		old, new    string
		wantChanged bool
		want        []Line
	}{
		{
			name: "both empty",
		},
		{
			name: "identical", old: "Ann ran. Bo sat.", new: "Ann ran. Bo sat.",
			want: []Line{{Equal, "Ann ran."}, {Equal, "Bo sat."}},
		},
		{
			name: "whitespace only", old: "Ann  ran. Bo sat.", new: "Ann ran.\tBo sat.\n\n",
			want: []Line{{Equal, "Ann ran."}, {Equal, "Bo sat."}},
		},
		{
			name: "replaced sentence", old: "One. Two. Three.", new: "One. Deux. Three.", wantChanged: true,
			want: []Line{{Equal, "One."}, {Delete, "Two."}, {Insert, "Deux."}, {Equal, "Three."}},
		},
		{
			name: "new paragraph", old: "One.", new: "One.\nTwo.", wantChanged: true,
			want: []Line{{Equal, "One."}, {Insert, ""}, {Insert, "Two."}},
		},
		{
			name: "paragraph merged is not a change", old: "One.\n\nTwo.", new: "One. Two.",
			want: []Line{{Equal, "One."}, {Delete, ""}, {Equal, "Two."}},
		},
		{
			name: "deleted everything", old: "One. Two.", new: "", wantChanged: true,
			want: []Line{{Delete, "One."}, {Delete, "Two."}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(tc.old, tc.new, Options{})
			require.Equal(t, tc.wantChanged, got.Changed)
			require.Equal(t, tc.want, got.Lines)
		})
	}
}

func TestFormatContext(t *testing.T) {
	old := "S1. S2. S3. S4. S5. S6. S7. S8. S9."
	tests := []struct {
		name    string
		new     string
		context int
		want    string
	}{
		{
			name: "default context", new: "S1. S2. S3. S4. X5. S6. S7. S8. S9.",
			want: "  …\n  S3.\n  S4.\n- S5.\n+ X5.\n  S6.\n  S7.\n  …",
		},
		{
			name: "context one", new: "S1. S2. S3. S4. X5. S6. S7. S8. S9.", context: 1,
			want: "  …\n  S4.\n- S5.\n+ X5.\n  S6.\n  …",
		},
		{
			name: "no context", new: "S1. S2. S3. S4. X5. S6. S7. S8. S9.", context: -1,
			want: "  …\n- S5.\n+ X5.\n  …",
		},
		{
			name: "short gap kept whole", new: "S1. S2. X3. S4. S5. S6. X7. S8. S9.",
			want: "  S1.\n  S2.\n- S3.\n+ X3.\n  S4.\n  S5.\n  S6.\n- S7.\n+ X7.\n  S8.\n  S9.",
		},
		{
			name: "long gap elided", new: "X1. S2. S3. S4. S5. S6. S7. S8. X9.",
			want: "- S1.\n+ X1.\n  S2.\n  S3.\n  …\n  S7.\n  S8.\n- S9.\n+ X9.",
		},
		{
			name: "change at the end", new: "S1. S2. S3. S4. S5. S6. S7. S8. S9. S10.",
			want: "  …\n  S8.\n  S9.\n+ S10.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Diff(old, tc.new, Options{Context: tc.context}).Format())
		})
	}
}

func TestFormatNoChanges(t *testing.T) {
	require.Equal(t, NoChanges, Diff("", "", Options{}).Format())
	require.Equal(t, NoChanges, Diff("One.\nTwo.", "One. Two.", Options{}).Format())
}

// TestGolden diffs each testdata/cases/<name>.old.txt against
// <name>.new.txt and compares Format's output with <name>.golden.
func TestGolden(t *testing.T) {
	olds, err := filepath.Glob(filepath.Join("testdata", "cases", "*.old.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, olds)
	for _, oldPath := range olds {
		name := strings.TrimSuffix(filepath.Base(oldPath), ".old.txt")
		t.Run(name, func(t *testing.T) {
			oldText := readFile(t, oldPath)
			newText := readFile(t, filepath.Join("testdata", "cases", name+".new.txt"))
			got := Diff(oldText, newText, Options{}).Format() + "\n"
			golden := filepath.Join("testdata", "cases", name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			require.Equal(t, readFile(t, golden), got)
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// sentenceText builds n paragraphs of sentences drawn from a vocabulary
// determined by seed, so two texts with different seeds share nothing.
func sentenceText(paragraphs, perParagraph int, seed string) string {
	var b strings.Builder
	for p := range paragraphs {
		for s := range perParagraph {
			fmt.Fprintf(&b, "Sentence %s %d %d is here. ", seed, p, s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestWorstCaseIsFast: two unrelated texts of 3,000 sentences each, the
// worst case for Myers (D = N + M), stay well under a second.
func TestWorstCaseIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	oldText := sentenceText(300, 10, "a")
	newText := sentenceText(300, 10, "b")
	start := time.Now()
	res := Diff(oldText, newText, Options{})
	require.Less(t, time.Since(start), 2*time.Second)
	require.True(t, res.Changed)
	// Every sentence is deleted or inserted; the paragraph breaks match.
	require.Equal(t, 2*3000+299, len(res.Lines))
}

func BenchmarkDiff(b *testing.B) {
	similarOld := sentenceText(300, 10, "a")
	similarNew := strings.Replace(similarOld, "Sentence a 150 5 is here.", "A changed sentence.", 1)
	similarNew = strings.Replace(similarNew, "Sentence a 10 1 is here.", "", 1)
	cases := []struct {
		name     string
		old, new string
	}{
		{"similar-3000", similarOld, similarNew},
		{"unrelated-3000", similarOld, sentenceText(300, 10, "b")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = Diff(c.old, c.new, Options{}).Format()
			}
		})
	}
}
