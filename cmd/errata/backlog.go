package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// newAPIBacklog runs the registration backlog beside the API, so a view of
// a version the serving projection has not applied yet (a worker outage, a
// read-your-writes wait that timed out) is still counted.
func newAPIBacklog(ctx context.Context, e *env, pool *pgxpool.Pool) (api.Option, func(), error) {
	b, err := serving.NewBacklog(serving.BacklogConfig{
		Brokers: e.cfg.KafkaBrokers, Topic: e.topics.Name(events.TopicPosts), Registry: e.registry,
		Pool: pool, Log: e.log.With("component", "registration-backlog"),
	})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := b.Run(ctx); err != nil {
			e.log.Error("registration backlog stopped", "err", err)
		}
	}()
	return api.WithBacklog(b), func() { cancel(); <-done; b.Close() }, nil
}
