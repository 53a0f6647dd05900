package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPackageOf(t *testing.T) {
	for _, tc := range []struct{ fn, want string }{
		{"runtime.mallocgc", "runtime"},
		{"encoding/json.(*decodeState).object", "encoding/json"},
		{"github.com/jackc/pgx/v5/pgconn.(*PgConn).ExecStatement", "github.com/jackc/pgx/v5/pgconn"},
		{"github.com/errata-dev/errata/events.strictUnmarshal", "github.com/errata-dev/errata/events"},
		{"gopkg.in/yaml.v3.unmarshal", "gopkg.in/yaml.v3"},
		{"main.main", "main"},
		{"main.vacuum", "main"},
		{"(unknown)", "(unknown)"},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			require.Equal(t, tc.want, packageOf(tc.fn))
		})
	}
}

func TestTopCosts(t *testing.T) {
	got := topCosts(map[string]int64{"a": 10, "b": 50, "c": 30, "d": 10}, 100, 3)
	require.Equal(t, []Cost{{"b", 0.5}, {"c", 0.3}, {"a", 0.1}}, got)
	require.Len(t, topCosts(map[string]int64{"a": 1}, 1, 3), 1)
}
