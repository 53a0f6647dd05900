package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/projections/serving"
)

func experimentsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "experiments",
		Short: "Prompt experiments: a share of new investigations runs under a candidate configuration (start, stop, list)",
	}
	c.AddCommand(experimentsStartCmd(), experimentsStopCmd(), experimentsListCmd())
	return c
}

func experimentsStartCmd() *cobra.Command {
	var e control.ExperimentStart
	var share float64
	var wait time.Duration
	c := &cobra.Command{
		Use:   "start --name E --candidate NAME --share 0.2 --reason R",
		Short: "Start an experiment (at most one runs): each new investigation's arm is fixed by its post version id",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if math.IsNaN(share) || share <= 0 || share >= 1 {
				return fmt.Errorf("%w: --share must be above 0 and below 1 (got %v)", control.ErrRefused, share)
			}
			e.ShareBP = int(math.Round(share * events.MaxShareBasisPoints))
			return decide(cmd, wait, func(ctx context.Context, s *control.Service) (control.Outcome, error) {
				return s.StartExperiment(ctx, e)
			}, printExperiments)
		},
	}
	f := c.Flags()
	f.StringVar(&e.Name, "name", "", "the experiment's name ([a-z0-9._-]; its id derives from it)")
	f.StringVar(&e.Candidate, "candidate", "", "the candidate configuration (declared)")
	f.StringVar(&e.Control, "control", "", "the control configuration (default: the active one)")
	f.Float64Var(&share, "share", 0, "the candidate's share of new investigations, above 0 and below 1 (0.2: 20%)")
	decisionFlags(c, &e.Decision, &wait)
	return c
}

func experimentsStopCmd() *cobra.Command {
	var d control.Decision
	var wait time.Duration
	c := &cobra.Command{
		Use:   "stop --reason R",
		Short: "Stop the running experiment: new investigations run under the active configuration again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return decide(cmd, wait, func(ctx context.Context, s *control.Service) (control.Outcome, error) {
				return s.StopExperiment(ctx, d)
			}, printExperiments)
		},
	}
	decisionFlags(c, &d, &wait)
	return c
}

func experimentsListCmd() *cobra.Command {
	return controlListCmd("list", "Every experiment, oldest first, with its arms, share and state", printExperiments)
}

func printExperiments(ctx context.Context, w io.Writer, r *serving.Reader) error {
	all, err := r.Experiments(ctx)
	if err != nil {
		return err
	}
	if len(all) == 0 {
		fmt.Fprintln(w, "No experiments. Start one with `errata experiments start`.")
		return nil
	}
	configs, err := r.Configurations(ctx)
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, c := range configs {
		names[c.ID] = c.Name
	}
	name := func(id string) string {
		if n, ok := names[id]; ok {
			return clean(n)
		}
		return id
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tCONTROL\tCANDIDATE\tSHARE\tSTARTED\tSTOPPED\tOPERATOR\tREASON\tSTOP REASON")
	for _, e := range all {
		state, stopped := "running", "-"
		if e.StoppedAt != nil {
			state, stopped = "stopped", e.StoppedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(e.Name), state, name(e.ControlConfigurationID),
			name(e.CandidateConfigurationID), sharePercent(e.CandidateShareBP), e.StartedAt.UTC().Format(time.RFC3339), stopped,
			clean(e.Operator), clean(truncateRunes(e.Reason, 60)), clean(truncateRunes(orDash(e.StopReason), 60)))
	}
	return tw.Flush()
}
