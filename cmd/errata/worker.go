package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/errata-dev/errata/consumers/runstate"
)

// stageNames are the stages `errata worker` can run: the investigation's
// two, the verdict analysis (analyst) and the appeal reviews (appeals).
func stageNames() []string { return []string{"investigator", "validator", "analyst", "appeals"} }

func workerCmd() *cobra.Command {
	var projectors, stages []string
	c := &cobra.Command{
		Use:   "worker",
		Short: "Run consumers and projectors (default: all)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("worker")
			if err != nil {
				return err
			}
			g, ctx := errgroup.WithContext(ctx)
			health := newWorkerHealth()
			projectors = slices.DeleteFunc(projectors, func(s string) bool { return s == "" })
			for _, name := range projectors {
				p, err := projectionOf(e, name)
				if err != nil {
					return err
				}
				health.watch(projectorCheckName(name))
				g.Go(func() error { return superviseProjector(ctx, e, name, p.start, health) })
			}
			stages = slices.DeleteFunc(stages, func(s string) bool { return s == "" })
			if len(stages) > 0 {
				parts, err := newInvestigatorParts(ctx, e)
				if err != nil {
					return err
				}
				defer parts.close()
				for _, name := range stages {
					if name == "" {
						continue
					}
					var g2 *runstate.Group
					var ex *runstate.Executor
					switch name {
					case "investigator":
						g2, ex, err = newInvestigator(ctx, e, parts)
					case "validator":
						g2, ex, err = newValidator(ctx, e, parts)
					case "analyst":
						g2, ex, err = newAnalyst(ctx, e, parts)
					case "appeals":
						g2, ex, err = newAppeals(ctx, e, parts)
					default:
						return fmt.Errorf("unknown stage %q (known: %s)", name, strings.Join(stageNames(), ", "))
					}
					if err != nil {
						return err
					}
					defer g2.Close()
					check := stageCheckName(name)
					health.running(check, g2.Runner)
					g.Go(func() error {
						// A stage's runner retries failing batches itself; if it
						// stops for good the worker stays up for the others and
						// /readyz names it (its status says why).
						if err := g2.Runner.Run(ctx); err != nil && ctx.Err() == nil {
							e.log.Error("stage stopped", "stage", name, "err", err)
						}
						return nil
					})
					g.Go(func() error { return ex.Run(ctx) })
				}
			}
			g.Go(func() error { return serveWorkerHealth(ctx, e, projectors, stages, health) })
			e.log.Info("worker running", "projectors", projectors, "stages", stages, "health", "http://"+e.cfg.WorkerHTTPAddr+"/health")
			return g.Wait()
		},
	}
	c.Flags().StringSliceVar(&projectors, "projectors", projectorNames(), "projectors to run: "+strings.Join(projectorNames(), ", ")+" (empty: none)")
	c.Flags().StringSliceVar(&stages, "stages", stageNames(), "stages to run: "+strings.Join(stageNames(), ", ")+" (empty: none)")
	return c
}
