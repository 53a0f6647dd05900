package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/api"
	"github.com/errata-dev/errata/consumers/analyst"
	"github.com/errata-dev/errata/consumers/appeals"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/producers"
	producerappeals "github.com/errata-dev/errata/producers/appeals"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/producers/ingest/canonical"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// apiSurface is a surface `errata serve` adds to the extension's API. It
// gets the serving pool and returns an api.Option plus a release function.
type apiSurface struct {
	name  string
	build func(ctx context.Context, e *env, pool *pgxpool.Pool) (api.Option, func(), error)
}

// apiSurfaces are the surfaces of `errata serve` (which `errata bench` can
// mount too), in the order their middleware and routes mount, before the
// API's own: observability first, so that its request metrics and request
// log see every route mounted after it.
func apiSurfaces() []apiSurface {
	return []apiSurface{
		{name: "observability", build: newAPIObservability}, // /livez, /readyz, request metrics and log
		{name: "backlog", build: newAPIBacklog},             // views of versions the projection lacks
		{name: "graphql", build: newGraphQL},                // /graphql, /graphiql
	}
}

// buildAPISurfaces builds the named surfaces in mount order; release
// undoes those built, last first.
func buildAPISurfaces(ctx context.Context, e *env, pool *pgxpool.Pool, names []string) (opts []api.Option, release func(), err error) {
	var releases []func()
	release = func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	for _, s := range apiSurfaces() {
		if !slices.Contains(names, s.name) {
			continue
		}
		opt, closeFn, err := s.build(ctx, e, pool)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("api %s: %w", s.name, err)
		}
		opts, releases = append(opts, opt), append(releases, closeFn)
	}
	return opts, release, nil
}

// apiSurfaceNames are the surfaces' names, in mount order.
func apiSurfaceNames() []string {
	var out []string
	for _, s := range apiSurfaces() {
		out = append(out, s.name)
	}
	return out
}

func serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API (extension tRPC procedures, health)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("api")
			if err != nil {
				return err
			}
			// A generation switch moves the pool, then drops the status
			// cache (what it holds is of the old schema).
			var statusCache atomic.Pointer[serving.StatusCache]
			pool, err := e.followingPool(ctx, serving.ProjectorName, e.cfg.ServingSchema, func() {
				if c := statusCache.Load(); c != nil {
					c.Reset()
				}
			})
			if err != nil {
				return err
			}
			defer pool.Close()
			var cacheOpts []api.Option
			if e.cfg.StatusCacheEntries > 0 {
				cache, stopCache := startStatusCache(ctx, e, pool)
				defer stopCache()
				statusCache.Store(cache)
				cacheOpts = append(cacheOpts, api.WithStatusCache(cache))
			} else {
				e.log.Info("status cache off (ERRATA_STATUS_CACHE_ENTRIES=0): every status is read from Postgres")
			}
			producer, err := e.producer(ctx)
			if err != nil {
				return err
			}
			defer producer.Close()
			appender := producers.NewAppender(producer, e.registry, e.topics, nil)
			var ingestOpts []ingest.Option
			if e.cfg.ServerVerification {
				safeClient, err := httpsafe.New()
				if err != nil {
					return err
				}
				fetcher, err := canonical.NewFetcher(safeClient, canonical.Endpoints{}, e.log)
				if err != nil {
					return err
				}
				ingestOpts = append(ingestOpts, ingest.WithVerifier(fetcher, e.cfg.VerifyTimeout))
			} else {
				e.log.Warn("server verification is off: every registered version is CLIENT_FALLBACK")
			}
			ks, err := e.keyStore(ctx, pool)
			if err != nil {
				return err
			}
			var keys investigations.KeyStore
			if ks != nil {
				keys = ks
			} else {
				e.log.Info("no ERRATA_KEYSTORE_KEYS: investigateNow accepts instance API keys only")
			}
			reader := serving.NewReader(pool)
			opts := []api.Option{api.WithInvestigations(investigations.New(appender, keys, nil), reader),
				api.WithAssigner(investigations.NewServingAssigner(reader))}
			opts = append(opts, cacheOpts...)
			workbench, closeWorkbench, err := analysesOption(e, pool, appender)
			if err != nil {
				return err
			}
			defer closeWorkbench()
			opts = append(opts, workbench)
			appealReader := producerappeals.ServingReader{R: reader}
			opts = append(opts, api.WithAppeals(producerappeals.New(appender, appealReader, net.DefaultResolver,
				producerappeals.Limits{PerDay: e.cfg.AppealsPerDay, OpenPerClaim: e.cfg.AppealsOpenPerClaim}, nil), appealReader))
			// Observability, backlog, GraphQL: in their middleware order.
			surfaces, closeSurfaces, err := buildAPISurfaces(ctx, e, pool, apiSurfaceNames())
			if err != nil {
				return err
			}
			defer closeSurfaces()
			opts = append(opts, surfaces...)
			procedureLimit, err := tRPCRateLimit(e.cfg)
			if err != nil {
				return err
			}
			srv, err := api.New(api.Config{
				MinExtensionVersion:   e.cfg.MinExtensionVersion,
				TrustedProxyHeader:    e.cfg.TrustedProxyHeader,
				RateLimit:             procedureLimit,
				ReadYourWritesTimeout: e.cfg.ReadYourWritesTimeout,
				OpenAIBaseURL:         e.cfg.OpenAIBaseURL,
			}, ingest.NewService(appender, ingestOpts...), reader,
				pgproj.NewWatermark(pool, serving.ProjectorName), ingest.NewHasher(e.cfg.HashSecret), e.log,
				opts...)
			if err != nil {
				return err
			}
			e.log.Info("api listening", "addr", "http://"+e.cfg.HTTPAddr)
			return srv.Listen(ctx, e.cfg.HTTPAddr)
		},
	}
}

func migrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the Postgres migrations (serving projection, run states, key store)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("migrate")
			if err != nil {
				return err
			}
			pool, err := e.servingPool(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			if err := e.servingStore().Migrate(ctx, pool, 1); err != nil {
				return err
			}
			for _, schema := range []string{investigator.ProjectorName, investigator.ValidatorProjectorName} {
				if err := pgproj.Migrate(ctx, pool, schema, runstate.Migrations(), e.log); err != nil {
					return err
				}
			}
			if err := keystore.Migrate(ctx, pool, e.log); err != nil {
				return err
			}
			// The stores of the other read models and stages, each
			// idempotent.
			for _, m := range []struct {
				name    string
				migrate func(context.Context, *env) error
			}{
				{analyst.ProjectorName, migrateAnalyst},
				{appeals.ProjectorName, migrateAppeals},
				{audit.ProjectorName, migrateAudit},
				{analytics.ProjectorName, migrateMetrics},
				{search.ProjectorName, migrateSearch},
				{"targets", migrateTargets},
			} {
				if err := m.migrate(ctx, e); err != nil {
					return fmt.Errorf("migrate %s: %w", m.name, err)
				}
			}
			e.log.Info("migrations up to date", "schema", e.cfg.ServingSchema)
			return nil
		},
	}
}

func topicsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "topics",
		Short: "Create the event topics (retention forever; ERRATA_KAFKA_REPLICATION_FACTOR, _MIN_INSYNC_REPLICAS) and the dead-letter topic",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			e, err := loadEnv("topics")
			if err != nil {
				return err
			}
			cl, err := kafka.NewClient(e.cfg.KafkaBrokers)
			if err != nil {
				return err
			}
			defer cl.Close()
			specs, err := kafka.Replicated(kafka.TopicSpecs(e.topics.Names(e.registry), e.cfg.TopicPartitions),
				e.cfg.KafkaReplicationFactor, e.cfg.KafkaMinInsyncReplicas)
			if err != nil {
				return err
			}
			return kafka.EnsureTopics(ctx, cl, e.log, specs)
		},
	}
}

func healthcheckCmd() *cobra.Command {
	var url string
	c := &cobra.Command{
		Use:   "healthcheck",
		Short: "GET a URL and exit 0 on a 2xx answer (container health checks)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return fmt.Errorf("%w: %s answered %d", errUnhealthy, url, resp.StatusCode)
			}
			return nil
		},
	}
	c.Flags().StringVar(&url, "url", "http://127.0.0.1:8080/health", "URL to check")
	return c
}

func contentCmd() *cobra.Command {
	c := &cobra.Command{Use: "content", Short: "Content canonicalization tools for users and auditors"}
	var platform, htmlFile, textFile string
	normalize := &cobra.Command{
		Use:   "normalize",
		Short: "Print the canonical text and version identity of a post body as JSON",
		Long: "Reads HTML (--html-file; for WIKIPEDIA the Parse API HTML) or plain text (--text-file)\n" +
			"and prints normalizedText, contentHash, occurrencesHash, versionHash, wordCount and utf16Length\n" +
			"exactly as the server computes them (no image occurrences).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (htmlFile == "") == (textFile == "") {
				return fmt.Errorf("give exactly one of --html-file or --text-file")
			}
			var text string
			if textFile != "" {
				raw, err := os.ReadFile(textFile) //nolint:gosec // G304: the operator names the file (--text-file)
				if err != nil {
					return err
				}
				text = content.Normalize(string(raw))
			} else {
				raw, err := os.ReadFile(htmlFile) //nolint:gosec // G304: the operator names the file (--html-file)
				if err != nil {
					return err
				}
				switch platform {
				case "LESSWRONG":
					text, err = content.LessWrongHTMLToText(string(raw))
				case "SUBSTACK":
					text, err = content.SubstackHTMLToText(string(raw))
				case "WIKIPEDIA":
					text, err = content.WikipediaHTMLToText(string(raw))
				case "X", "BLUESKY", "THREADS":
					err = fmt.Errorf("%s posts are plain text: use --text-file", platform)
				default:
					err = fmt.Errorf("--platform must be LESSWRONG, X, SUBSTACK, WIKIPEDIA, BLUESKY or THREADS")
				}
				if err != nil {
					return err
				}
			}
			id, err := content.ComputeVersionIdentity(text, nil)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{
				"platform":        platform,
				"normalizedText":  text,
				"contentHash":     id.ContentHash,
				"occurrencesHash": id.OccurrencesHash,
				"versionHash":     id.VersionHash,
				"wordCount":       content.WordCount(text),
				"utf16Length":     content.UTF16Length(text),
			})
		},
	}
	normalize.Flags().StringVar(&platform, "platform", "", "LESSWRONG, X, SUBSTACK, WIKIPEDIA, BLUESKY or THREADS")
	normalize.Flags().StringVar(&htmlFile, "html-file", "", "HTML input file")
	normalize.Flags().StringVar(&textFile, "text-file", "", "plain text input file")
	_ = normalize.MarkFlagRequired("platform")
	c.AddCommand(normalize)
	return c
}
