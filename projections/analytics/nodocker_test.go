//go:build !testcontainers

package analytics_test

import "testing"

// dockerClickHouse: without -tags testcontainers the tests use
// ERRATA_CLICKHOUSE_URL and never touch Docker (docker_test.go).
func dockerClickHouse(testing.TB) string { return "" }
