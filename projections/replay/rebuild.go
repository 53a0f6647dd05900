package replay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/targets"
)

// Projector is a projection's handler that stores its own positions next
// to its effects (a pgproj or analytics projector).
type Projector interface {
	kafka.Handler
	kafka.PositionStore
}

// Rebuildable is a read model's storage by generation: what replay and
// verify need to build a copy from offset 0 beside the live one, compare
// it, switch to it and drop one.
type Rebuildable interface {
	// Topics are the Kafka topics the projection reads (real names).
	Topics() []string
	// Open prepares generation gen's stores (idempotently) and returns the
	// projection's projector on them and a release function. Records that
	// fail to decode must be skipped the way the live projector skips them,
	// without side effects (no dead-letter copies).
	Open(ctx context.Context, gen int64) (Projector, func(), error)
	// Generations lists the generations whose stores exist.
	Generations(ctx context.Context) ([]int64, error)
	// Activate does what a switch needs beyond the control row (moving a
	// search alias); it runs just before the control row changes.
	Activate(ctx context.Context, gen int64) error
	// Drop deletes generation gen's stores.
	Drop(ctx context.Context, gen int64) error
	// Positions are the next offsets generation gen has applied, by topic
	// and partition (cheap: no dump).
	Positions(ctx context.Context, gen int64) (Offsets, error)
	// Checksum writes generation gen's canonical dump to w and returns its
	// per-table (or per-index) checksums and the log positions the dump
	// reflects (nil when the store cannot say).
	Checksum(ctx context.Context, gen int64, w io.Writer) ([]TableSum, Offsets, error)
}

// TableSum is one table's (or index's) canonical checksum.
type TableSum struct {
	Table  string
	Rows   int64
	SHA256 string
}

// Targets is the control store of active generations (*targets.Store).
type Targets interface {
	Active(ctx context.Context, projection string) (targets.Target, error)
	Switch(ctx context.Context, projection string, from, to int64, at time.Time) (targets.Target, error)
}

// Log is the event log as rebuilds read it (KafkaLog).
type Log interface {
	// EndOffsets are the current end offsets of every partition of topics.
	EndOffsets(ctx context.Context, topics []string) (Offsets, error)
	// CatchUp feeds p every record from its stored positions up to until,
	// reporting to progress, and returns how many records it fed.
	CatchUp(ctx context.Context, until Offsets, p Projector, progress func(Progress)) (int64, error)
}

// Meter starts the progress display of one catch-up run named label
// ("serving g2") and returns what the run reports to and what ends it.
type Meter func(label string) (update func(Progress), finish func())

// RebuilderConfig is what a Rebuilder works on.
type RebuilderConfig struct {
	// Projections are the rebuildable read models, by name.
	Projections map[string]Rebuildable
	Targets     Targets
	Log         Log
	// Meter shows each catch-up run's progress (nil: none).
	Meter Meter
	// Now stamps switches (nil: time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Rebuilder is what `errata replay`, `verify` and `projections` do: build
// a generation of a read model from offset 0 beside the live one and switch
// readers to it, check the live generation against such a rebuild, report
// how far each generation is, and drop one that is not active.
type Rebuilder struct {
	cfg RebuilderConfig
}

// NewRebuilder returns a Rebuilder over cfg's projections.
func NewRebuilder(cfg RebuilderConfig) *Rebuilder {
	if cfg.Meter == nil {
		cfg.Meter = func(string) (func(Progress), func()) { return func(Progress) {}, func() {} }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Rebuilder{cfg: cfg}
}

// Names are the projections' names, sorted.
func (r *Rebuilder) Names() []string { return slices.Sorted(maps.Keys(r.cfg.Projections)) }

// Select resolves a --projection argument among known names: one of them,
// or "all" for every one.
func Select(name string, known []string) ([]string, error) {
	if name == "all" {
		return slices.Clone(known), nil
	}
	if !slices.Contains(known, name) {
		return nil, fmt.Errorf("unknown projection %q (known: %s, all)", name, strings.Join(known, ", "))
	}
	return []string{name}, nil
}

// store returns projection name's store, or an error naming the known ones.
func (r *Rebuilder) store(name string) (Rebuildable, error) {
	s, ok := r.cfg.Projections[name]
	if !ok {
		return nil, fmt.Errorf("unknown projection %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	return s, nil
}

// Plan is a rebuild about to start: the generation readers use now and
// the one to build.
type Plan struct {
	Projection string
	Live       int64
	Generation int64
}

// Plan picks the generation a rebuild of projection name builds: one above
// the live generation and every generation whose stores exist.
func (r *Rebuilder) Plan(ctx context.Context, name string) (Plan, error) {
	s, err := r.store(name)
	if err != nil {
		return Plan{}, err
	}
	active, err := r.cfg.Targets.Active(ctx, name)
	if err != nil {
		return Plan{}, err
	}
	existing, err := s.Generations(ctx)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Projection: name, Live: active.Generation, Generation: targets.Next(active, existing)}, nil
}

// ReplayOptions say what follows the build.
type ReplayOptions struct {
	// NoSwitch leaves readers on the live generation.
	NoSwitch bool
	// DropOld drops the previous generation after the switch.
	DropOld bool
}

// ReplayResult is what a replay did, as far as it got.
type ReplayResult struct {
	Plan
	// Events is how many records the build applied.
	Events   int64
	Switched bool
	Dropped  bool
}

// Replay builds plan's generation, then (unless opt.NoSwitch) activates
// it and switches readers to it, provided the live generation is still
// plan.Live, and with opt.DropOld drops that previous generation. On an
// error the result still says what was done.
func (r *Rebuilder) Replay(ctx context.Context, plan Plan, opt ReplayOptions) (ReplayResult, error) {
	res := ReplayResult{Plan: plan}
	s, err := r.store(plan.Projection)
	if err != nil {
		return res, err
	}
	name, gen := plan.Projection, plan.Generation
	res.Events, err = r.build(ctx, name, s, gen)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	if opt.NoSwitch {
		return res, nil
	}
	if err := s.Activate(ctx, gen); err != nil {
		return res, fmt.Errorf("%s: activate generation %d: %w", name, gen, err)
	}
	if _, err := r.cfg.Targets.Switch(ctx, name, plan.Live, gen, r.cfg.Now().UTC()); err != nil {
		return res, err
	}
	res.Switched = true
	if opt.DropOld {
		if err := s.Drop(ctx, plan.Live); err != nil {
			return res, fmt.Errorf("%s: drop generation %d: %w", name, plan.Live, err)
		}
		res.Dropped = true
	}
	return res, nil
}

// Rebuild passes: after the first pass to the end of the log seen at its
// start, a build runs short passes until one applies fewer than
// closeEnough records (the switch that follows then leaves the live
// projector little to do), at most maxPasses in all.
const (
	closeEnough = 500
	maxPasses   = 5
)

// build opens generation gen and catches it up with the log.
func (r *Rebuilder) build(ctx context.Context, name string, s Rebuildable, gen int64) (int64, error) {
	p, release, err := s.Open(ctx, gen)
	if err != nil {
		return 0, err
	}
	defer release()
	var total int64
	for pass := 1; ; pass++ {
		until, err := r.cfg.Log.EndOffsets(ctx, s.Topics())
		if err != nil {
			return total, err
		}
		n, err := r.catchUp(ctx, fmt.Sprintf("%s g%d", name, gen), until, p)
		total += n
		if err != nil {
			return total, err
		}
		if n < closeEnough || pass >= maxPasses {
			return total, nil
		}
	}
}

// catchUp runs one catch-up under a progress display named label.
func (r *Rebuilder) catchUp(ctx context.Context, label string, until Offsets, p Projector) (int64, error) {
	update, finish := r.cfg.Meter(label)
	n, err := r.cfg.Log.CatchUp(ctx, until, p, update)
	finish()
	return n, err
}

// VerifyOptions tune a verification.
type VerifyOptions struct {
	// Keep leaves the scratch generation in place (it can be switched to).
	Keep bool
	// MaxDiffs bounds the differing dump lines reported.
	MaxDiffs int
}

// VerifyResult compares the live generation with a rebuild.
type VerifyResult struct {
	Projection string
	// Live is the live generation, Generation the scratch rebuild.
	Live, Generation int64
	// Events is how many records the rebuild applied.
	Events int64
	// Tables are the live generation's checksums, each with the rebuild's.
	Tables []TableCheck
	// Identical is true when every checksum matches.
	Identical bool
	// Diffs are the first dump lines found in one copy only (up to
	// MaxDiffs; empty when identical).
	Diffs []DiffLine
}

// TableCheck is one live table's checksum beside the rebuild's.
type TableCheck struct {
	TableSum
	// Rebuilt is the rebuild's checksum of the same table (nil: missing).
	Rebuilt *TableSum
}

// Identical says whether the rebuild has the same table.
func (c TableCheck) Identical() bool {
	return c.Rebuilt != nil && c.Rebuilt.Rows == c.Rows && c.Rebuilt.SHA256 == c.SHA256
}

// DiffLine is a canonical dump line found in one copy only.
type DiffLine struct {
	// Live is true for a line of the live copy missing from the rebuild,
	// false for a line of the rebuild missing from the live copy.
	Live bool
	Line string
}

// Verify takes a consistent canonical dump of projection name's live
// generation with the log positions it reflects, rebuilds a scratch
// generation from offset 0 up to exactly those positions, dumps it the
// same way and compares. The scratch generation is dropped unless
// opt.Keep.
func (r *Rebuilder) Verify(ctx context.Context, name string, opt VerifyOptions) (VerifyResult, error) {
	res := VerifyResult{Projection: name}
	s, err := r.store(name)
	if err != nil {
		return res, err
	}
	active, err := r.cfg.Targets.Active(ctx, name)
	if err != nil {
		return res, err
	}
	res.Live = active.Generation
	existing, err := s.Generations(ctx)
	if err != nil {
		return res, err
	}
	liveFile, err := os.CreateTemp("", "errata-verify-live-*.txt")
	if err != nil {
		return res, err
	}
	defer r.discard(liveFile)
	liveSums, at, err := s.Checksum(ctx, active.Generation, liveFile)
	if err != nil {
		return res, fmt.Errorf("dump live generation %d: %w", active.Generation, err)
	}
	if at, err = r.bound(ctx, s, at); err != nil {
		return res, err
	}

	res.Generation = targets.Next(active, existing)
	p, release, err := s.Open(ctx, res.Generation)
	if err != nil {
		return res, err
	}
	if !opt.Keep {
		defer func() {
			if err := s.Drop(context.WithoutCancel(ctx), res.Generation); err != nil {
				r.cfg.Logger.Warn("drop scratch generation", "projection", name, "generation", res.Generation, "err", err)
			}
		}()
	}
	res.Events, err = r.catchUp(ctx, fmt.Sprintf("%s verify g%d", name, res.Generation), at, p)
	release()
	if err != nil {
		return res, err
	}
	freshFile, err := os.CreateTemp("", "errata-verify-fresh-*.txt")
	if err != nil {
		return res, err
	}
	defer r.discard(freshFile)
	freshSums, _, err := s.Checksum(ctx, res.Generation, freshFile)
	if err != nil {
		return res, fmt.Errorf("dump rebuilt generation %d: %w", res.Generation, err)
	}

	res.Tables, res.Identical = compareSums(liveSums, freshSums)
	if res.Identical {
		return res, nil
	}
	res.Diffs, err = firstDiffs(liveFile.Name(), freshFile.Name(), opt.MaxDiffs)
	return res, err
}

// discard closes and removes a temporary dump. A file that cannot be
// removed stays in the temporary directory, and the log says which.
func (r *Rebuilder) discard(f *os.File) {
	f.Close()
	if err := os.Remove(f.Name()); err != nil {
		r.cfg.Logger.Warn("remove temporary dump", "file", f.Name(), "err", err)
	}
}

// bound completes the positions a live dump reflects into the end offsets
// of a rebuild: when the store cannot name them, the current end of the
// log (exact for a quiet system); and every partition the projection reads
// is bounded, even one the live copy has not touched (at 0).
func (r *Rebuilder) bound(ctx context.Context, s Rebuildable, at Offsets) (Offsets, error) {
	ends, err := r.cfg.Log.EndOffsets(ctx, s.Topics())
	if err != nil {
		return nil, err
	}
	if at == nil {
		return ends, nil
	}
	for topic, parts := range ends {
		if at[topic] == nil {
			at[topic] = map[int32]int64{}
		}
		for p := range parts {
			if _, ok := at[topic][p]; !ok {
				at[topic][p] = 0
			}
		}
	}
	return at, nil
}

// compareSums pairs each live checksum with the rebuild's; the copies are
// identical when every table matches and neither has a table the other
// lacks.
func compareSums(live, fresh []TableSum) ([]TableCheck, bool) {
	byTable := map[string]TableSum{}
	for _, s := range fresh {
		byTable[s.Table] = s
	}
	same := len(live) == len(fresh)
	out := make([]TableCheck, len(live))
	for i, l := range live {
		out[i] = TableCheck{TableSum: l}
		if f, ok := byTable[l.Table]; ok {
			out[i].Rebuilt = &f
		}
		same = same && out[i].Identical()
	}
	return out, same
}

// firstDiffs returns up to limit lines present in one canonical dump and
// not the other (counting repeated lines), the live copy's first.
func firstDiffs(livePath, freshPath string, limit int) ([]DiffLine, error) {
	a, err := readLines(livePath)
	if err != nil {
		return nil, err
	}
	b, err := readLines(freshPath)
	if err != nil {
		return nil, err
	}
	return diffLines(a, b, limit), nil
}

// diffLines is the multiset difference of two dumps both ways: lines of
// live not in fresh, then lines of fresh not in live, up to limit in all.
func diffLines(live, fresh []string, limit int) []DiffLine {
	var out []DiffLine
	only := func(lines, other []string, isLive bool) {
		left := make(map[string]int, len(other))
		for _, l := range other {
			left[l]++
		}
		for _, l := range lines {
			if len(out) >= limit {
				return
			}
			if left[l] > 0 {
				left[l]--
				continue
			}
			out = append(out, DiffLine{Live: isLive, Line: l})
		}
	}
	only(live, fresh, true)
	only(fresh, live, false)
	return out
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a temporary dump Verify just wrote
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// Status is how far a projection's generations are.
type Status struct {
	Projection string
	// Active is the generation readers use; Generations those whose stores
	// exist.
	Active      int64
	Generations []int64
	// Applied of Total records in the projection's topics the active
	// generation has applied (both 0 when no generation exists).
	Applied, Total int64
}

// Lag is how many records the active generation has still to apply.
func (s Status) Lag() int64 { return s.Total - s.Applied }

// Status reports projection name's generations and how far the active one is.
func (r *Rebuilder) Status(ctx context.Context, name string) (Status, error) {
	st := Status{Projection: name}
	s, err := r.store(name)
	if err != nil {
		return st, err
	}
	active, err := r.cfg.Targets.Active(ctx, name)
	if err != nil {
		return st, err
	}
	st.Active = active.Generation
	if st.Generations, err = s.Generations(ctx); err != nil || len(st.Generations) == 0 {
		return st, err
	}
	at, err := s.Positions(ctx, active.Generation)
	if err != nil {
		return st, err
	}
	ends, err := r.cfg.Log.EndOffsets(ctx, s.Topics())
	if err != nil {
		return st, err
	}
	for topic, parts := range ends {
		for p, end := range parts {
			st.Total += end
			st.Applied += min(at[topic][p], end)
		}
	}
	return st, nil
}

// ErrActive is returned by Drop for the active generation.
var ErrActive = errors.New("is active; switch with errata replay first")

// Drop deletes generation gen of projection name, unless readers use it.
func (r *Rebuilder) Drop(ctx context.Context, name string, gen int64) error {
	s, err := r.store(name)
	if err != nil {
		return err
	}
	active, err := r.cfg.Targets.Active(ctx, name)
	if err != nil {
		return err
	}
	if gen == active.Generation {
		return fmt.Errorf("generation %d of %s %w", gen, name, ErrActive)
	}
	return s.Drop(ctx, gen)
}

// skipDeadLetters skips undecodable records during a rebuild the way the
// live projector does, without copying them to the dead-letter topic again.
type skipDeadLetters struct{ log *slog.Logger }

func (d skipDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.log.Warn("replay skips an undecodable record (the live projector dead-lettered it)",
		"topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", cause)
	return nil
}
