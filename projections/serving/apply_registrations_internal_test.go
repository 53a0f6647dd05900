package serving

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestQueueUpsertsOrder: folded rows go to the server in key order (so two
// partitions' transactions lock shared rows in the same order), merged in
// log order; unfolded rows keep log order, in rounds of distinct keys.
func TestQueueUpsertsOrder(t *testing.T) {
	type row struct{ key, val string }
	rows := []row{{"c", "1"}, {"a", "2"}, {"c", "3"}, {"b", "4"}}
	for _, tc := range []struct {
		name string
		fold bool
		want [][]string // each statement's keys and values
	}{
		{"folded", true, [][]string{{"a", "b", "c"}, {"2", "4", "1+3"}}},
		{"unfolded", false, [][]string{{"c", "a", "b"}, {"1", "2", "4"}, {"c"}, {"3"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &pgx.Batch{}
			queueUpserts(b, tc.fold, append([]row(nil), rows...), func(r row) string { return r.key },
				func(acc *row, next row) { acc.val += "+" + next.val }, "UPSERT",
				func(rs []row) []any {
					return []any{column(rs, func(r row) string { return r.key }), column(rs, func(r row) string { return r.val })}
				})
			var got [][]string
			for _, q := range b.QueuedQueries {
				got = append(got, q.Arguments[0].([]string), q.Arguments[1].([]string))
			}
			require.Equal(t, tc.want, got)
		})
	}
}
