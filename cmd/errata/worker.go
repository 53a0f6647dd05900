package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/targets"
)

// projectorFactory builds the consumer-group runner of one projector and a
// function releasing its resources.
type projectorFactory func(ctx context.Context, e *env) (*kafka.Runner, func(), error)

// projectorFactories are the projectors `errata worker` can run, by name.
// Each read model registers itself from its own file (worker_*.go) in init,
// so adding a projection never touches this file.
var projectorFactories = map[string]projectorFactory{
	serving.ProjectorName: newServingRunner,
}

// projectorNames lists the registered projectors in a stable order.
func projectorNames() []string {
	names := make([]string, 0, len(projectorFactories))
	for n := range projectorFactories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// stageNames are the stages `errata worker` can run: the investigation's
// two and the verdict analysis (analyst).
var stageNames = []string{"investigator", "validator", "analyst"}

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
				factory, ok := projectorFactories[name]
				if !ok {
					return fmt.Errorf("unknown projector %q (known: %s)", name, strings.Join(projectorNames(), ", "))
				}
				health.watch(projectorCheckName(name))
				g.Go(func() error { return superviseProjector(ctx, e, name, factory, health) })
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
					default:
						return fmt.Errorf("unknown stage %q (known: %s)", name, strings.Join(stageNames, ", "))
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
	c.Flags().StringSliceVar(&stages, "stages", stageNames, "stages to run: "+strings.Join(stageNames, ", ")+" (empty: none)")
	return c
}

// newServingRunner wires the serving projector to a consumer-group runner
// whose positions come from the projection's own checkpoints, on the
// generation the supervisor asks for (generationOf(ctx)).
func newServingRunner(ctx context.Context, e *env) (*kafka.Runner, func(), error) {
	pool, err := pgproj.Connect(ctx, e.cfg.DatabaseURL, targets.Name(e.cfg.ServingSchema, generationOf(ctx)))
	if err != nil {
		return nil, nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	group := e.cfg.TopicPrefix + "projector." + serving.ProjectorName
	dl := kafka.NewDeadLetter(producer, e.topics.Name(events.TopicDeadLetter), group, e.log)
	proj := pgproj.NewProjector(serving.ProjectorName, pool, e.registry,
		serving.NewApplier(e.cfg.ViewIPRangeDailyCap), dl, e.log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:        e.cfg.KafkaBrokers,
		Group:          group,
		Topics:         servingTopics(e),
		Positions:      proj,
		InstanceID:     e.cfg.KafkaInstanceID,
		SessionTimeout: e.cfg.KafkaSessionTimeout,
		Observer:       e.batchObserver(),
	}, proj, e.log)
	if err != nil {
		producer.Close()
		pool.Close()
		return nil, nil, err
	}
	return r, func() { producer.Close(); pool.Close() }, nil
}

// servingTopics are the event topics the serving projection reads.
func servingTopics(e *env) []string {
	var out []string
	for _, tp := range e.registry.Topics() {
		out = append(out, e.topics.Name(tp))
	}
	return out
}
