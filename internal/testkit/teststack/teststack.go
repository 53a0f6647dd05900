// Package teststack starts, for one integration test, the pieces most tests
// need on the real local services: private Kafka topics, a fresh database
// with the serving schema (a copy of a migrated template), an appender, and
// the serving projector running in-process.
package teststack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// Stack is a running serving pipeline for one test.
type Stack struct {
	Brokers   []string
	Topics    events.Topics
	DBURL     string
	Pool      *pgxpool.Pool
	Registry  *events.Registry
	Appender  *producers.Appender
	Watermark *pgproj.Watermark
}

// Options shape a stack.
type Options struct {
	Partitions      int32
	IPRangeDailyCap int
	// Schemas are more projection schemas the database holds, migrated
	// (a test's run-state groups), besides serving.
	Schemas []Schema
}

// Schema is a projection schema, migrated by pgproj.Migrate.
type Schema struct {
	Name       string
	Migrations fs.FS
}

// Database returns a fresh database for the test holding the serving
// schema and schemas, migrated: a copy of a template database migrated
// once (testenv.PostgresFrom). It is dropped when the test ends.
func Database(t testing.TB, schemas ...Schema) string {
	t.Helper()
	all := append([]Schema{{Name: "serving", Migrations: serving.Migrations()}}, schemas...)
	tmpl := testenv.Template{Name: "stack", Prepare: func(ctx context.Context, databaseURL string) error {
		for _, s := range all {
			pool, err := postgres.Connect(ctx, databaseURL, s.Name)
			if err != nil {
				return err
			}
			err = pgproj.Migrate(ctx, pool, s.Name, s.Migrations, logging.Discard())
			pool.Close()
			if err != nil {
				return fmt.Errorf("migrate %s: %w", s.Name, err)
			}
		}
		return nil
	}}
	if len(schemas) > 0 {
		names := make([]string, len(all))
		for i, s := range all {
			names[i] = s.Name
		}
		sum := sha256.Sum256([]byte(strings.Join(names, ",")))
		tmpl.Name += "_" + hex.EncodeToString(sum[:4])
	}
	for _, s := range all {
		tmpl.Migrations = append(tmpl.Migrations, s.Migrations)
	}
	return testenv.PostgresFrom(t, tmpl)
}

// Serving starts a stack; everything stops when the test ends.
func Serving(t testing.TB, o Options) *Stack {
	t.Helper()
	if o.Partitions == 0 {
		o.Partitions = 3
	}
	if o.IPRangeDailyCap == 0 {
		o.IPRangeDailyCap = 10
	}
	brokers, topics := testenv.Kafka(t, o.Partitions)
	dbURL := Database(t, o.Schemas...)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := logging.Discard()

	pool, err := postgres.Connect(ctx, dbURL, "serving")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// Nothing to apply on the template's copy: this checks it is current.
	if err := pgproj.Migrate(ctx, pool, "serving", serving.Migrations(), log); err != nil {
		t.Fatal(err)
	}
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(producer.Close)
	reg := events.NewCatalogRegistry()
	var topicNames []string
	for _, tp := range reg.Topics() {
		topicNames = append(topicNames, topics.Name(tp))
	}
	dl := kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), "teststack", log)
	proj := pgproj.NewProjector(serving.ProjectorName, pool, reg, serving.NewApplier(o.IPRangeDailyCap), dl, log)
	r, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers: brokers, Group: topics.Prefix + "projector.serving", Topics: topicNames, Positions: proj,
	}, proj, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serving projector: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("serving projector did not stop")
		}
	})
	return &Stack{
		Brokers: brokers, Topics: topics, DBURL: dbURL, Pool: pool, Registry: reg,
		Appender: producers.NewAppender(producer, reg, topics, nil), Watermark: pgproj.NewWatermark(pool, serving.ProjectorName),
	}
}

// AppendAndWait appends events and waits until the serving projection has
// applied all of them.
func (s *Stack) AppendAndWait(t testing.TB, evs ...events.Event) {
	t.Helper()
	ctx := context.Background()
	type tp struct {
		topic string
		part  int32
	}
	last := map[tp]int64{}
	for start := 0; start < len(evs); start += 1000 {
		pos, err := s.Appender.Append(ctx, evs[start:min(start+1000, len(evs))]...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pos {
			k := tp{p.Topic, p.Partition}
			if off, ok := last[k]; !ok || p.Offset > off {
				last[k] = p.Offset
			}
		}
	}
	for k, off := range last {
		if err := s.Watermark.WaitFor(ctx, k.topic, k.part, off, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
}
