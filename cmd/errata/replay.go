package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// rebuildable is a read model `errata replay` and `errata verify` can build
// from offset 0 into a new generation, compare, switch to and drop. Each
// read model registers one in rebuildables from its own file.
type rebuildable interface {
	// topics are the Kafka topics the projection reads (real names).
	topics(e *env) []string
	// open prepares generation gen's stores (idempotently) and returns the
	// projection's handler and position store on them, and a release func.
	// Records that fail to decode must be skipped the way the live projector
	// skips them, without side effects (no dead-letter appends).
	open(ctx context.Context, e *env, gen int64) (kafka.Handler, kafka.PositionStore, func(), error)
	// generations lists the generations whose stores exist.
	generations(ctx context.Context, e *env) ([]int64, error)
	// activate does what the switch needs beyond the control row (e.g.
	// moving a search alias); it runs just before the control row changes.
	activate(ctx context.Context, e *env, gen int64) error
	// drop deletes generation gen's stores.
	drop(ctx context.Context, e *env, gen int64) error
	// positions are the next offsets generation gen has applied, by topic
	// and partition (cheap: no dump).
	positions(ctx context.Context, e *env, gen int64) (replay.Offsets, error)
	// checksum writes generation gen's canonical dump to w and returns its
	// per-table (or per-index) checksums and the log positions the dump
	// reflects (nil when the store cannot say).
	checksum(ctx context.Context, e *env, gen int64, w io.Writer) ([]tableSum, replay.Offsets, error)
}

// tableSum is one table's (or index's) canonical checksum.
type tableSum struct {
	Table  string
	Rows   int64
	SHA256 string
}

// rebuildables are the projections replay and verify know, by name.
var rebuildables = map[string]rebuildable{}

func rebuildableNames() []string { return slices.Sorted(maps.Keys(rebuildables)) }

// selectProjections resolves --projection (a name or "all").
func selectProjections(name string) ([]string, error) {
	if name == "all" {
		return rebuildableNames(), nil
	}
	if _, ok := rebuildables[name]; !ok {
		return nil, fmt.Errorf("unknown projection %q (known: %s, all)", name, strings.Join(rebuildableNames(), ", "))
	}
	return []string{name}, nil
}

func replayCmd() *cobra.Command {
	var projection string
	var noSwitch, dropOld bool
	c := &cobra.Command{
		Use:   "replay",
		Short: "Rebuild a projection from offset 0 into a new generation, then switch readers to it atomically",
		Long: `replay builds a fresh copy (generation N+1) of each selected projection from
offset 0 of its topics while the live copy keeps serving, catches it up
with the end of the log, then switches readers and the live projector to it
in one step (blue-green). The previous generation stays until
'errata projections drop'. A replay only reads events: it never calls an
LLM or any outside service.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			names, err := selectProjections(projection)
			if err != nil {
				return err
			}
			e, err := loadEnv("replay")
			if err != nil {
				return err
			}
			control, err := e.controlPool(ctx)
			if err != nil {
				return err
			}
			defer control.Close()
			store := targets.New(control)
			if err := store.Migrate(ctx); err != nil {
				return err
			}
			admin, closeAdmin, err := e.admin()
			if err != nil {
				return err
			}
			defer closeAdmin()
			out := cmd.OutOrStdout()
			for _, name := range names {
				rb := rebuildables[name]
				active, err := store.Active(ctx, name)
				if err != nil {
					return err
				}
				existing, err := rb.generations(ctx, e)
				if err != nil {
					return err
				}
				gen := targets.Next(active, existing)
				fmt.Fprintf(out, "%s: building generation %d beside the live generation %d\n", name, gen, active.Generation)
				n, err := buildGeneration(ctx, e, admin, name, rb, gen, cmd.ErrOrStderr())
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if noSwitch {
					fmt.Fprintf(out, "%s: generation %d built from %d events; not switched (--no-switch)\n", name, gen, n)
					continue
				}
				if err := rb.activate(ctx, e, gen); err != nil {
					return fmt.Errorf("%s: activate generation %d: %w", name, gen, err)
				}
				if _, err := store.Switch(ctx, name, active.Generation, gen, time.Now().UTC()); err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: switched to generation %d (%d events); readers and projectors follow within %s\n", name, gen, n, targetPollInterval)
				if dropOld {
					if err := rb.drop(ctx, e, active.Generation); err != nil {
						return fmt.Errorf("%s: drop generation %d: %w", name, active.Generation, err)
					}
					fmt.Fprintf(out, "%s: dropped generation %d\n", name, active.Generation)
				} else {
					fmt.Fprintf(out, "%s: generation %d kept; drop it with: errata projections drop --projection %s --generation %d\n", name, active.Generation, name, active.Generation)
				}
			}
			return nil
		},
	}
	c.Flags().StringVar(&projection, "projection", "", "projection to rebuild: one of the known names, or all")
	c.Flags().BoolVar(&noSwitch, "no-switch", false, "build the new generation but leave readers on the current one")
	c.Flags().BoolVar(&dropOld, "drop-old", false, "drop the previous generation after the switch")
	_ = c.MarkFlagRequired("projection")
	return c
}

// buildGeneration opens generation gen and catches it up with the log: a
// first pass to the end offsets seen at the start, then short passes until
// it is within a few hundred events of the end, so the switch that follows
// leaves the live projector little to do.
func buildGeneration(ctx context.Context, e *env, admin *kadm.Client, name string, rb rebuildable, gen int64, progress io.Writer) (int64, error) {
	h, pos, release, err := rb.open(ctx, e, gen)
	if err != nil {
		return 0, err
	}
	defer release()
	var total int64
	for pass := 1; ; pass++ {
		until, err := replay.EndOffsets(ctx, admin, rb.topics(e))
		if err != nil {
			return total, err
		}
		bar := newProgressBar(progress, fmt.Sprintf("%s g%d", name, gen))
		n, err := replay.CatchUp(ctx, replay.Config{
			Brokers: e.cfg.KafkaBrokers, Until: until, Handler: h, Positions: pos,
			OnProgress: bar.update, ProgressEvery: 500 * time.Millisecond,
		}, e.log)
		bar.finish()
		total += n
		if err != nil {
			return total, err
		}
		if n < 500 || pass >= 5 {
			return total, nil
		}
	}
}

// admin opens a Kafka admin client.
func (e *env) admin() (*kadm.Client, func(), error) {
	cl, err := kafka.NewClient(e.cfg.KafkaBrokers)
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

func projectionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "projections",
		Short: "List the generations of each projection, or drop one that is not active",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List each projection's generations and which one is active",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("projections")
			if err != nil {
				return err
			}
			control, err := e.controlPool(ctx)
			if err != nil {
				return err
			}
			defer control.Close()
			admin, closeAdmin, err := e.admin()
			if err != nil {
				return err
			}
			defer closeAdmin()
			store := targets.New(control)
			for _, name := range rebuildableNames() {
				active, err := store.Active(ctx, name)
				if err != nil {
					return err
				}
				gens, err := rebuildables[name].generations(ctx, e)
				if err != nil {
					return err
				}
				var parts []string
				for _, g := range gens {
					mark := ""
					if g == active.Generation {
						mark = " (active)"
					}
					parts = append(parts, fmt.Sprintf("%d%s", g, mark))
				}
				if len(parts) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "%-10s generations: none built yet\n", name)
					continue
				}
				progress, err := applied(ctx, e, admin, rebuildables[name], active.Generation)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-10s generations: %s  %s\n", name, strings.Join(parts, ", "), progress)
			}
			return nil
		},
	}
	var projection string
	var generation int64
	drop := &cobra.Command{
		Use:   "drop",
		Short: "Drop an inactive generation of a projection",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			rb, ok := rebuildables[projection]
			if !ok {
				return fmt.Errorf("unknown projection %q (known: %s)", projection, strings.Join(rebuildableNames(), ", "))
			}
			e, err := loadEnv("projections")
			if err != nil {
				return err
			}
			control, err := e.controlPool(ctx)
			if err != nil {
				return err
			}
			defer control.Close()
			active, err := targets.New(control).Active(ctx, projection)
			if err != nil {
				return err
			}
			if generation == active.Generation {
				return fmt.Errorf("generation %d of %s is active; switch with errata replay first", generation, projection)
			}
			if err := rb.drop(ctx, e, generation); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: dropped generation %d\n", projection, generation)
			return nil
		},
	}
	drop.Flags().StringVar(&projection, "projection", "", "projection name")
	drop.Flags().Int64Var(&generation, "generation", 0, "generation to drop")
	_ = drop.MarkFlagRequired("projection")
	_ = drop.MarkFlagRequired("generation")
	c.AddCommand(list, drop)
	return c
}

func verifyCmd() *cobra.Command {
	var projection string
	var keep bool
	var maxDiffs int
	c := &cobra.Command{
		Use:   "verify",
		Short: "Rebuild a projection from offset 0 beside the live one and compare canonical checksums",
		Long: `verify takes a consistent canonical dump of the live generation together with
the log positions it reflects, rebuilds a scratch generation from offset 0
up to exactly those positions, dumps it the same way, and compares: equal
checksums prove the live read model is what the log says. It prints the
first differing rows otherwise and exits non-zero. The scratch generation is
dropped unless --keep.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			names, err := selectProjections(projection)
			if err != nil {
				return err
			}
			e, err := loadEnv("verify")
			if err != nil {
				return err
			}
			control, err := e.controlPool(ctx)
			if err != nil {
				return err
			}
			defer control.Close()
			store := targets.New(control)
			admin, closeAdmin, err := e.admin()
			if err != nil {
				return err
			}
			defer closeAdmin()
			failed := 0
			for _, name := range names {
				ok, err := verifyOne(ctx, e, store, admin, name, rebuildables[name], keep, maxDiffs, cmd.OutOrStdout(), cmd.ErrOrStderr())
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if !ok {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d projection(s) differ from a rebuild of the log", failed)
			}
			return nil
		},
	}
	c.Flags().StringVar(&projection, "projection", "", "projection to verify: one of the known names, or all")
	c.Flags().BoolVar(&keep, "keep", false, "keep the scratch generation (it can then be switched to)")
	c.Flags().IntVar(&maxDiffs, "max-diffs", 20, "differing rows to print")
	_ = c.MarkFlagRequired("projection")
	return c
}

// verifyOne rebuilds a scratch generation of one projection and compares.
func verifyOne(ctx context.Context, e *env, store *targets.Store, admin *kadm.Client, name string, rb rebuildable,
	keep bool, maxDiffs int, out, progress io.Writer) (bool, error) {
	active, err := store.Active(ctx, name)
	if err != nil {
		return false, err
	}
	existing, err := rb.generations(ctx, e)
	if err != nil {
		return false, err
	}
	liveFile, err := os.CreateTemp("", "errata-verify-live-*.txt")
	if err != nil {
		return false, err
	}
	defer os.Remove(liveFile.Name())
	defer liveFile.Close()
	liveSums, at, err := rb.checksum(ctx, e, active.Generation, liveFile)
	if err != nil {
		return false, fmt.Errorf("dump live generation %d: %w", active.Generation, err)
	}
	if at == nil {
		// The store cannot name the positions of its dump: rebuild to the
		// current end of the log (exact for a quiet system).
		if at, err = replay.EndOffsets(ctx, admin, rb.topics(e)); err != nil {
			return false, err
		}
	}
	// Every partition the projection reads must be bounded, even ones the
	// live copy has not touched (their bound is 0).
	ends, err := replay.EndOffsets(ctx, admin, rb.topics(e))
	if err != nil {
		return false, err
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

	gen := targets.Next(active, existing)
	h, pos, release, err := rb.open(ctx, e, gen)
	if err != nil {
		return false, err
	}
	if !keep {
		defer func() {
			if err := rb.drop(context.WithoutCancel(ctx), e, gen); err != nil {
				e.log.Warn("drop scratch generation", "projection", name, "generation", gen, "err", err)
			}
		}()
	}
	bar := newProgressBar(progress, fmt.Sprintf("%s verify g%d", name, gen))
	n, err := replay.CatchUp(ctx, replay.Config{
		Brokers: e.cfg.KafkaBrokers, Until: at, Handler: h, Positions: pos,
		OnProgress: bar.update, ProgressEvery: 500 * time.Millisecond,
	}, e.log)
	bar.finish()
	release()
	if err != nil {
		return false, err
	}
	freshFile, err := os.CreateTemp("", "errata-verify-fresh-*.txt")
	if err != nil {
		return false, err
	}
	defer os.Remove(freshFile.Name())
	defer freshFile.Close()
	freshSums, _, err := rb.checksum(ctx, e, gen, freshFile)
	if err != nil {
		return false, fmt.Errorf("dump rebuilt generation %d: %w", gen, err)
	}

	fmt.Fprintf(out, "%s: live generation %d vs rebuild from offset 0 (%d events)\n", name, active.Generation, n)
	same := len(liveSums) == len(freshSums)
	byTable := map[string]tableSum{}
	for _, s := range freshSums {
		byTable[s.Table] = s
	}
	for _, l := range liveSums {
		f, ok := byTable[l.Table]
		status := "identical"
		switch {
		case !ok:
			status, same = "missing in rebuild", false
		case f.SHA256 != l.SHA256 || f.Rows != l.Rows:
			status, same = fmt.Sprintf("DIFFERS (rebuild: %d rows, %s)", f.Rows, f.SHA256[:16]), false
		}
		fmt.Fprintf(out, "  %-34s %8d rows  %s  %s\n", l.Table, l.Rows, l.SHA256[:16], status)
	}
	if same {
		fmt.Fprintf(out, "%s: identical\n", name)
		return true, nil
	}
	fmt.Fprintf(out, "%s: DIFFERENT; first differing rows (- live, + rebuild):\n", name)
	if err := printFirstDiffs(out, liveFile.Name(), freshFile.Name(), maxDiffs); err != nil {
		return false, err
	}
	return false, nil
}

// applied says how far generation gen of a projection is: events applied
// of the events in its topics, and the lag.
func applied(ctx context.Context, e *env, admin *kadm.Client, rb rebuildable, gen int64) (string, error) {
	at, err := rb.positions(ctx, e, gen)
	if err != nil {
		return "", err
	}
	ends, err := replay.EndOffsets(ctx, admin, rb.topics(e))
	if err != nil {
		return "", err
	}
	var done, total int64
	for topic, parts := range ends {
		for p, end := range parts {
			total += end
			done += min(at[topic][p], end)
		}
	}
	return fmt.Sprintf("g%d applied %d of %d events (lag %d)", gen, done, total, total-done), nil
}

// printFirstDiffs prints up to max lines present in one canonical dump and
// not the other. Dumps are sorted per table, so a merge walk finds them.
func printFirstDiffs(out io.Writer, livePath, freshPath string, max int) error {
	a, err := readLines(livePath)
	if err != nil {
		return err
	}
	b, err := readLines(freshPath)
	if err != nil {
		return err
	}
	inB := make(map[string]int, len(b))
	for _, l := range b {
		inB[l]++
	}
	inA := make(map[string]int, len(a))
	for _, l := range a {
		inA[l]++
	}
	printed := 0
	for _, l := range a {
		if printed >= max {
			break
		}
		if inB[l] > 0 {
			inB[l]--
			continue
		}
		fmt.Fprintf(out, "  - %s\n", l)
		printed++
	}
	for _, l := range b {
		if printed >= max {
			break
		}
		if inA[l] > 0 {
			inA[l]--
			continue
		}
		fmt.Fprintf(out, "  + %s\n", l)
		printed++
	}
	return nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
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

// noDeadLetters skips undecodable records during a replay the way the live
// projector does, without appending them to the dead-letter topic again.
type noDeadLetters struct{ log *slog.Logger }

func (d noDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.log.Warn("replay skips an undecodable record (the live projector dead-lettered it)",
		"topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", cause)
	return nil
}
