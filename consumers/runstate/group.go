package runstate

import (
	"context"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/projections/pgproj"
)

// GroupConfig names a worker group's run state.
type GroupConfig struct {
	// Name is the group's schema, projector and (after Topics.Prefix)
	// consumer group.
	Name        string
	DatabaseURL string
	Brokers     []string
	Topics      events.Topics
	Registry    *events.Registry
	// Kafka tunes the consumer group (InstanceID, SessionTimeout, ...);
	// its brokers, group, topics and positions are set here.
	Kafka kafka.RunnerConfig
	// Topic, Applier and Migrations make the group fold another topic into
	// another schema, with the same leases and catch-up (the analyst's run
	// state); zero: the investigations topic, Applier and Migrations. A
	// schema of its own must have this package's leases table.
	Topic      events.Topic
	Applier    pgproj.Applier
	Migrations fs.FS
}

// Group is one worker group's run state: the fold's consumer-group runner
// and the store the group's executor reads.
type Group struct {
	Store   *Store
	Runner  *kafka.Runner
	Pool    *pgxpool.Pool
	closers []func()
}

// OpenGroup migrates the group's schema and wires its projector to a
// consumer group on the investigations topic (or cfg.Topic). Run
// Group.Runner; Close when done.
func OpenGroup(ctx context.Context, cfg GroupConfig, log *slog.Logger) (*Group, error) {
	g := &Group{}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, cfg.Name)
	if err != nil {
		return nil, err
	}
	g.Pool = pool
	g.closers = append(g.closers, pool.Close)
	if cfg.Topic == "" {
		cfg.Topic = events.TopicInvestigations
	}
	if cfg.Applier == nil {
		cfg.Applier = Applier{}
	}
	if cfg.Migrations == nil {
		cfg.Migrations = Migrations()
	}
	if err := pgproj.Migrate(ctx, pool, cfg.Name, cfg.Migrations, log); err != nil {
		g.Close()
		return nil, err
	}
	producer, err := kafka.NewClient(cfg.Brokers, kafka.ProducerOpts()...)
	if err != nil {
		g.Close()
		return nil, err
	}
	g.closers = append(g.closers, producer.Close)
	group := cfg.Topics.Prefix + cfg.Name
	dl := kafka.NewDeadLetter(producer, cfg.Topics.Name(events.TopicDeadLetter), group, log)
	proj := pgproj.NewProjector(cfg.Name, pool, cfg.Registry, cfg.Applier, dl, log)
	topic := cfg.Topics.Name(cfg.Topic)
	rc := cfg.Kafka
	rc.Brokers, rc.Group, rc.Topics, rc.Positions = cfg.Brokers, group, []string{topic}, proj
	if g.Runner, err = kafka.NewRunner(rc, proj, log); err != nil {
		g.Close()
		return nil, err
	}
	adminClient, err := kafka.NewClient(cfg.Brokers)
	if err != nil {
		g.Close()
		return nil, err
	}
	g.closers = append(g.closers, adminClient.Close)
	g.Store = NewStore(pool, cfg.Name, topic, kadm.NewClient(adminClient))
	return g, nil
}

// Close releases the group's connections.
func (g *Group) Close() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
}
