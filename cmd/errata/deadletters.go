package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// listReasonRunes bounds the reason column of `deadletters list`.
const listReasonRunes = 100

// deadlettersCmd lets an operator see what the projectors and stages
// parked on the dead-letter topic, and why.
func deadlettersCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "deadletters",
		Short: "What was parked on the dead-letter topic and why (list | show)",
	}
	var group string
	var timeout time.Duration
	read := func(ctx context.Context) (*env, []kafka.ParkedRecord, error) {
		e, err := loadEnv("deadletters")
		if err != nil {
			return nil, nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		all, err := kafka.ReadDeadLetters(ctx, e.cfg.KafkaBrokers, e.topics.Name(events.TopicDeadLetter))
		if err != nil {
			return nil, nil, err
		}
		var out []kafka.ParkedRecord
		for _, p := range all {
			if matchGroup(p.Group, group, e.cfg.TopicPrefix) {
				out = append(out, p)
			}
		}
		return e, out, nil
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List parked records, one per consumer group and source position (duplicate copies counted)",
		Long: "Reads the dead-letter topic from its start to its end at the call. A crash can append the same\n" +
			"dead letter twice: records are deduplicated by (group, source topic, partition, offset) and their\n" +
			"copies counted. Every value is the record's and is printed escaped.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, recs, err := read(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return writeDeadLettersJSON(cmd.OutOrStdout(), recs)
			}
			return writeDeadLetters(cmd.OutOrStdout(), e.topics.Name(events.TopicDeadLetter), recs)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON (full reasons)")
	show := &cobra.Command{
		Use:   "show <topic>/<partition>/<offset>",
		Short: "Print one parked record in full: reason, headers and payload (escaped; pretty when JSON)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			topic, partition, offset, err := parseSourcePosition(args[0])
			if err != nil {
				return err
			}
			_, recs, err := read(cmd.Context())
			if err != nil {
				return err
			}
			var found []kafka.ParkedRecord
			for _, p := range recs {
				if p.Topic == topic && p.Partition == partition && p.Offset == offset {
					found = append(found, p)
				}
			}
			if len(found) == 0 && group != "" {
				return fmt.Errorf("nothing parked at %s by group %s", clean(args[0]), clean(group))
			}
			if len(found) == 0 {
				return fmt.Errorf("nothing parked at %s", clean(args[0]))
			}
			for i, p := range found {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				writeParkedRecord(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	for _, sub := range []*cobra.Command{list, show} {
		sub.Flags().StringVar(&group, "group", "", "only this consumer group (full name, or a projector or stage name such as serving)")
		sub.Flags().DurationVar(&timeout, "timeout", time.Minute, "bound on reading the dead-letter topic")
		c.AddCommand(sub)
	}
	return c
}

// matchGroup reports whether group is want, given in full or by the name
// of a projector (<prefix>projector.<name>) or stage (<prefix><name>).
func matchGroup(group, want, prefix string) bool {
	return want == "" || group == want || group == prefix+want || group == prefix+"projector."+want
}

// parseSourcePosition parses "<topic>/<partition>/<offset>".
func parseSourcePosition(s string) (string, int32, int64, error) {
	rest, off, ok1 := cutLast(s, "/")
	topic, part, ok2 := cutLast(rest, "/")
	if !ok1 || !ok2 || topic == "" {
		return "", 0, 0, fmt.Errorf("position %s: want <topic>/<partition>/<offset>", clean(s))
	}
	p, err := strconv.ParseInt(part, 10, 32)
	if err != nil || p < 0 {
		return "", 0, 0, fmt.Errorf("position %s: partition is not a number", clean(s))
	}
	o, err := strconv.ParseInt(off, 10, 64)
	if err != nil || o < 0 {
		return "", 0, 0, fmt.Errorf("position %s: offset is not a number", clean(s))
	}
	return topic, int32(p), o, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func writeDeadLetters(w io.Writer, topic string, recs []kafka.ParkedRecord) error {
	if len(recs) == 0 {
		_, err := fmt.Fprintf(w, "nothing parked on %s\n", clean(topic))
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tGROUP\tTYPE\tEVENT ID\tCLASS\tPARKED AT\tCOPIES\tREASON")
	copies := 0
	for _, p := range recs {
		copies += p.Copies
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", clean(p.DeadLetterKey.String()), orDash(p.Group),
			orDash(p.EventType), orDash(p.EventID), orDash(p.Class), p.Time.Format(time.RFC3339), p.Copies,
			truncateRunes(clean(p.Reason), listReasonRunes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d parked (%d copies on %s)\n", len(recs), copies, clean(topic))
	return err
}

// deadLetterJSON is one parked record in `deadletters list --json`.
type deadLetterJSON struct {
	Source     string    `json:"source"`
	Topic      string    `json:"topic"`
	Partition  int32     `json:"partition"`
	Offset     int64     `json:"offset"`
	Group      string    `json:"group"`
	EventType  string    `json:"eventType"`
	EventID    string    `json:"eventId"`
	Class      string    `json:"class"`
	Reason     string    `json:"reason"`
	ParkedAt   time.Time `json:"parkedAt"`
	Copies     int       `json:"copies"`
	Labelled   bool      `json:"labelled"`
	DeadLetter string    `json:"deadLetter"`
}

func writeDeadLettersJSON(w io.Writer, recs []kafka.ParkedRecord) error {
	out := make([]deadLetterJSON, 0, len(recs))
	for _, p := range recs {
		out = append(out, deadLetterJSON{Source: p.DeadLetterKey.String(), Topic: p.Topic, Partition: p.Partition,
			Offset: p.Offset, Group: p.Group, EventType: p.EventType, EventID: p.EventID, Class: p.Class,
			Reason: p.Reason, ParkedAt: p.Time, Copies: p.Copies, Labelled: p.Labelled,
			DeadLetter: fmt.Sprintf("%d/%d", p.DLQPartition, p.DLQOffset)})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, cleanJSON(string(b)))
	return err
}

func writeParkedRecord(w io.Writer, p kafka.ParkedRecord) {
	line := func(k, v string) { fmt.Fprintf(w, "%-12s %s\n", k+":", v) }
	line("source", clean(p.DeadLetterKey.String()))
	if !p.Labelled {
		line("note", "no dead-letter headers: not written by a projector or stage; source is its own position")
	}
	line("group", orDash(p.Group))
	line("event type", orDash(p.EventType))
	line("event id", orDash(p.EventID))
	line("class", orDash(p.Class))
	line("parked at", p.Time.Format(time.RFC3339Nano))
	line("copies", fmt.Sprintf("%d (first at partition %d offset %d of the dead-letter topic)", p.Copies, p.DLQPartition, p.DLQOffset))
	fmt.Fprintln(w, "reason:")
	fmt.Fprintf(w, "  %s\n", clean(p.Reason))
	fmt.Fprintln(w, "headers:")
	for _, h := range p.Headers {
		fmt.Fprintf(w, "  %s: %s\n", clean(h.Key), clean(string(h.Value)))
	}
	line("key", clean(string(p.Key)))
	var pretty bytes.Buffer
	if json.Valid(p.Value) && json.Indent(&pretty, p.Value, "  ", "  ") == nil {
		fmt.Fprintf(w, "payload (JSON, %d bytes):\n  %s\n", len(p.Value), cleanJSON(pretty.String()))
		return
	}
	fmt.Fprintf(w, "payload (not JSON, %d bytes, escaped):\n  %s\n", len(p.Value), clean(string(p.Value)))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return clean(s)
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clean makes hostile text safe for a terminal on one line: backslashes,
// control and format characters (NUL, escape sequences, bidirectional
// overrides, line separators) and invalid UTF-8 become escapes.
func clean(s string) string { return escapeText(s, true) }

// cleanJSON is clean for JSON text: newlines between values stay, and a
// backslash (always part of a JSON escape) is left alone, so the escapes
// it adds keep the text valid JSON (except \xNN for invalid UTF-8).
func cleanJSON(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = escapeText(l, false)
	}
	return strings.Join(lines, "\n")
}

func escapeText(s string, backslash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsGraphic(r):
			b.WriteRune(r)
		case r > 0xffff && backslash:
			fmt.Fprintf(&b, `\U%08x`, r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}
