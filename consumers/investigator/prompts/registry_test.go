package prompts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
)

func file(text string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(text)} }

func TestDefaultRegistryHasTheReleasedPrompts(t *testing.T) {
	reg := prompts.Default()
	require.Equal(t, []string{prompts.NameInvestigatorFresh, prompts.NameInvestigatorUpdate, prompts.NameStance, prompts.NameValidator,
		prompts.NameVerdictExtract, prompts.NameVerdictSummary}, reg.Names())
	for _, name := range reg.Names() {
		p, err := reg.Get(name)
		require.NoError(t, err)
		require.Equal(t, name, p.Name)
		sum := sha256.Sum256([]byte(p.Text))
		require.Equal(t, hex.EncodeToString(sum[:]), p.SHA256, "SHA256 is the digest of the stored text")
		vars, err := p.Variables()
		require.NoError(t, err)
		require.Equal(t, []string{prompts.VarCurrentDate, prompts.VarFenceClose, prompts.VarFenceOpen}, vars, name)
	}
}

func TestRegistryVersions(t *testing.T) {
	reg, err := prompts.Load(fstest.MapFS{
		"demo/v1.md":  file("one {{.A}}"),
		"demo/v2.md":  file("two {{.A}} {{.B}}"),
		"demo/v10.md": file("ten {{.A}}"),
		"other/v1.md": file("other"),
	})
	require.NoError(t, err)

	current, err := reg.Get("demo")
	require.NoError(t, err)
	require.Equal(t, "v10", current.Version, "current is the highest version, compared as numbers")
	require.Equal(t, "ten {{.A}}", current.Text)
	require.Equal(t, "demo@v10", current.ID())

	old, err := reg.Lookup("demo", "v2")
	require.NoError(t, err)
	require.Equal(t, "two {{.A}} {{.B}}", old.Text)

	var versions []string
	for _, p := range reg.Versions("demo") {
		versions = append(versions, p.Version)
	}
	require.Equal(t, []string{"v1", "v2", "v10"}, versions)
	require.Len(t, reg.All(), 4)
	require.Nil(t, reg.Versions("nope"))

	_, err = reg.Get("nope")
	require.ErrorIs(t, err, prompts.ErrUnknownPrompt)
	_, err = reg.Lookup("nope", "v1")
	require.ErrorIs(t, err, prompts.ErrUnknownPrompt)
	_, err = reg.Lookup("demo", "v3")
	require.ErrorIs(t, err, prompts.ErrUnknownVersion)
}

func TestLoadRejectsMalformedFiles(t *testing.T) {
	tests := []struct {
		name    string
		fs      fstest.MapFS
		wantErr string
	}{
		{name: "empty", fs: fstest.MapFS{}, wantErr: "no prompt files"},
		{name: "file at the root", fs: fstest.MapFS{"v1.md": file("x")}, wantErr: "must be <name>/<version>.md"},
		{name: "not markdown", fs: fstest.MapFS{"demo/v1.txt": file("x")}, wantErr: "must be <name>/<version>.md"},
		{name: "bad version", fs: fstest.MapFS{"demo/1.md": file("x")}, wantErr: "must be v1, v2"},
		{name: "leading zero", fs: fstest.MapFS{"demo/v01.md": file("x")}, wantErr: "without leading zeros"},
		{name: "bad name", fs: fstest.MapFS{"Demo_Prompt/v1.md": file("x")}, wantErr: "lowercase words"},
		{name: "nested", fs: fstest.MapFS{"demo/old/v1.md": file("x")}, wantErr: "no subdirectories"},
		{name: "blank", fs: fstest.MapFS{"demo/v1.md": file(" \n")}, wantErr: "empty prompt"},
		{name: "invalid utf-8", fs: fstest.MapFS{"demo/v1.md": file("\xff")}, wantErr: "UTF-8"},
		{name: "bad template", fs: fstest.MapFS{"demo/v1.md": file("{{.A")}, wantErr: "parse template"},
		{name: "nested field", fs: fstest.MapFS{"demo/v1.md": file("{{.A.B}}")}, wantErr: "only flat variables"},
		{name: "range", fs: fstest.MapFS{"demo/v1.md": file("{{range .A}}x{{end}}")}, wantErr: "range"},
		{name: "template variable", fs: fstest.MapFS{"demo/v1.md": file("{{$x := .A}}{{$x}}")}, wantErr: "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := prompts.Load(tt.fs)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
