package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed text
var textFiles embed.FS

// Errors Get and Lookup return, for errors.Is.
var (
	ErrUnknownPrompt  = errors.New("prompts: unknown prompt")
	ErrUnknownVersion = errors.New("prompts: unknown prompt version")
)

var (
	promptName    = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	promptVersion = regexp.MustCompile(`^v([1-9][0-9]{0,5})$`)
)

// Registry is an immutable set of prompt versions.
type Registry struct {
	// byName holds each prompt's versions in ascending order.
	byName map[string][]Prompt
}

var (
	defaultOnce     sync.Once
	defaultRegistry *Registry
	defaultErr      error
)

// Default is the registry of the embedded prompt files. It panics if they
// are malformed, which the package's tests rule out.
func Default() *Registry {
	defaultOnce.Do(func() {
		sub, err := fs.Sub(textFiles, "text")
		if err != nil {
			defaultErr = err
			return
		}
		defaultRegistry, defaultErr = Load(sub)
	})
	if defaultErr != nil {
		panic(fmt.Sprintf("prompts: embedded prompt files: %v", defaultErr))
	}
	return defaultRegistry
}

// Load reads every <name>/<version>.md of fsys and checks that each is valid
// UTF-8 and a template whose variables can be listed. Anything else in fsys
// is an error, so a misnamed file cannot go unnoticed.
func Load(fsys fs.FS) (*Registry, error) {
	r := &Registry{byName: map[string][]Prompt{}}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.Contains(p, "/") {
				return fmt.Errorf("%s: prompt directories must be text/<name>/ with no subdirectories", p)
			}
			return nil
		}
		prompt, err := readPrompt(fsys, p)
		if err != nil {
			return err
		}
		r.byName[prompt.Name] = append(r.byName[prompt.Name], prompt)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load prompts: %w", err)
	}
	if len(r.byName) == 0 {
		return nil, errors.New("load prompts: no prompt files")
	}
	for name := range r.byName {
		sort.Slice(r.byName[name], func(i, j int) bool {
			return versionNumber(r.byName[name][i].Version) < versionNumber(r.byName[name][j].Version)
		})
	}
	return r, nil
}

// readPrompt reads and checks the prompt file at p ("<name>/<version>.md").
func readPrompt(fsys fs.FS, p string) (Prompt, error) {
	dir, file := path.Split(p)
	name := strings.TrimSuffix(dir, "/")
	version, ok := strings.CutSuffix(file, ".md")
	switch {
	case !ok || name == "":
		return Prompt{}, fmt.Errorf("%s: prompt files must be <name>/<version>.md", p)
	case !promptName.MatchString(name):
		return Prompt{}, fmt.Errorf("%s: prompt name %q must be lowercase words joined by hyphens", p, name)
	case !promptVersion.MatchString(version):
		return Prompt{}, fmt.Errorf("%s: version %q must be v1, v2, ... without leading zeros", p, version)
	}
	body, err := fs.ReadFile(fsys, p)
	if err != nil {
		return Prompt{}, err
	}
	if !utf8.Valid(body) {
		return Prompt{}, fmt.Errorf("%s: not valid UTF-8", p)
	}
	if strings.TrimSpace(string(body)) == "" {
		return Prompt{}, fmt.Errorf("%s: empty prompt", p)
	}
	sum := sha256.Sum256(body)
	prompt := Prompt{Name: name, Version: version, SHA256: hex.EncodeToString(sum[:]), Text: string(body)}
	if _, err := prompt.Variables(); err != nil {
		return Prompt{}, fmt.Errorf("%s: %w", p, err)
	}
	return prompt, nil
}

// versionNumber is N of "vN"; callers pass validated versions.
func versionNumber(v string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(v, "v"))
	return n
}

// Get returns the current (highest) version of the named prompt.
func (r *Registry) Get(name string) (Prompt, error) {
	versions := r.byName[name]
	if len(versions) == 0 {
		return Prompt{}, fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
	}
	return versions[len(versions)-1], nil
}

// Lookup returns one version of the named prompt, current or not: audits
// and replays of old investigations resolve the version they recorded.
func (r *Registry) Lookup(name, version string) (Prompt, error) {
	versions := r.byName[name]
	if len(versions) == 0 {
		return Prompt{}, fmt.Errorf("%w: %q", ErrUnknownPrompt, name)
	}
	for _, p := range versions {
		if p.Version == version {
			return p, nil
		}
	}
	return Prompt{}, fmt.Errorf("%w: %s@%s", ErrUnknownVersion, name, version)
}

// Versions lists every version of the named prompt, oldest first; nil for
// an unknown name.
func (r *Registry) Versions(name string) []Prompt {
	return append([]Prompt(nil), r.byName[name]...)
}

// Names lists the prompt names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All lists every version of every prompt, by name then version.
func (r *Registry) All() []Prompt {
	var all []Prompt
	for _, n := range r.Names() {
		all = append(all, r.byName[n]...)
	}
	return all
}
