package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/consumers/evidence/sources"
)

// sourcesCmd explains the source registry: which tier a URL gets and by
// which rule, and every rule in effect (the starter registry plus the file
// ERRATA_SOURCE_REGISTRY names).
func sourcesCmd() *cobra.Command {
	c := &cobra.Command{Use: "sources", Short: "The source registry: tiers of source domains and the rules behind them"}
	var lookupJSON, listJSON bool
	lookup := &cobra.Command{
		Use:   "lookup URL",
		Short: "Normalize a URL and show its registrable domain, tier and the rule that matched",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := loadSourceRegistry()
			if err != nil {
				return err
			}
			m, err := reg.Lookup(args[0])
			if err != nil {
				return err
			}
			return printLookup(cmd.OutOrStdout(), reg, m, lookupJSON)
		},
	}
	lookup.Flags().BoolVar(&lookupJSON, "json", false, "print JSON")
	list := &cobra.Command{
		Use:   "list",
		Short: "Print every rule in effect with its tier and origin (starter or user)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := loadSourceRegistry()
			if err != nil {
				return err
			}
			return printRules(cmd.OutOrStdout(), reg, listJSON)
		},
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")
	c.AddCommand(lookup, list)
	return c
}

func loadSourceRegistry() (*sources.Registry, error) {
	cfg, err := loadConfig()
	if err != nil {
		return nil, err
	}
	return sources.Load(cfg.SourceRegistry)
}

// sourceLookup is the JSON of `errata sources lookup --json`.
type sourceLookup struct {
	URL             string `json:"url"`
	Host            string `json:"host"`
	Domain          string `json:"domain"`
	Tier            int    `json:"tier"`
	TierName        string `json:"tier_name"`
	Rule            string `json:"rule"`
	Origin          string `json:"origin,omitempty"`
	RegistryVersion string `json:"registry_version"`
}

func printLookup(w io.Writer, reg *sources.Registry, m sources.Match, asJSON bool) error {
	out := sourceLookup{
		URL: m.URL, Host: m.Host, Domain: m.Domain, Tier: m.Tier, TierName: sources.TierName(m.Tier),
		Rule: m.Rule, Origin: ruleOrigin(reg, m.Rule), RegistryVersion: reg.Version(),
	}
	if asJSON {
		return writeSourcesJSON(w, out)
	}
	rule := out.Rule
	if out.Origin != "" {
		rule += " (" + out.Origin + ")"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "url\t%s\nhost\t%s\ndomain\t%s\ntier\t%d (%s)\nrule\t%s\nregistry\t%s\n",
		out.URL, out.Host, out.Domain, out.Tier, out.TierName, rule, out.RegistryVersion)
	return tw.Flush()
}

// ruleOrigin is where the rule a Match names comes from; empty for the
// default.
func ruleOrigin(reg *sources.Registry, rule string) string {
	_, pattern, ok := strings.Cut(rule, ":")
	if !ok {
		return ""
	}
	for _, r := range reg.Rules() {
		if r.Pattern == pattern {
			return r.Origin
		}
	}
	return ""
}

// sourceRule is one rule in `errata sources list --json`.
type sourceRule struct {
	Pattern string `json:"pattern"`
	Kind    string `json:"kind"`
	Tier    int    `json:"tier"`
	Origin  string `json:"origin"`
}

func printRules(w io.Writer, reg *sources.Registry, asJSON bool) error {
	rules := reg.Rules()
	if asJSON {
		out := struct {
			RegistryVersion string       `json:"registry_version"`
			DefaultTier     int          `json:"default_tier"`
			Rules           []sourceRule `json:"rules"`
		}{RegistryVersion: reg.Version(), DefaultTier: sources.DefaultTier, Rules: make([]sourceRule, 0, len(rules))}
		for _, r := range rules {
			kind := "domain"
			if r.Wildcard() {
				kind = "wildcard"
			}
			out.Rules = append(out.Rules, sourceRule{Pattern: r.Pattern, Kind: kind, Tier: r.Tier, Origin: r.Origin})
		}
		return writeSourcesJSON(w, out)
	}
	fmt.Fprintf(w, "registry %s: %d rules; no rule: tier %d\n", reg.Version(), len(rules), sources.DefaultTier)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIER\tPATTERN\tORIGIN")
	for _, r := range rules {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", r.Tier, r.Pattern, r.Origin)
	}
	return tw.Flush()
}

func writeSourcesJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
