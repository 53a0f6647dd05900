package analytics_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/testcontainers/testcontainers-go"
	tcclickhouse "github.com/testcontainers/testcontainers-go/modules/clickhouse"

	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/analytics"
)

// clickHouseImage is the server the Docker path starts.
const clickHouseImage = "clickhouse/clickhouse-server:25.8"

var container struct {
	once sync.Once
	url  string
	err  error
}

// dockerClickHouse starts one ClickHouse server for the whole test binary
// (testcontainers' reaper removes it at exit) and returns its HTTP URL, or
// "" when ERRATA_CLICKHOUSE_TESTCONTAINERS is not 1 or no Docker engine
// answers.
func dockerClickHouse(t testing.TB) string {
	if os.Getenv("ERRATA_CLICKHOUSE_TESTCONTAINERS") != "1" {
		return ""
	}
	container.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		provider, err := testcontainers.ProviderDocker.GetProvider()
		if err == nil {
			err = provider.Health(ctx)
		}
		if err != nil {
			t.Logf("ERRATA_CLICKHOUSE_TESTCONTAINERS=1 but no Docker engine (%v): using ERRATA_CLICKHOUSE_URL", err)
			return
		}
		ctr, err := tcclickhouse.Run(ctx, clickHouseImage)
		if err != nil {
			container.err = err
			return
		}
		endpoint, err := ctr.PortEndpoint(ctx, "8123/tcp", "")
		if err != nil {
			container.err = err
			return
		}
		container.url = "http://" + ctr.User + ":" + ctr.Password + "@" + endpoint
	})
	if container.err != nil {
		t.Fatalf("start %s: %v", clickHouseImage, container.err)
	}
	return container.url
}

// clickHouse gives the test a fresh database and the HTTP URL of its
// server: a Docker ClickHouse with ERRATA_CLICKHOUSE_TESTCONTAINERS=1 and a
// Docker engine, else ERRATA_CLICKHOUSE_URL (locally the chdb stand-in).
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
