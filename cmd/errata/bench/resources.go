package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

// Resources are the bench's own, isolated stores on the shared local
// services: one fresh Postgres database and topics under a unique prefix.
// Close drops them all, so a run never touches anyone else's data.
type Resources struct {
	Brokers     []string
	DatabaseURL string // the bench's own database
	Prefix      string // every topic the bench creates starts with it

	adminURL string
	database string
	topics   []string
}

// NewResources creates a fresh database next to the one adminURL names and
// picks a unique topic prefix; topics are created on demand by Topics.
func NewResources(ctx context.Context, brokers []string, adminURL string) (*Resources, error) {
	suffix := randomSuffix()
	r := &Resources{Brokers: brokers, adminURL: adminURL, database: "errata_bench_" + suffix, Prefix: "bench." + suffix + "."}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := pgx.Connect(cctx, adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+pgx.Identifier{r.database}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create bench database: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	u.Path = "/" + r.database
	r.DatabaseURL = u.String()
	return r, nil
}

// Database is the name of the bench's database.
func (r *Resources) Database() string { return r.database }

// Topics creates the event topics (and dead-letter topic) under
// Prefix+name+"." with partitions partitions.
func (r *Resources) Topics(ctx context.Context, name string, partitions int32) (events.Topics, error) {
	topics := events.Topics{Prefix: r.Prefix + name + "."}
	specs := kafka.TopicSpecs(topics.Names(events.NewCatalogRegistry()), partitions)
	if err := r.createTopics(ctx, specs); err != nil {
		return events.Topics{}, err
	}
	return topics, nil
}

// Topic creates one plain topic named Prefix+name and returns its name.
func (r *Resources) Topic(ctx context.Context, name string, partitions int32) (string, error) {
	full := r.Prefix + name
	return full, r.createTopics(ctx, []kafka.TopicSpec{{Name: full, Partitions: partitions}})
}

func (r *Resources) createTopics(ctx context.Context, specs []kafka.TopicSpec) error {
	cl, err := kafka.NewClient(r.Brokers)
	if err != nil {
		return err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// Remember them first: a partly failed creation is still cleaned up.
	for _, s := range specs {
		r.topics = append(r.topics, s.Name)
	}
	if err := kafka.EnsureTopics(cctx, cl, logging.Discard(), specs); err != nil {
		return fmt.Errorf("create bench topics: %w", err)
	}
	return nil
}

// Close deletes the bench's topics and drops its database. It runs on a
// context of its own so an interrupted run still cleans up.
func (r *Resources) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	var errs []error
	if len(r.topics) > 0 {
		cl, err := kafka.NewClient(r.Brokers)
		if err != nil {
			errs = append(errs, err)
		} else {
			res, err := kadm.NewClient(cl).DeleteTopics(ctx, r.topics...)
			if err == nil {
				err = res.Error()
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("delete bench topics: %w", err))
			}
			cl.Close()
		}
	}
	conn, err := pgx.Connect(ctx, r.adminURL)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("connect postgres: %w", err))...)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{r.database}.Sanitize()+" WITH (FORCE)"); err != nil {
		errs = append(errs, fmt.Errorf("drop bench database: %w", err))
	}
	return errors.Join(errs...)
}

func randomSuffix() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
