package bench

import (
	"bytes"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// PathProfile summarises the CPU profile of one measured path of the run:
// the window in which only that path worked (its baseline runs outside it).
type PathProfile struct {
	Path string `json:"path"`
	// CPUSeconds is the process's CPU time sampled in the window.
	CPUSeconds float64 `json:"cpu_seconds"`
	// Functions are the largest costs by function (flat), Packages the
	// same samples grouped by the package of the function they were in.
	Functions []Cost `json:"top_functions"`
	Packages  []Cost `json:"top_packages"`
}

// profilePath runs fn under a CPU profile and records its summary as path.
// When a profile already runs (go test -cpuprofile, a nested load run that
// profiles itself), fn runs unprofiled and nothing is recorded.
func (r *Result) profilePath(path string, fn func() error) error {
	var w windows
	err := w.run(fn)
	r.addProfile(path, &w)
	return err
}

// addProfile records the summary of w's windows as path's.
func (r *Result) addProfile(path string, w *windows) {
	if len(w.profiles) == 0 {
		return
	}
	merged, err := profile.Merge(w.profiles)
	if err != nil {
		return
	}
	if p, ok := summarizePath(merged, path, 3); ok {
		r.Profiles = append(r.Profiles, p)
	}
}

// windows profiles several windows of one path (a phase whose measured
// work alternates with its baseline's, round by round).
type windows struct {
	profiles []*profile.Profile
}

// run runs fn under a CPU profile kept as one of w's windows; when another
// profile runs, fn runs unprofiled.
func (w *windows) run(fn func() error) error {
	var raw bytes.Buffer
	if err := pprof.StartCPUProfile(&raw); err != nil {
		return fn()
	}
	err := fn()
	pprof.StopCPUProfile()
	if p, perr := profile.ParseData(raw.Bytes()); perr == nil && len(p.SampleType) > 0 {
		w.profiles = append(w.profiles, p)
	}
	return err
}

// summarizePath reads a CPU profile into its top n functions and packages
// by flat cost; ok is false for an empty profile.
func summarizePath(p *profile.Profile, path string, n int) (PathProfile, bool) {
	vi := len(p.SampleType) - 1 // cpu nanoseconds
	var total int64
	byFunc, byPkg := map[string]int64{}, map[string]int64{}
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		fn := "(unknown)"
		if len(s.Location) > 0 {
			if lines := s.Location[0].Line; len(lines) > 0 && lines[0].Function != nil {
				fn = lines[0].Function.Name
			}
		}
		byFunc[fn] += v
		byPkg[packageOf(fn)] += v
	}
	if total == 0 {
		return PathProfile{}, false
	}
	return PathProfile{
		Path: path, CPUSeconds: float64(total) / 1e9,
		Functions: topCosts(byFunc, total, n), Packages: topCosts(byPkg, total, n),
	}, true
}

// topCosts is the n largest of costs as shares of total, largest first
// (ties by name, so a summary is stable).
func topCosts(costs map[string]int64, total int64, n int) []Cost {
	out := make([]Cost, 0, len(costs))
	for name, v := range costs {
		out = append(out, Cost{Function: name, Share: float64(v) / float64(total)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].Function < out[j].Function
	})
	return out[:min(n, len(out))]
}

// packageOf is the import path of a symbol as pprof names it:
// "github.com/a/b.(*T).M" is "github.com/a/b", "runtime.mallocgc" is
// "runtime", "encoding/json.(*decodeState).object" is "encoding/json",
// and a gopkg.in-style ".vN" suffix stays in the path.
func packageOf(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	last := fn[slash+1:]
	dot := strings.IndexByte(last, '.')
	if dot < 0 {
		return fn
	}
	if rest := last[dot+1:]; len(rest) > 1 && rest[0] == 'v' {
		if end := strings.IndexByte(rest, '.'); end > 1 && strings.Trim(rest[1:end], "0123456789") == "" {
			dot += 1 + end
		}
	}
	return fn[:slash+1+dot]
}
