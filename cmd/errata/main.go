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

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/internal/logging"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "errata:", err)
		os.Exit(1)
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
		contentCmd(),
		apikeyCmd(),
		selectorCmd(),
	)
	return root.ExecuteContext(ctx)
}

// env is what every long-running subcommand starts from: validated
// configuration, a logger, and the event registry.
type env struct {
	cfg      config.Config
	log      *slog.Logger
	registry *events.Registry
	topics   events.Topics
}

func loadEnv(component string) (*env, error) {
	cfg, err := config.FromEnv()
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
	return &env{cfg: cfg, log: log, registry: events.NewCatalogRegistry(), topics: events.Topics{Prefix: cfg.TopicPrefix}}, nil
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
			_, err := config.FromEnv()
			return err
		},
	}
}

// errUnhealthy is returned by healthcheck on a non-2xx answer.
var errUnhealthy = errors.New("unhealthy")
