package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// A ClickHouse dump splits into one checksum per table: its rows (the
// lines after its header) and their sha256; lines before the first header
// belong to no table.
func TestAnalyticsTableSums(t *testing.T) {
	t.Parallel()
	dump := "stray line\n" +
		"# investigations (id, status) 2 rows\n" +
		"i1\tCOMPLETE\n" +
		"i2\tFAILED\n" +
		"# views (id) 0 rows\n" +
		"# _parked (topic, partition, offset) 1 rows\n" +
		"errata.posts\t0\t7\n"
	require.Equal(t, []TableSum{
		{Table: "clickhouse investigations", Rows: 2, SHA256: sha("i1\tCOMPLETE\ni2\tFAILED\n")},
		{Table: "clickhouse views", Rows: 0, SHA256: sha("")},
		{Table: "clickhouse _parked", Rows: 1, SHA256: sha("errata.posts\t0\t7\n")},
	}, analyticsTableSums([]byte(dump)))
	require.Empty(t, analyticsTableSums(nil))
}

// names are store names as a catalog lists them.
type names struct {
	list []string
	i    int
	err  error
}

func (n *names) Next() bool { n.i++; return n.i <= len(n.list) }

func (n *names) Scan(dest ...any) error {
	*(dest[0].(*string)) = n.list[n.i-1]
	return nil
}

func (n *names) Err() error { return n.err }

// Only base and base_g<N> (N >= 2) are generations of base: not another
// store that shares its prefix.
func TestGenerationsIn(t *testing.T) {
	t.Parallel()
	gens, err := generationsIn(&names{list: []string{"serving", "serving_g2", "serving_g10", "serving_gx", "serving_g1",
		"serving_archive", "servings", "audit_g3"}}, "serving")
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 10}, gens)

	boom := errors.New("connection lost")
	_, err = generationsIn(&names{list: []string{"serving"}, err: boom}, "serving")
	require.ErrorIs(t, err, boom)
}

func TestDiffLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		live, fresh []string
		max         int
		want        []DiffLine
	}{
		{"identical", []string{"a", "b"}, []string{"a", "b"}, 10, nil},
		{"order does not matter", []string{"b", "a"}, []string{"a", "b"}, 10, nil},
		{"one changed row", []string{"a", "b1"}, []string{"a", "b2"}, 10,
			[]DiffLine{{Live: true, Line: "b1"}, {Live: false, Line: "b2"}}},
		{"a repeated row counts", []string{"a", "a"}, []string{"a"}, 10, []DiffLine{{Live: true, Line: "a"}}},
		{"bounded", []string{"x", "y", "z"}, []string{"u"}, 2, []DiffLine{{Live: true, Line: "x"}, {Live: true, Line: "y"}}},
		{"nothing at all", nil, nil, 10, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, diffLines(tc.live, tc.fresh, tc.max))
		})
	}
}
