package main

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/consumers/analyst"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/analyses"
	"github.com/errata-dev/errata/projections/serving"
)

// submitKeyFactor is how much more a valid instance API key may submit
// than an anonymous client (ERRATA_SUBMIT_RATE, _BURST).
const submitKeyFactor = 10

// analysesOption enables, on `errata serve`, the submission workbench (the
// /api/v1/analyses API and the /app page) and the tRPC verdict namespace:
// requests are appended under the analyst's current prompt version, pages
// are fetched through the SSRF-safe client, jobs are read from the serving
// projection and their event streams from the analyses topic itself.
func analysesOption(e *env, pool *pgxpool.Pool, appender *producers.Appender) (api.Option, func(), error) {
	version, err := analyst.PromptVersion(nil)
	if err != nil {
		return nil, nil, err
	}
	requests, err := analyses.New(appender, version)
	if err != nil {
		return nil, nil, err
	}
	client, err := httpsafe.New(httpsafe.WithTimeout(analyses.DefaultPageTimeout))
	if err != nil {
		return nil, nil, err
	}
	submit, keySubmit, err := submitRateLimits(e)
	if err != nil {
		return nil, nil, err
	}
	log, err := kafka.NewKeyReader(e.cfg.KafkaBrokers)
	if err != nil {
		return nil, nil, err
	}
	reader := serving.NewReader(pool)
	return api.WithAnalyses(api.Analyses{
		Requests: requests,
		Pages:    analyses.NewPageFetcher(client, analyses.DefaultPageTimeout, analyses.DefaultPageMaxBytes),
		Reader:   reader,
		Versions: reader,
		Log:      log,
		Topic:    e.topics.Name(events.TopicAnalyses),
		Registry: e.registry,

		SubmitLimit:    submit,
		KeySubmitLimit: keySubmit,
	}), log.Close, nil
}

// submitRateLimits ration submissions per client and per instance key
// (nil, nil when ERRATA_RATE_LIMIT=off).
func submitRateLimits(e *env) (anonymous, keyed *ratelimit.Limiter, err error) {
	if !e.cfg.RateLimit {
		return nil, nil, nil
	}
	perSecond := float64(e.cfg.SubmitRate) / 3600
	anonymous, err = ratelimit.New(ratelimit.Limit{PerSecond: perSecond, Burst: e.cfg.SubmitBurst}, e.cfg.RateLimitClients, nil)
	if err != nil {
		return nil, nil, err
	}
	keyed, err = ratelimit.New(ratelimit.Limit{PerSecond: perSecond * submitKeyFactor, Burst: e.cfg.SubmitBurst * submitKeyFactor},
		e.cfg.RateLimitClients, nil)
	return anonymous, keyed, err
}
