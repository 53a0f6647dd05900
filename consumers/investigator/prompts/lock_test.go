package prompts

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateLock = flag.Bool("update-lock", false, "append new prompt versions to versions.lock (existing lines are never rewritten)")

const lockPath = "versions.lock"

// lockEntry is one line of versions.lock: "name version sha256".
type lockEntry struct {
	Name, Version, SHA256 string
	Line                  int
}

var lockSHA = regexp.MustCompile(`^[0-9a-f]{64}$`)

// parseLock reads versions.lock; blank lines and lines starting with # are
// ignored.
func parseLock(data []byte) ([]lockEntry, error) {
	var entries []lockEntry
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || !promptName.MatchString(f[0]) || !promptVersion.MatchString(f[1]) || !lockSHA.MatchString(f[2]) {
			return nil, fmt.Errorf("%s:%d: want \"<name> v<N> <sha256 hex>\", got %q", lockPath, n, line)
		}
		key := f[0] + " " + f[1]
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s is already locked on line %d", lockPath, n, key, prev)
		}
		seen[key] = n
		entries = append(entries, lockEntry{Name: f[0], Version: f[1], SHA256: f[2], Line: n})
	}
	return entries, sc.Err()
}

// checkLock compares the registered prompts with the lock. It returns the
// prompt versions the lock does not know yet, and an error for every locked
// version whose text changed or whose file is gone.
func checkLock(entries []lockEntry, all []Prompt) (missing []Prompt, err error) {
	byKey := map[string]Prompt{}
	for _, p := range all {
		byKey[p.Name+" "+p.Version] = p
	}
	var errs []error
	locked := map[string]bool{}
	for _, e := range entries {
		key := e.Name + " " + e.Version
		locked[key] = true
		p, ok := byKey[key]
		if !ok {
			errs = append(errs, fmt.Errorf(
				"prompt %s %s is locked (%s:%d) but text/%s/%s.md is gone: old versions are kept forever for audit; restore the file",
				e.Name, e.Version, lockPath, e.Line, e.Name, e.Version))
			continue
		}
		if p.SHA256 != e.SHA256 {
			errs = append(errs, fmt.Errorf(
				"prompt %s %s changed without a version bump: %s:%d locks sha256 %s but text/%s/%s.md now hashes to %s. "+
					"Released prompt text never changes: restore text/%s/%s.md, then bump the version and add a new file "+
					"(text/%s/v%d.md); old versions are kept forever for audit",
				e.Name, e.Version, lockPath, e.Line, e.SHA256, e.Name, e.Version, p.SHA256,
				e.Name, e.Version, e.Name, nextVersion(all, e.Name)))
		}
	}
	for _, p := range all {
		if !locked[p.Name+" "+p.Version] {
			missing = append(missing, p)
		}
	}
	return missing, errors.Join(errs...)
}

func nextVersion(all []Prompt, name string) int {
	highest := 0
	for _, p := range all {
		if p.Name == name {
			highest = max(highest, versionNumber(p.Version))
		}
	}
	return highest + 1
}

// appendLock adds lines for missing to data, leaving every existing byte as
// it is.
func appendLock(data []byte, missing []Prompt) []byte {
	out := append([]byte(nil), data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	for _, p := range missing {
		out = append(out, fmt.Sprintf("%s %s %s\n", p.Name, p.Version, p.SHA256)...)
	}
	return out
}

// TestPromptLock fails when an embedded prompt's text differs from the
// sha256 versions.lock records for its version, when a locked version is
// gone, or when a version is not locked yet (-update-lock appends those).
func TestPromptLock(t *testing.T) {
	data, err := os.ReadFile(lockPath)
	require.NoError(t, err)
	entries, err := parseLock(data)
	require.NoError(t, err)
	missing, err := checkLock(entries, Default().All())
	require.NoError(t, err, "versions.lock")
	if len(missing) == 0 {
		return
	}
	if !*updateLock {
		var names []string
		for _, p := range missing {
			names = append(names, fmt.Sprintf("%s %s (sha256 %s)", p.Name, p.Version, p.SHA256))
		}
		t.Fatalf("prompt versions not in %s: %s\nlock them with: go test ./consumers/investigator/prompts -run TestPromptLock -update-lock",
			lockPath, strings.Join(names, ", "))
	}
	require.NoError(t, os.WriteFile(lockPath, appendLock(data, missing), 0o644))
	for _, p := range missing {
		t.Logf("locked %s %s %s", p.Name, p.Version, p.SHA256)
	}
}

func TestCheckLock(t *testing.T) {
	v1 := Prompt{Name: "demo", Version: "v1", SHA256: strings.Repeat("a", 64)}
	v2 := Prompt{Name: "demo", Version: "v2", SHA256: strings.Repeat("b", 64)}
	lockV1 := lockEntry{Name: "demo", Version: "v1", SHA256: v1.SHA256, Line: 3}
	tests := []struct {
		name        string
		entries     []lockEntry
		prompts     []Prompt
		wantMissing []Prompt
		wantErr     []string
	}{
		{name: "all locked", entries: []lockEntry{lockV1}, prompts: []Prompt{v1}},
		{name: "new version is missing, not an error", entries: []lockEntry{lockV1}, prompts: []Prompt{v1, v2}, wantMissing: []Prompt{v2}},
		{
			name:    "changed text with the same version",
			entries: []lockEntry{lockV1},
			prompts: []Prompt{{Name: "demo", Version: "v1", SHA256: strings.Repeat("c", 64)}},
			wantErr: []string{
				"prompt demo v1 changed without a version bump",
				"bump the version and add a new file (text/demo/v2.md); old versions are kept forever for audit",
			},
		},
		{
			name:        "locked version removed",
			entries:     []lockEntry{lockV1},
			prompts:     []Prompt{v2},
			wantMissing: []Prompt{v2},
			wantErr:     []string{"text/demo/v1.md is gone: old versions are kept forever for audit"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			missing, err := checkLock(tt.entries, tt.prompts)
			require.Equal(t, tt.wantMissing, missing)
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, want := range tt.wantErr {
				require.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestParseLock(t *testing.T) {
	sha := strings.Repeat("0", 64)
	tests := []struct {
		name    string
		data    string
		want    []lockEntry
		wantErr string
	}{
		{name: "comments and blanks", data: "# header\n\ndemo v1 " + sha + "\n", want: []lockEntry{{Name: "demo", Version: "v1", SHA256: sha, Line: 3}}},
		{name: "too few fields", data: "demo v1\n", wantErr: "want"},
		{name: "bad version", data: "demo 1 " + sha + "\n", wantErr: "want"},
		{name: "uppercase sha", data: "demo v1 " + strings.Repeat("A", 64) + "\n", wantErr: "want"},
		{name: "duplicate", data: "demo v1 " + sha + "\ndemo v1 " + sha + "\n", wantErr: "already locked on line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLock([]byte(tt.data))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestAppendLockOnlyAdds(t *testing.T) {
	existing := []byte("# keep me\ndemo v1 " + strings.Repeat("a", 64)) // no trailing newline
	out := appendLock(existing, []Prompt{{Name: "demo", Version: "v2", SHA256: strings.Repeat("b", 64)}})
	require.True(t, bytes.HasPrefix(out, existing), "existing bytes must stay as they are")
	require.Equal(t, string(existing)+"\ndemo v2 "+strings.Repeat("b", 64)+"\n", string(out))
	entries, err := parseLock(out)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}
