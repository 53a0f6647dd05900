// Package testenv gives integration tests isolated resources on the real
// local services started by deploy/local/up: a fresh Postgres database
// (empty, or a copy of a migrated template) and a private Kafka topic
// prefix per test. With ERRATA_INTEGRATION=1 (set by
// `make test`) an unreachable service fails the test; otherwise the test is
// skipped, so `go test ./...` stays useful without the services.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

// Integration reports whether integration tests are required to run.
func Integration() bool { return os.Getenv("ERRATA_INTEGRATION") == "1" }

func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if Integration() {
		t.Fatalf("%s unavailable (run deploy/local/up): %v", what, err)
	}
	t.Skipf("%s unavailable, skipping integration test (set ERRATA_INTEGRATION=1 to fail instead): %v", what, err)
}

// Config returns the configuration from the environment (local stack defaults).
func Config(t testing.TB) config.Config {
	t.Helper()
	c, err := config.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Suffix returns a random suffix for names of test resources.
func Suffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Postgres creates a fresh database for the test and returns its URL. The
// database is dropped when the test ends. A test that would migrate
// schemas into it first asks PostgresFrom for a copy of a migrated one.
func Postgres(t testing.TB) string {
	t.Helper()
	cfg := Config(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		unavailable(t, "postgres", err)
	}
	defer admin.Close(ctx)
	name, err := createDatabase(ctx, t, admin, cfg.DatabaseURL, "")
	if err != nil {
		t.Fatalf("create database: %v", err)
	}
	return databaseURL(t, cfg.DatabaseURL, name)
}

// createDatabase creates a database for the test, a copy of template
// (empty: the server's default), to be dropped when the test ends.
func createDatabase(ctx context.Context, t testing.TB, admin *pgx.Conn, adminURL, template string) (string, error) {
	name := "errata_test_" + Suffix()
	stmt := "CREATE DATABASE " + name
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := admin.Exec(ctx, stmt); err != nil {
		return "", err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, adminURL)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return name, nil
}

// withDatabase is the URL u naming database name instead.
func withDatabase(u, name string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("database url: %w", err)
	}
	parsed.Path = "/" + name
	return parsed.String(), nil
}

func databaseURL(t testing.TB, adminURL, name string) string {
	t.Helper()
	u, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Kafka returns the brokers and a private topic prefix whose event topics
// (and dead-letter topic) exist with partitions partitions. They are deleted
// when the test ends.
func Kafka(t testing.TB, partitions int32) ([]string, events.Topics) {
	t.Helper()
	cfg := Config(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// kadm answers metadata from the client's cache for MetadataMinAge
	// (5s by default): with it, waitForLeaders would see the topics as
	// missing, as EnsureTopics listed them, for 5s whatever the broker says.
	cl, err := kafka.NewClient(cfg.KafkaBrokers, kgo.MetadataMinAge(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := kafka.Ping(ctx, cl); err != nil {
		unavailable(t, "kafka", err)
	}
	topics := events.Topics{Prefix: "test." + strings.ToLower(Suffix()) + "."}
	specs := kafka.TopicSpecs(topics.Names(events.NewCatalogRegistry()), partitions)
	if err := kafka.EnsureTopics(ctx, cl, logging.Discard(), specs); err != nil {
		t.Fatalf("create topics: %v", err)
	}
	waitForLeaders(ctx, t, kadm.NewClient(cl), specs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cl, err := kafka.NewClient(cfg.KafkaBrokers)
		if err != nil {
			return
		}
		defer cl.Close()
		names := make([]string, len(specs))
		for i, s := range specs {
			names[i] = s.Name
		}
		_, _ = kadm.NewClient(cl).DeleteTopics(ctx, names...)
	})
	return cfg.KafkaBrokers, topics
}

// waitForLeaders waits until the broker's metadata lists every partition of
// the new topics with a leader: right after creation, on a loaded machine,
// a produce or offset listing can still answer UNKNOWN_TOPIC_OR_PARTITION.
func waitForLeaders(ctx context.Context, t testing.TB, adm *kadm.Client, specs []kafka.TopicSpec) {
	t.Helper()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	for {
		md, err := adm.Metadata(ctx, names...)
		ready := err == nil
		if ready {
			for _, name := range names {
				td, ok := md.Topics[name]
				if !ok || td.Err != nil || len(td.Partitions) == 0 {
					ready = false
					break
				}
				for _, p := range td.Partitions {
					if p.Err != nil || p.Leader < 0 {
						ready = false
					}
				}
			}
		}
		if ready {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topics have no leaders yet: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Eventually polls cond until it holds or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var msg string
	for time.Now().Before(deadline) {
		var ok bool
		if ok, msg = cond(); ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("condition not met within %s: %s", timeout, msg)
}
