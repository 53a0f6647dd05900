package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

func TestReaderInvestigationsByStatus(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)

	empty, err := rd.InvestigationsByStatus(ctx)
	require.NoError(t, err)
	require.Empty(t, empty)

	a := registration(events.PlatformX, "ops-1", "First post for the counts.")
	b := registration(events.PlatformX, "ops-2", "Second post for the counts.")
	c := registration(events.PlatformX, "ops-3", "Third post for the counts.")
	p.handle(t, records(t, 0, 0,
		timed{a, base}, timed{b, base}, timed{c, base},
		timed{investigationOf(a), base.Add(time.Minute)},
		timed{investigationOf(b), base.Add(time.Minute)},
		timed{investigationOf(c), base.Add(time.Minute)},
	)...)
	_, err = p.pool.Exec(ctx, `UPDATE investigations SET status = 'COMPLETE' WHERE post_version_id = $1`, c.PostVersionID)
	require.NoError(t, err)

	got, err := rd.InvestigationsByStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"PENDING": 2, "COMPLETE": 1}, got)
}
