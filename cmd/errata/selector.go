package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/producers/selector"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

func selectorCmd() *cobra.Command {
	var budget int
	var interval time.Duration
	c := &cobra.Command{
		Use:   "selector",
		Short: "Request investigations of the most-viewed uninvestigated posts (once, or every --interval)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("selector")
			if err != nil {
				return err
			}
			pool, err := e.servingPool(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			producer, err := e.producer(ctx)
			if err != nil {
				return err
			}
			defer producer.Close()
			sel := selector.New(selector.Config{
				DailyBudget: budget, MaxWords: content.WordCountLimit, WaitTimeout: 30 * time.Second,
			}, pool, producers.NewAppender(producer, e.registry, e.topics, nil),
				pgproj.NewWatermark(pool, serving.ProjectorName),
				investigations.NewServingAssigner(serving.NewReader(pool)), nil, e.log)
			for {
				res, err := sel.Run(ctx)
				if err != nil && !errors.Is(err, selector.ErrProjectionLagging) {
					return err
				}
				e.log.Info("selector run done", "requested", len(res.Requested),
					"budget_left_before", res.Remaining, "skipped", res.Skipped, "err", err)
				if interval <= 0 {
					return err
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(interval):
				}
			}
		},
	}
	c.Flags().IntVar(&budget, "budget", 100, "investigations the selector may request per UTC day")
	c.Flags().DurationVar(&interval, "interval", 0, "run every interval (0: run once and exit)")
	return c
}
