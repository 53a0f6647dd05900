package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:19092"}, c.KafkaBrokers)
	require.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
	require.Equal(t, "serving", c.ServingSchema)
	require.Equal(t, 5*time.Second, c.ReadYourWritesTimeout)
	require.Equal(t, 10, c.ViewIPRangeDailyCap)
}

func TestInvalidValuesAreAllReported(t *testing.T) {
	_, err := config.Load(env(map[string]string{
		"ERRATA_KAFKA_BROKERS":  "no-port",
		"ERRATA_DATABASE_URL":   "mysql://x/y",
		"ERRATA_HTTP_ADDR":      "8080",
		"ERRATA_LOG_LEVEL":      "loud",
		"ERRATA_HASH_SECRET":    "short",
		"ERRATA_SERVING_SCHEMA": "Robert'); DROP",
	}))
	require.Error(t, err)
	for _, name := range []string{"ERRATA_KAFKA_BROKERS", "ERRATA_DATABASE_URL", "ERRATA_HTTP_ADDR", "ERRATA_LOG_LEVEL", "ERRATA_HASH_SECRET", "ERRATA_SERVING_SCHEMA"} {
		require.ErrorContains(t, err, name)
	}
}

// Kafka carries a partition count as an int32: a larger one is refused,
// never wrapped around.
func TestPartitionsFitKafka(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int32
		err   string
	}{
		{"6", 6, ""},
		{"2147483647", 2147483647, ""},
		{"2147483648", 0, `ERRATA_KAFKA_PARTITIONS: "2147483648" is not a positive integer of at most 2147483647`},
		{"4294967302", 0, `ERRATA_KAFKA_PARTITIONS: "4294967302" is not a positive integer of at most 2147483647`},
		{"0", 0, `ERRATA_KAFKA_PARTITIONS: "0" is not a positive integer of at most 2147483647`},
		{"-1", 0, `ERRATA_KAFKA_PARTITIONS: "-1" is not a positive integer of at most 2147483647`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"ERRATA_KAFKA_PARTITIONS": tc.value}))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c.TopicPartitions)
		})
	}
}

func TestDescribeMasksSecrets(t *testing.T) {
	lines := strings.Join(config.Describe(env(map[string]string{
		"ERRATA_DATABASE_URL": "postgres://errata:hunter2hunter2@db:5432/errata",
		"ERRATA_HASH_SECRET":  "a-very-secret-value-123",
	})), "\n")
	require.NotContains(t, lines, "hunter2")
	require.NotContains(t, lines, "a-very-secret-value-123")
	require.Contains(t, lines, "postgres://errata:xxxxx@db:5432/errata")
	require.Contains(t, lines, "ERRATA_HTTP_ADDR=127.0.0.1:8080 (default)")
}
