package analytics_test

import (
	"context"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/analytics"
)

// clickHouse gives the test a fresh database and the HTTP URL of its
// server: ERRATA_CLICKHOUSE_URL (locally the chdb stand-in) or, in a test
// binary built with -tags testcontainers, a ClickHouse in Docker when that
// variable is unset and a Docker engine answers (docker_test.go).
func clickHouse(t testing.TB) (driver.Conn, string, string) {
	t.Helper()
	url := dockerClickHouse(t)
	if url == "" {
		conn, db := testenv.ClickHouse(t)
		return conn, db, testenv.Config(t).ClickHouseURL
	}
	db := "errata_test_" + testenv.Suffix()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := analytics.Open(ctx, url, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" SYNC")
		_ = conn.Close()
	})
	return conn, db, url
}
