// Command errata is Errata's single binary: the API, the workers and
// projectors, and the operator and auditor tools, as subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "errata:", err)
		os.Exit(exitCode(err))
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := &cobra.Command{
		Use:           "errata",
		Short:         "Errata: event-sourced fact-checking backend",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		serveCmd(),
		workerCmd(),
		migrateCmd(),
		topicsCmd(),
		configCmd(),
		healthcheckCmd(),
		fakeOpenAICmd(),
		contentCmd(),
		apikeyCmd(),
		selectorCmd(),
		configurationsCmd(),
		experimentsCmd(),
		reinvestigateCmd(),
		replayCmd(),
		verifyCmd(),
		projectionsCmd(),
		benchCmd(),
		auditCmd(),
		deadlettersCmd(),
		sourcesCmd(),
		evalCmd(),
	)
	return root.ExecuteContext(ctx)
}

// env is what every long-running subcommand starts from: validated
// configuration, a logger, the event registry, and the process's metrics.
type env struct {
	cfg      config.Config
	log      *slog.Logger
	registry *events.Registry
	topics   events.Topics
	metrics  *processMetrics
}

// newEnv builds the env of one process from its configuration.
func newEnv(cfg config.Config, log *slog.Logger) *env {
	return &env{cfg: cfg, log: log, registry: events.NewCatalogRegistry(), topics: events.Topics{Prefix: cfg.TopicPrefix},
		metrics: newProcessMetrics(cfg, log)}
}

// loadConfig reads the settings from the environment and checks the
// names that only the domain knows (the evidence policy).
func loadConfig() (config.Config, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return cfg, err
	}
	if _, err := evidence.PolicyByName(cfg.EvidencePolicy); err != nil {
		return config.Config{}, fmt.Errorf("invalid configuration: ERRATA_EVIDENCE_POLICY: %w", err)
	}
	return cfg, nil
}

func loadEnv(component string) (*env, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	log, err := logging.New(os.Stderr, cfg.LogFormat, cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	log = log.With("component", component)
	log.Info("configuration (secrets masked)", "settings", config.Describe(os.LookupEnv))
	if cfg.HashSecret == config.DefaultHashSecret {
		log.Warn("ERRATA_HASH_SECRET is the development default; set a long random value in production")
	}
	return newEnv(cfg, log), nil
}

func configCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print every setting with its effective value (secrets masked) and validate them",
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, line := range config.Describe(os.LookupEnv) {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			for _, v := range config.Vars {
				fmt.Fprintf(cmd.OutOrStdout(), "  %-34s %s\n", v.Name, v.Doc)
			}
			_, err := loadConfig()
			return err
		},
	}
}

// servingPool opens a pool on the serving schema; the caller closes it.
func (e *env) servingPool(ctx context.Context) (*pgxpool.Pool, error) {
	return postgres.Connect(ctx, e.cfg.DatabaseURL, e.cfg.ServingSchema)
}

// producer opens an idempotent, acks=all producing client and checks that a
// broker answers; the caller closes it.
func (e *env) producer(ctx context.Context) (*kgo.Client, error) {
	cl, err := kafka.NewClient(e.cfg.KafkaBrokers, kafka.ProducerOpts()...)
	if err != nil {
		return nil, err
	}
	if err := kafka.Ping(ctx, cl); err != nil {
		cl.Close()
		return nil, err
	}
	return cl, nil
}

// errUnhealthy is returned by healthcheck on a non-2xx answer.
var errUnhealthy = errors.New("unhealthy")

func fakeOpenAICmd() *cobra.Command {
	var addr, script, scriptLog string
	c := &cobra.Command{
		Use: "fake-openai",
		Short: "Serve a local stand-in of the OpenAI API: a demonstration (flags the first sentence with a year; checks nothing), " +
			"or, with --script, scripted claims and verdicts for end-to-end tests",
		RunE: func(cmd *cobra.Command, _ []string) error {
			var sc *fakeopenai.Script
			if script != "" {
				var err error
				if sc, err = fakeopenai.LoadScript(script); err != nil {
					return err
				}
			}
			var logFile *os.File
			if scriptLog != "" {
				if sc == nil {
					return errors.New("--script-log needs --script")
				}
				f, err := os.OpenFile(scriptLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) //nolint:gosec // G302, G304: the operator names the log (--script-log); it holds the test script's requests, nothing secret
				if err != nil {
					return err
				}
				defer f.Close()
				logFile = f
			}
			s, err := fakeopenai.Start(addr)
			if err != nil {
				return err
			}
			defer s.Close()
			mode := "demonstration"
			if sc != nil {
				if logFile != nil {
					s.Play(sc, logFile)
				} else {
					s.Play(sc, nil)
				}
				mode = "script " + script
			} else {
				s.Demo()
			}
			// The first line names the actual URL (with --addr 127.0.0.1:0 the
			// port is chosen here): launchers read it.
			fmt.Fprintf(cmd.OutOrStdout(), "fake OpenAI API on %s (%s; set OPENAI_BASE_URL=%s for errata serve and worker)\n", s.URL, mode, s.URL)
			if sc != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "its web search (SearXNG stand-in) on %s (ERRATA_SEARCH_PROVIDER=searxng ERRATA_SEARCH_BASE_URL=%s)\n",
					s.SearchURL(), s.SearchURL())
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:18090", "listen address (loopback only; port 0 picks a free one)")
	c.Flags().StringVar(&script, "script", "", "JSON script of claims and verdicts per post (see internal/testkit/fakeopenai/script.go); default: the demonstration")
	c.Flags().StringVar(&scriptLog, "script-log", "", "append one JSON line per scripted answer to this file")
	return c
}
