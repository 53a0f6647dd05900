//go:build testcontainers

package analytics_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcclickhouse "github.com/testcontainers/testcontainers-go/modules/clickhouse"
)

// The Docker path, compiled only with -tags testcontainers: testcontainers
// does work when its packages initialise (it lists the machine's
// processes), so a test binary built without the tag neither links nor
// starts it. `make lint` type-checks this file.

// clickHouseImage is the server the Docker path starts.
const clickHouseImage = "clickhouse/clickhouse-server:25.8"

var container struct {
	once sync.Once
	url  string
	err  error
}

// dockerClickHouse starts one ClickHouse server for the whole test binary
// (testcontainers' reaper removes it at exit) and returns its HTTP URL, or
// "" when ERRATA_CLICKHOUSE_URL names a server (Docker is then not even
// probed) or no Docker engine answers.
func dockerClickHouse(t testing.TB) string {
	if os.Getenv("ERRATA_CLICKHOUSE_URL") != "" {
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
			t.Logf("built with -tags testcontainers but no Docker engine (%v): using the configured ClickHouse", err)
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
