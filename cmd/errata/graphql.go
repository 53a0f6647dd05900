package main

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/projections/serving"
)

// newGraphQL mounts the public GraphQL API (POST and GET /graphql, the
// explorer at /graphiql) on `errata serve`, its resolvers wired to the
// read models: the serving projection (the pool follows replays), the
// search alias, the metrics database and the audit projection (both follow
// replays too).
func newGraphQL(ctx context.Context, e *env, pool *pgxpool.Pool) (api.Option, func(), error) {
	searcher, err := e.searcher(ctx)
	if err != nil {
		return nil, nil, err
	}
	analysisSearcher, err := e.analysisSearcher(ctx)
	if err != nil {
		return nil, nil, err
	}
	metricsReader, closeMetrics, err := e.metricsReader(ctx)
	if err != nil {
		return nil, nil, err
	}
	trails, closeTrails, err := e.auditReader(ctx)
	if err != nil {
		closeMetrics()
		return nil, nil, err
	}
	limit, err := graphQLRateLimit(e.cfg)
	if err != nil {
		closeTrails()
		closeMetrics()
		return nil, nil, err
	}
	log := e.log.With("component", "graphql")
	reader := serving.NewReader(pool)
	h := adaptor.HTTPHandler(graphql.NewHandler(graphql.NewResolver(graphql.Deps{
		Serving:        reader,
		Search:         searcher,
		Metrics:        metricsReader,
		Trails:         trails,
		Control:        reader,
		Analyses:       reader,
		AnalysisSearch: analysisSearcher,
		AnalysisTrails: trails,
		AppealTrails:   trails,
		Log:            log,
	}), graphql.Options{RateLimit: limit, ClientKey: api.ClientKeyOfRequest(e.cfg.TrustedProxyHeader)}))
	explorer := adaptor.HTTPHandler(graphql.ExplorerHandler(log))
	mount := func(app *fiber.App) {
		app.Get("/graphql", h)
		app.Post("/graphql", h)
		app.Options("/graphql", h)
		app.Get("/graphiql", explorer)
		app.Get("/graphiql/*", explorer)
	}
	return api.WithRoutes(mount), func() { closeTrails(); closeMetrics() }, nil
}
