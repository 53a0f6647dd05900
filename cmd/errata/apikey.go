package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// apikeyCmd manages instance API keys. Keys are events (apikey.added.v1,
// apikey.revoked.v1) carrying only the sha256 of the key; list reads the
// serving projection. No subcommand ever prints or logs key material except
// the one line of `add` that hands the new key to the operator.
func apikeyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "apikey",
		Short: "Manage instance API keys (add, revoke, list); only their sha256 is stored",
	}
	c.AddCommand(apikeyAddCmd(), apikeyRevokeCmd(), apikeyListCmd())
	return c
}

// apikeyOpTimeout bounds connecting and appending.
const apikeyOpTimeout = 30 * time.Second

// keyTools are what the apikey subcommands work with.
type keyTools struct {
	pool      *pgxpool.Pool
	reader    *serving.Reader
	watermark *pgproj.Watermark
	service   *apikeys.Service // nil unless opened withKafka
	producer  *kgo.Client
}

func (k *keyTools) close() {
	if k.producer != nil {
		k.producer.Close()
	}
	k.pool.Close()
}

// openKeyTools connects to the serving database and, withKafka, to the log.
func openKeyTools(ctx context.Context, withKafka bool) (*keyTools, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, apikeyOpTimeout)
	defer cancel()
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL, cfg.ServingSchema)
	if err != nil {
		return nil, err
	}
	k := &keyTools{pool: pool, reader: serving.NewReader(pool), watermark: pgproj.NewWatermark(pool, serving.ProjectorName)}
	if withKafka {
		k.producer, err = kafka.NewClient(cfg.KafkaBrokers, kafka.ProducerOpts()...)
		if err == nil {
			err = kafka.Ping(ctx, k.producer)
		}
		if err != nil {
			k.close()
			return nil, err
		}
		appender := producers.NewAppender(k.producer, events.NewCatalogRegistry(), events.Topics{Prefix: cfg.TopicPrefix}, nil)
		k.service = apikeys.NewService(appender)
	}
	return k, nil
}

// waitApplied waits until the serving projection applied pos, so the change
// is in effect for the API; it reports on w and never fails the command
// (the event is in the log either way).
func (k *keyTools) waitApplied(ctx context.Context, w io.Writer, pos producers.Position, wait time.Duration, done string) {
	if wait <= 0 {
		fmt.Fprintln(w, "Not waiting for the serving projection (--wait 0): the change takes effect once `errata worker` applies it.")
		return
	}
	err := k.watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, wait)
	switch {
	case err == nil:
		fmt.Fprintln(w, done)
	case errors.Is(err, pgproj.ErrWatermarkTimeout):
		fmt.Fprintf(w, "warning: the serving projection did not apply the change within %s (is `errata worker` running?); "+
			"it takes effect as soon as the worker catches up.\n", wait)
	default:
		fmt.Fprintf(w, "warning: could not confirm that the serving projection applied the change: %v\n", err)
	}
}

func apikeyAddCmd() *cobra.Command {
	var label string
	var wait time.Duration
	c := &cobra.Command{
		Use:   "add --label LABEL",
		Short: "Create an instance API key and print it once",
		Long: "Generates a random key (256 bits), appends apikey.added.v1 with its sha256 and prints the key\n" +
			"on stdout, alone on one line. It cannot be shown again. Notes go to stderr. Unless --wait is 0,\n" +
			"waits until the serving projection has the key, so that it authenticates immediately.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			k, err := openKeyTools(ctx, true)
			if err != nil {
				return err
			}
			defer k.close()
			actx, cancel := context.WithTimeout(ctx, apikeyOpTimeout)
			added, err := k.service.Add(actx, label)
			cancel()
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			fmt.Fprintln(cmd.OutOrStdout(), added.Key.Reveal())
			fmt.Fprintf(stderr, "Added instance API key %s (label %q).\n", added.KeyID, added.Label)
			fmt.Fprintln(stderr, "The key above is shown only this once and cannot be shown again: only its sha256 is stored. "+
				"Store it safely and enter it in the extension's settings.")
			k.waitApplied(ctx, stderr, added.Position, wait, "The key is active.")
			return nil
		},
	}
	c.Flags().StringVar(&label, "label", "", "what the key is for (required, at most 200 bytes)")
	c.Flags().DurationVar(&wait, "wait", 15*time.Second, "how long to wait for the serving projection (0: do not wait)")
	_ = c.MarkFlagRequired("label")
	return c
}

func apikeyRevokeCmd() *cobra.Command {
	var reason string
	var wait time.Duration
	var force bool
	c := &cobra.Command{
		Use:   "revoke <key-id|key>",
		Short: "Revoke an instance API key (permanently)",
		Long: "Appends apikey.revoked.v1 for the key named by its id (as listed) or by the key itself.\n" +
			"The key must be known to the serving projection unless --force is given. Prefer the id:\n" +
			"a key given on the command line ends up in shell history.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			id, isKey, err := apikeys.ResolveKeyID(args[0])
			if err != nil {
				return err
			}
			k, err := openKeyTools(ctx, true)
			if err != nil {
				return err
			}
			defer k.close()
			out := cmd.OutOrStdout()
			existing, err := k.reader.APIKeyByID(ctx, id)
			switch {
			case errors.Is(err, serving.ErrNotFound) && !force:
				// Never echo the argument: it may be a key.
				if isKey {
					return errors.New("no instance API key matches the given key (see `errata apikey list`; --force revokes anyway)")
				}
				return fmt.Errorf("no instance API key with id %s (see `errata apikey list`; --force revokes anyway)", id)
			case err != nil && !errors.Is(err, serving.ErrNotFound):
				return err
			case err == nil && existing.RevokedAt != nil:
				fmt.Fprintf(out, "Instance API key %s (label %q) was already revoked at %s.\n",
					id, existing.Label, existing.RevokedAt.UTC().Format(time.RFC3339))
				return nil
			}
			actx, cancel := context.WithTimeout(ctx, apikeyOpTimeout)
			revoked, err := k.service.Revoke(actx, id, reason)
			cancel()
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Revoked instance API key %s.\n", revoked.KeyID)
			k.waitApplied(ctx, out, revoked.Position, wait, "The key no longer authenticates.")
			return nil
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why the key is revoked (at most 500 bytes)")
	c.Flags().DurationVar(&wait, "wait", 15*time.Second, "how long to wait for the serving projection (0: do not wait)")
	c.Flags().BoolVar(&force, "force", false, "revoke even if the serving projection does not know the key (yet)")
	return c
}

// listedKey is one key of `apikey list --json`.
type listedKey struct {
	KeyID        string     `json:"keyId"`
	Label        string     `json:"label"`
	CreatedAt    time.Time  `json:"createdAt"`
	RevokedAt    *time.Time `json:"revokedAt,omitempty"`
	RevokeReason string     `json:"revokeReason,omitempty"`
}

func apikeyListCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List instance API keys from the serving projection (ids and labels, never key material)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			k, err := openKeyTools(ctx, false)
			if err != nil {
				return err
			}
			defer k.close()
			keys, err := k.reader.APIKeys(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				listed := make([]listedKey, len(keys))
				for i, key := range keys {
					listed[i] = listedKey{KeyID: key.ID, Label: key.Label, CreatedAt: key.CreatedAt.UTC(), RevokeReason: key.RevokeReason}
					if key.RevokedAt != nil {
						at := key.RevokedAt.UTC()
						listed[i].RevokedAt = &at
					}
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(listed)
			}
			if len(keys) == 0 {
				fmt.Fprintln(out, "No instance API keys. Create one with `errata apikey add --label LABEL`.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY ID\tLABEL\tCREATED\tREVOKED\tREASON")
			for _, key := range keys {
				revoked, reason := "-", "-"
				if key.RevokedAt != nil {
					revoked = key.RevokedAt.UTC().Format(time.RFC3339)
					if key.RevokeReason != "" {
						reason = key.RevokeReason
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", key.ID, key.Label, key.CreatedAt.UTC().Format(time.RFC3339), revoked, reason)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return c
}
