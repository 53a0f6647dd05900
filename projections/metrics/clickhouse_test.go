package metrics_test

import (
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/errata-dev/errata/internal/testenv"
)

// clickHouse gives the test a fresh database on the ClickHouse the tests use.
func clickHouse(t testing.TB) (driver.Conn, string) {
	t.Helper()
	return testenv.ClickHouse(t)
}
