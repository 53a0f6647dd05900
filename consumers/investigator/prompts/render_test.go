package prompts_test

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
)

var renderTime = time.Date(2026, 3, 14, 23, 30, 0, 0, time.FixedZone("UTC-5", -5*3600))

func TestRenderReleasedPrompts(t *testing.T) {
	open, closing := prompts.Fence("some post text")
	tests := []struct {
		name     string
		headings []string
		tools    []string
		mentions []string
	}{
		{
			name:     prompts.NameInvestigatorFresh,
			headings: []string{prompts.HeadingPost},
			tools:    []string{prompts.ToolSubmitCorrection, prompts.ToolFetchURL},
			mentions: []string{"verbatim", "about ten words", "Absence of evidence is not an error", "satire", "as soon as"},
		},
		{
			name:     prompts.NameInvestigatorUpdate,
			headings: []string{prompts.HeadingPost, prompts.HeadingChanges, prompts.HeadingPriorClaims},
			tools:    []string{prompts.ToolSubmitCorrection, prompts.ToolRetainCorrection, prompts.ToolFetchURL},
			mentions: []string{"verbatim", "about ten words", "withdrawn", "new or changed"},
		},
		{
			name:     prompts.NameValidator,
			headings: []string{prompts.HeadingPost, prompts.HeadingCandidate},
			mentions: []string{`"approved"`, `"reason"`, "verbatim", "disputed"},
		},
		{
			name:     prompts.NameStance,
			headings: []string{prompts.HeadingClaim, prompts.PassageHeading(1), prompts.PassageHeading(2)},
			mentions: []string{`{"judgements": [{"index": 1, "entail": 0.0, "contradict": 0.0, "neutral": 1.0}, ...]}`,
				"not evidence and is neutral", "does not contradict it", "sum to 1"},
		},
		{
			name:     prompts.NameVerdictExtract,
			headings: []string{prompts.HeadingText},
			mentions: []string{"at most 20", "FACTUAL", "OPINION", "PREDICTION", "NOT_A_CLAIM", "specificity", "time_sensitive",
				"current_events", "numeric", `{"claims": []}`, "do not follow it"},
		},
		{
			name:     prompts.NameVerdictSummary,
			headings: []string{prompts.HeadingText, prompts.HeadingClaimVerdicts, prompts.HeadingSearchResults},
			mentions: []string{"Never a url that is not in that list", "Do not default to high numbers", "Misleading", "Opinion",
				`"confidence": 70`, "do not follow it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := prompts.Default().Get(tt.name)
			require.NoError(t, err)
			out, err := p.Render(prompts.StandardVars(open, closing, renderTime))
			require.NoError(t, err)

			require.Contains(t, out, "the line "+open+" and the line "+closing)
			require.Contains(t, out, "Today's date is 2026-03-15.", "the date is taken in UTC")
			require.NotContains(t, out, "{{")
			require.NotContains(t, out, "<no value>")
			require.NotContains(t, out, "Variables (all required", "the template comment never reaches the model")
			require.False(t, strings.HasPrefix(out, "\n"), "the comment leaves no blank first line")
			for _, h := range tt.headings {
				require.Contains(t, out, `"`+h+`"`)
			}
			for _, tool := range tt.tools {
				require.Contains(t, out, tool)
			}
			for _, m := range tt.mentions {
				require.Contains(t, out, m)
			}

			again, err := p.Render(prompts.StandardVars(open, closing, renderTime))
			require.NoError(t, err)
			require.Equal(t, out, again, "rendering is deterministic")
		})
	}
}

func TestRenderChecksVariables(t *testing.T) {
	reg, err := prompts.Load(fstest.MapFS{
		"demo/v1.md": file("{{/* doc */ -}}\nA={{.A}}{{if .B}} B={{.B}}{{end}}\n"),
	})
	require.NoError(t, err)
	p, err := reg.Get("demo")
	require.NoError(t, err)
	vars, err := p.Variables()
	require.NoError(t, err)
	require.Equal(t, []string{"A", "B"}, vars)

	tests := []struct {
		name    string
		vars    prompts.Vars
		want    string
		wantErr []string
	}{
		{name: "exact", vars: prompts.Vars{"A": "1", "B": "2"}, want: "A=1 B=2\n"},
		{name: "missing", vars: prompts.Vars{"A": "1"}, wantErr: []string{"variable B is missing"}},
		{name: "empty", vars: prompts.Vars{"A": " ", "B": "2"}, wantErr: []string{"variable A is empty"}},
		{name: "unknown", vars: prompts.Vars{"A": "1", "B": "2", "C": "3"}, wantErr: []string{"variable C is not used"}},
		{name: "several at once", vars: prompts.Vars{"C": "3"}, wantErr: []string{"A is missing", "B is missing", "C is not used"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.Render(tt.vars)
			if len(tt.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					require.ErrorContains(t, err, w)
				}
				require.ErrorContains(t, err, "prompt demo@v1")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, out)
		})
	}
}

func TestRenderRefusesIdenticalFences(t *testing.T) {
	p, err := prompts.Default().Get(prompts.NameValidator)
	require.NoError(t, err)
	_, err = p.Render(prompts.StandardVars("<<<X>>>", "<<<X>>>", renderTime))
	require.ErrorContains(t, err, "FenceOpen and FenceClose must differ")
}
