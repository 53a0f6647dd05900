package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/replay"
	"github.com/errata-dev/errata/projections/targets"
)

// loadRebuilder loads the env of the command component and opens its
// rebuilder (openRebuilder).
func loadRebuilder(ctx context.Context, component string, progress io.Writer) (*replay.Rebuilder, *env, func(), error) {
	e, err := loadEnv(component)
	if err != nil {
		return nil, nil, nil, err
	}
	r, release, err := openRebuilder(ctx, e, progress)
	return r, e, release, err
}

// openRebuilder wires the rebuilds of every read model to the control
// schema and the log; progress shows each catch-up run. The caller calls
// the release function.
func openRebuilder(ctx context.Context, e *env, progress io.Writer) (*replay.Rebuilder, func(), error) {
	stores := map[string]replay.Rebuildable{}
	for _, name := range projectorNames() {
		p, err := projectionOf(e, name)
		if err != nil {
			return nil, nil, err
		}
		stores[name] = p.store
	}
	control, err := e.controlPool(ctx)
	if err != nil {
		return nil, nil, err
	}
	cl, err := kafka.NewClient(e.cfg.KafkaBrokers)
	if err != nil {
		control.Close()
		return nil, nil, err
	}
	r := replay.NewRebuilder(replay.RebuilderConfig{
		Projections: stores,
		Targets:     targets.New(control),
		Log:         replay.NewKafkaLog(e.cfg.KafkaBrokers, kadm.NewClient(cl), e.log),
		Meter: func(label string) (func(replay.Progress), func()) {
			bar := newProgressBar(progress, label)
			return bar.update, bar.finish
		},
		Logger: e.log,
	})
	return r, func() { cl.Close(); control.Close() }, nil
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
			names, err := replay.Select(projection, projectorNames())
			if err != nil {
				return err
			}
			r, e, release, err := loadRebuilder(ctx, "replay", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer release()
			if err := migrateTargets(ctx, e); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, name := range names {
				plan, err := r.Plan(ctx, name)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "%s: building generation %d beside the live generation %d\n", name, plan.Generation, plan.Live)
				opt := replay.ReplayOptions{NoSwitch: noSwitch, DropOld: dropOld}
				res, err := r.Replay(ctx, plan, opt)
				printReplay(out, res, opt, err)
				if err != nil {
					return err
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

// printReplay says what a replay run with opt did, as far as it got
// (err: how it ended).
func printReplay(out io.Writer, res replay.ReplayResult, opt replay.ReplayOptions, err error) {
	name := res.Projection
	if err == nil && opt.NoSwitch {
		fmt.Fprintf(out, "%s: generation %d built from %d events; not switched (--no-switch)\n", name, res.Generation, res.Events)
		return
	}
	if !res.Switched {
		return
	}
	fmt.Fprintf(out, "%s: switched to generation %d (%d events); readers and projectors follow within %s\n",
		name, res.Generation, res.Events, targetPollInterval)
	switch {
	case res.Dropped:
		fmt.Fprintf(out, "%s: dropped generation %d\n", name, res.Live)
	case !opt.DropOld:
		fmt.Fprintf(out, "%s: generation %d kept; drop it with: errata projections drop --projection %s --generation %d\n",
			name, res.Live, name, res.Live)
	}
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
			r, _, release, err := loadRebuilder(ctx, "projections", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer release()
			for _, name := range r.Names() {
				st, err := r.Status(ctx, name)
				if err != nil {
					return err
				}
				if len(st.Generations) == 0 {
					fmt.Fprintf(cmd.OutOrStdout(), "%-10s generations: none built yet\n", name)
					continue
				}
				var gens []string
				for _, g := range st.Generations {
					mark := ""
					if g == st.Active {
						mark = " (active)"
					}
					gens = append(gens, fmt.Sprintf("%d%s", g, mark))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%-10s generations: %s  g%d applied %d of %d events (lag %d)\n",
					name, strings.Join(gens, ", "), st.Active, st.Applied, st.Total, st.Lag())
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
			if !slices.Contains(projectorNames(), projection) {
				return fmt.Errorf("unknown projection %q (known: %s)", projection, strings.Join(projectorNames(), ", "))
			}
			r, _, release, err := loadRebuilder(ctx, "projections", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer release()
			if err := r.Drop(ctx, projection, generation); err != nil {
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

// errDiffers is returned by verify when a projection differs from a rebuild.
var errDiffers = errors.New("differ from a rebuild of the log")

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
			names, err := replay.Select(projection, projectorNames())
			if err != nil {
				return err
			}
			r, _, release, err := loadRebuilder(ctx, "verify", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer release()
			failed := 0
			for _, name := range names {
				res, err := r.Verify(ctx, name, replay.VerifyOptions{Keep: keep, MaxDiffs: maxDiffs})
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				printVerify(cmd.OutOrStdout(), res)
				if !res.Identical {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d projection(s) %w", failed, errDiffers)
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

// printVerify prints a comparison: each live table's checksum and how the
// rebuild's compares, then the verdict and the first differing rows.
func printVerify(out io.Writer, res replay.VerifyResult) {
	name := res.Projection
	fmt.Fprintf(out, "%s: live generation %d vs rebuild from offset 0 (%d events)\n", name, res.Live, res.Events)
	for _, t := range res.Tables {
		status := "identical"
		switch {
		case t.Rebuilt == nil:
			status = "missing in rebuild"
		case !t.Identical():
			status = fmt.Sprintf("DIFFERS (rebuild: %d rows, %s)", t.Rebuilt.Rows, t.Rebuilt.SHA256[:16])
		}
		fmt.Fprintf(out, "  %-34s %8d rows  %s  %s\n", t.Table, t.Rows, t.SHA256[:16], status)
	}
	if res.Identical {
		fmt.Fprintf(out, "%s: identical\n", name)
		return
	}
	fmt.Fprintf(out, "%s: DIFFERENT; first differing rows (- live, + rebuild):\n", name)
	for _, d := range res.Diffs {
		sign := "+"
		if d.Live {
			sign = "-"
		}
		fmt.Fprintf(out, "  %s %s\n", sign, d.Line)
	}
}
