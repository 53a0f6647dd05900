package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ClickHouseOptions turns ERRATA_CLICKHOUSE_URL (http://[user:password@]host:port[/database])
// into clickhouse-go options for the HTTP interface without compression, the way the local
// stack (deploy/local's chdb stand-in) and production are reached.
func ClickHouseOptions(rawURL string) (*clickhouse.Options, error) {
	opts, err := clickhouse.ParseDSN(rawURL)
	if err != nil {
		return nil, fmt.Errorf("parse ERRATA_CLICKHOUSE_URL: %w", err)
	}
	if opts.Protocol != clickhouse.HTTP {
		return nil, fmt.Errorf("ERRATA_CLICKHOUSE_URL must be an http:// or https:// URL, got protocol %s", opts.Protocol)
	}
	opts.Compression = &clickhouse.Compression{Method: clickhouse.CompressionNone}
	opts.DialTimeout = 5 * time.Second
	return opts, nil
}

// ClickHouse creates a fresh database for the test on the ClickHouse named by
// ERRATA_CLICKHOUSE_URL and returns an HTTP connection whose default database it is,
// plus the database's name. The database is dropped when the test ends.
func ClickHouse(t testing.TB) (driver.Conn, string) {
	t.Helper()
	cfg := Config(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := openClickHouse(t, cfg.ClickHouseURL, "")
	if err := admin.Ping(ctx); err != nil {
		_ = admin.Close()
		unavailable(t, "clickhouse", err)
	}
	name := "errata_test_" + Suffix()
	if err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		t.Fatalf("create clickhouse database: %v", err)
	}
	_ = admin.Close()

	conn := openClickHouse(t, cfg.ClickHouseURL, name)
	t.Cleanup(func() {
		_ = conn.Close()
		dropClickHouseDatabases(t, cfg.ClickHouseURL, name)
	})
	return conn, name
}

func openClickHouse(t testing.TB, rawURL, database string) driver.Conn {
	t.Helper()
	opts, err := ClickHouseOptions(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	if database != "" {
		opts.Auth.Database = database
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		unavailable(t, "clickhouse", err)
	}
	return conn
}
