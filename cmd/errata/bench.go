package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/cmd/errata/bench"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
)

// errBenchFlagged: the bench ran but a check failed (errors, counts off).
var errBenchFlagged = errors.New("bench flagged: a check failed, see above")

func benchCmd() *cobra.Command {
	var opt bench.Options
	var asJSON bool
	var extensions []string
	var external string
	var externalPID int
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the system on the local services and print each figure beside a raw baseline from the same run",
		Long: "Runs in its own Postgres database and Kafka topics (created and removed by the run):\n" +
			"API register+view load against a fiber echo handler, freshness (event appended -> visible in the API)\n" +
			"against a raw Kafka round trip, the serving projector against pgx CopyFrom and a raw Kafka consume,\n" +
			"a replay from offset 0 against a raw consume of the same topics, and (with ERRATA_ELASTICSEARCH_URL and\n" +
			"ERRATA_CLICKHOUSE_URL) the search projector against a raw _bulk and the metrics projector against raw\n" +
			"clickhouse-go inserts of the same documents and rows. The table goes to stdout,\n" +
			"progress to stderr.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if external != "" {
				return benchExternal(cmd, external, externalPID, opt, asJSON)
			}
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			log, err := logging.New(os.Stderr, cfg.LogFormat, "warn")
			if err != nil {
				return err
			}
			opt.Brokers, opt.AdminDatabaseURL, opt.HashSecret = cfg.KafkaBrokers, cfg.DatabaseURL, cfg.HashSecret
			opt.IPRangeDailyCap, opt.ReadYourWritesTimeout = cfg.ViewIPRangeDailyCap, cfg.ReadYourWritesTimeout
			opt.ElasticsearchURL, opt.ClickHouseURL = cfg.ElasticsearchURL, cfg.ClickHouseURL
			opt.Progress, opt.Log = cmd.ErrOrStderr(), log.With("component", "bench")
			// The growth phase runs this binary as errata worker and serve.
			if opt.Binary, err = os.Executable(); err != nil {
				return fmt.Errorf("bench: this executable: %w", err)
			}
			extensions = slices.DeleteFunc(extensions, func(s string) bool { return s == "" })
			for _, name := range extensions {
				if !slices.Contains(apiSurfaceNames(), name) {
					return fmt.Errorf("unknown API extension %q (known: %s)", name, strings.Join(apiSurfaceNames(), ", "))
				}
			}
			opt.APIOptions = func(ctx context.Context, topics events.Topics, databaseURL string, pool *pgxpool.Pool) ([]api.Option, func(), error) {
				// The extensions see the bench's own database and topics, as
				// `errata serve` would see the configured ones.
				benchCfg := cfg
				benchCfg.DatabaseURL, benchCfg.ServingSchema, benchCfg.TopicPrefix = databaseURL, "serving", topics.Prefix
				return buildAPISurfaces(ctx, newEnv(benchCfg, opt.Log), pool, extensions)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: API extensions mounted as by errata serve: %s\n", strings.Join(extensions, ", "))
			res, err := bench.Run(cmd.Context(), opt)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				err = enc.Encode(res)
			} else {
				err = res.WriteMarkdown(out)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "bench: done in %.0f s\n", res.TotalSeconds)
			if res.Flagged {
				return errBenchFlagged
			}
			return nil
		},
	}
	f := c.Flags()
	f.DurationVar(&opt.APIDuration, "duration", 20*time.Second, "duration of each load run (API, then echo baseline)")
	f.IntVar(&opt.Concurrency, "concurrency", 8, "concurrent keep-alive clients of the load generator")
	f.IntVar(&opt.Words, "words", 300, "words per generated post")
	f.IntVar(&opt.FreshnessSamples, "freshness-samples", 200, "freshness samples (and Kafka round trips)")
	f.DurationVar(&opt.FreshnessInterval, "freshness-interval", 25*time.Millisecond, "pause between freshness samples")
	f.IntVar(&opt.ProjectionPosts, "posts", 200, "posts of the serving projection workload")
	f.IntVar(&opt.ViewsPerPost, "views-per-post", 49, "views per post of that workload")
	f.Int32Var(&opt.Partitions, "partitions", 3, "partitions of the bench's topics")
	f.StringSliceVar(&extensions, "api-extensions", apiSurfaceNames(), "API extensions to mount, as errata serve does (empty: none)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON instead of a Markdown table")
	f.IntVar(&opt.SearchRounds, "search-rounds", 10, "rounds of the search projection phase (500 registrations and completions each)")
	f.IntVar(&opt.MetricsRounds, "metrics-rounds", 3, "rounds of the metrics projection phase (the workload projected again, its rows inserted raw)")
	f.IntVar(&opt.ViewConcurrency, "view-concurrency", 64, "clients of the view-path phase (recordViewAndGetStatus of one version beside produce+select and echo baselines); 0 skips it")
	f.StringVar(&opt.ProfileDir, "profile-dir", "", "keep the view path's raw CPU profiles (<path>.cpu.pprof) in this directory, for go tool pprof")
	f.StringVar(&external, "external", "", "black-box check of a running errata serve at this URL (run with ERRATA_RATE_LIMIT=off): recordViewAndGetStatus of one registered version against /health, --view-concurrency clients, --duration each; nothing else runs")
	f.IntSliceVar(&opt.GrowthSizes, "growth", nil, "add the log-growth phase: grow one log to each of these sizes (e.g. 10000,100000,1000000) and measure the view path, "+
		"the serving projector and the RSS at each beside raw baselines at that size (off by default: 1M events take minutes)")
	f.IntVar(&opt.GrowthSlice, "growth-slice", 100000, "events the serving projector is timed over at each --growth size (20,000 took under half a second, so one checkpoint or autovacuum moved the figure by half)")
	f.BoolVar(&opt.GrowthOnly, "growth-only", false, "run the --growth phase alone")
	f.IntVar(&externalPID, "external-pid", 0, "with --external: pid of that errata serve, whose RSS is sampled during the load")
	return c
}

// benchExternal runs the black-box check against a running server.
func benchExternal(cmd *cobra.Command, url string, pid int, opt bench.Options, asJSON bool) error {
	c := opt.ViewConcurrency
	if c <= 0 {
		c = 64
	}
	res, err := bench.RunExternal(cmd.Context(), strings.TrimSuffix(url, "/"), pid, c, opt.APIDuration, opt.Words, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = res.WriteMarkdown(out)
	}
	if err != nil {
		return err
	}
	if res.View.Errors > 0 || res.Health.Errors > 0 {
		return errBenchFlagged
	}
	return nil
}
