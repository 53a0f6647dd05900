package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// Every read model the commands name is wired: the worker's consumer
// groups and the topics they read (which /readyz and the lag metrics
// report, and which replays read), and the rebuilds `errata replay`,
// `verify` and `projections` know are exactly those names. Nothing here
// reaches a service.
func TestProjectionsAreWiredByName(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t)
	cfg.TopicPrefix = "wiring."
	e := newEnv(cfg, logging.Discard())

	require.Equal(t, []string{"audit", "metrics", "search", "serving"}, projectorNames())
	groups, err := projectorGroups(e)
	require.NoError(t, err)
	all := []string{"wiring.analyses", "wiring.api-keys", "wiring.investigations", "wiring.posts"}
	want := map[string][]string{
		"audit":   {"wiring.investigations", "wiring.posts", "wiring.analyses"},
		"metrics": {"wiring.posts", "wiring.investigations", "wiring.analyses"},
		"search":  all,
		"serving": all,
	}
	require.Len(t, groups, len(want))
	for i, name := range projectorNames() {
		g := groups[i]
		require.Equal(t, name, g.Name)
		require.Equal(t, "wiring.projector."+name, g.Group)
		require.ElementsMatch(t, want[name], g.Topics, name)
		p, err := projectionOf(e, name)
		require.NoError(t, err)
		require.NotNil(t, p.start, name)
		require.Equal(t, g.Topics, p.store.Topics(), name)
	}

	_, err = projectionOf(e, "index")
	require.EqualError(t, err, `unknown projector "index" (known: audit, metrics, search, serving)`)

	r, release, err := openRebuilder(context.Background(), e, io.Discard)
	require.NoError(t, err)
	defer release()
	require.Equal(t, projectorNames(), r.Names())
}

// The surfaces of `errata serve` mount in one written order, observability
// first: its middleware must see every route mounted after it.
func TestAPISurfacesMountObservabilityFirst(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"observability", "backlog", "graphql"}, apiSurfaceNames())
}
