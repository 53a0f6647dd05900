package bench

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Row is one line of the table: a figure, its baseline from the same run,
// and figure / baseline.
type Row struct {
	Measure  string   `json:"measure"`
	Figure   string   `json:"figure"`
	Baseline string   `json:"baseline"`
	Ratio    *float64 `json:"ratio,omitempty"`
}

func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	r := a / b
	return &r
}

func rows(r *Result, opt Options) []Row {
	var out []Row
	add := func(measure, figure, baseline string, q *float64) {
		out = append(out, Row{Measure: measure, Figure: figure, Baseline: baseline, Ratio: q})
	}
	add(fmt.Sprintf("API register+view throughput (%d clients, %d-word posts)", r.API.Concurrency, opt.Words),
		fmt.Sprintf("%.0f req/s (%d requests, %d errors)", r.API.RequestsPerSec, r.API.Requests, r.API.Errors),
		fmt.Sprintf("%.0f req/s fiber echo, same load (%d requests, %d errors)", r.Echo.RequestsPerSec, r.Echo.Requests, r.Echo.Errors),
		ratio(r.API.RequestsPerSec, r.Echo.RequestsPerSec))
	lat := func(name string, api, echo Latency) {
		for _, p := range []struct {
			label     string
			api, echo float64
		}{{"p50", api.P50, echo.P50}, {"p90", api.P90, echo.P90}, {"p99", api.P99, echo.P99}, {"max", api.Max, echo.Max}} {
			add(name+" latency "+p.label, fmt.Sprintf("%.2f ms", p.api), fmt.Sprintf("%.2f ms echo", p.echo), ratio(p.api, p.echo))
		}
	}
	lat("registerObservedVersion", r.API.Register, r.Echo.Register)
	lat("recordViewAndGetStatus", r.API.View, r.Echo.View)
	for _, p := range []struct {
		label string
		f, b  float64
	}{{"p50", r.Freshness.Latency.P50, r.KafkaRound.P50}, {"p99", r.Freshness.Latency.P99, r.KafkaRound.P99}} {
		add(fmt.Sprintf("freshness %s: event appended -> visible in getInvestigation (%d samples)", p.label, r.Freshness.Latency.Count),
			fmt.Sprintf("%.2f ms", p.f), fmt.Sprintf("%.2f ms raw Kafka produce->consume", p.b), ratio(p.f, p.b))
	}
	// The breakdown of p50 (each part's own p50, from the append's start).
	add("freshness breakdown p50: append acknowledged", fmt.Sprintf("%.2f ms", r.Freshness.Appended.P50),
		fmt.Sprintf("%.2f ms raw Kafka produce->consume", r.KafkaRound.P50), ratio(r.Freshness.Appended.P50, r.KafkaRound.P50))
	add("freshness breakdown p50: projector's checkpoint committed", fmt.Sprintf("%.2f ms", r.Freshness.Committed.P50),
		fmt.Sprintf("%.2f ms raw Kafka produce->consume", r.KafkaRound.P50), ratio(r.Freshness.Committed.P50, r.KafkaRound.P50))
	add(fmt.Sprintf("serving projection, exactly-once (%d events)", r.Projection.Events),
		fmt.Sprintf("%.0f events/s", r.Projection.EventsPerSec), fmt.Sprintf("%.0f rows/s pgx CopyFrom", r.CopyFrom.PerSec),
		ratio(r.Projection.EventsPerSec, r.CopyFrom.PerSec))
	add(fmt.Sprintf("serving projection, exactly-once (%d events)", r.Projection.Events),
		fmt.Sprintf("%.0f events/s", r.Projection.EventsPerSec), fmt.Sprintf("%.0f records/s raw Kafka consume", r.ProjConsume.PerSec),
		ratio(r.Projection.EventsPerSec, r.ProjConsume.PerSec))
	add(fmt.Sprintf("replay from offset 0 into a fresh schema (%d events)", r.Replay.Events),
		fmt.Sprintf("%.0f events/s", r.Replay.EventsPerSec), fmt.Sprintf("%.0f records/s raw Kafka consume", r.ReplayRaw.PerSec),
		ratio(r.Replay.EventsPerSec, r.ReplayRaw.PerSec))
	// Target 4 asks replay for half its sink's raw bulk rate: the serving
	// sink's is the CopyFrom figure of this run.
	add(fmt.Sprintf("replay from offset 0 into a fresh schema (%d events)", r.Replay.Events),
		fmt.Sprintf("%.0f events/s", r.Replay.EventsPerSec), fmt.Sprintf("%.0f rows/s pgx CopyFrom", r.CopyFrom.PerSec),
		ratio(r.Replay.EventsPerSec, r.CopyFrom.PerSec))
	mb := func(b uint64) float64 { return float64(b) / (1 << 20) }
	for _, p := range []struct {
		name string
		st   ProjectorStats
	}{{"serving projection", r.Projection}, {"replay", r.Replay}} {
		add(fmt.Sprintf("%s: peak live heap of this process while catching up (%d events)", p.name, p.st.Events),
			fmt.Sprintf("%.1f MB", mb(p.st.PeakHeapBytes)), fmt.Sprintf("%.1f MB live heap at its start", mb(p.st.StartHeapBytes)),
			ratio(mb(p.st.PeakHeapBytes), mb(p.st.StartHeapBytes)))
	}
	if q := r.Search; q != nil {
		add(fmt.Sprintf("search projection, exactly-once (%d documents, registration + completion each)", q.Docs),
			fmt.Sprintf("%.0f docs/s", q.DocsPerSec), fmt.Sprintf("%.0f docs/s raw _bulk of the same documents", q.RawPerSec),
			ratio(q.DocsPerSec, q.RawPerSec))
	}
	if m := r.Metrics; m != nil {
		add(fmt.Sprintf("metrics projection, idempotent by event identity (%d events -> %d rows, batches of %d)", m.Events, m.Rows, metricsBatch),
			fmt.Sprintf("%.0f rows/s", m.RowsPerSec), fmt.Sprintf("%.0f rows/s raw clickhouse-go insert of the same rows", m.RawPerSec),
			ratio(m.RowsPerSec, m.RawPerSec))
	}
	if v := r.ViewPath; v != nil {
		name := fmt.Sprintf("view path: recordViewAndGetStatus, one version (%d clients)", v.Concurrency)
		add(name+" throughput", fmt.Sprintf("%.0f req/s (%d requests, %d errors)", v.API.RequestsPerSec, v.API.Requests, v.API.Errors),
			fmt.Sprintf("%.0f req/s bare fiber: one acks=all idempotent produce + one pgx primary-key select", v.Baseline.RequestsPerSec),
			ratio(v.API.RequestsPerSec, v.Baseline.RequestsPerSec))
		add(name+" p99", fmt.Sprintf("%.2f ms", v.API.Latency.P99), fmt.Sprintf("%.2f ms produce+select", v.Baseline.Latency.P99),
			ratio(v.API.Latency.P99, v.Baseline.Latency.P99))
		add(name+" throughput", fmt.Sprintf("%.0f req/s", v.API.RequestsPerSec), fmt.Sprintf("%.0f req/s fiber echo", v.Echo.RequestsPerSec),
			ratio(v.API.RequestsPerSec, v.Echo.RequestsPerSec))
		for _, l := range v.AccessLog {
			add(fmt.Sprintf("%s (%d clients)", l.Target, v.Concurrency), fmt.Sprintf("%.0f req/s, p99 %.2f ms", l.RequestsPerSec, l.Latency.P99),
				fmt.Sprintf("%.0f req/s echo without the request middleware", v.Echo.RequestsPerSec), ratio(l.RequestsPerSec, v.Echo.RequestsPerSec))
		}
	}
	out = append(out, growthRows(r.Growth)...)
	return out
}

// viewPathNotes are the view path's profile summaries and memory.
func viewPathNotes(b *strings.Builder, v *ViewPathResult) {
	fmt.Fprintf(b, "\nview path (%d clients): peak RSS of this process (API, projector and load generator) %.0f MB under the view load, %.0f MB under the produce+select baseline\n",
		v.Concurrency, v.API.PeakRSSMB, v.Baseline.PeakRSSMB)
	for _, l := range []FixedLoad{v.API, v.Baseline, v.Echo} {
		if len(l.Top) == 0 {
			continue
		}
		var top []string
		for _, c := range l.Top {
			top = append(top, fmt.Sprintf("%s %.1f%%", c.Function, 100*c.Share))
		}
		fmt.Fprintf(b, "- profile of %s: server side %.0f%% of the CPU; top costs (flat): %s\n", l.Target, 100*l.ServerCPUShare, strings.Join(top, ", "))
	}
}

// profileNotes are the other paths' profile summaries.
func profileNotes(b *strings.Builder, ps []PathProfile) {
	if len(ps) == 0 {
		return
	}
	b.WriteString("\nprofiles of the measured paths (flat CPU, share of the path's samples):\n")
	for _, p := range ps {
		fmt.Fprintf(b, "- %s (%.1f CPU-s): functions %s; packages %s\n", p.Path, p.CPUSeconds, costList(p.Functions), costList(p.Packages))
	}
}

func costList(cs []Cost) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %.1f%%", c.Function, 100*c.Share)
	}
	return strings.Join(out, ", ")
}

// WriteMarkdown prints the table and the checks.
func (r Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| measure | figure | baseline (same run) | ratio |\n|---|---|---|---|\n")
	for _, row := range r.Rows {
		q := "-"
		if row.Ratio != nil {
			q = fmt.Sprintf("%.3g", *row.Ratio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.Measure, row.Figure, row.Baseline, q)
	}
	writeRegistration(&b, r.Registration, r.KafkaRound)
	b.WriteString("\nratio = figure / baseline: for rates the share of the baseline reached, for latencies how many times longer.\n")
	if r.ViewPath != nil {
		viewPathNotes(&b, r.ViewPath)
	}
	profileNotes(&b, r.Profiles)
	growthNotes(&b, r.Growth)
	failed := 0
	for _, c := range r.Checks {
		if !c.OK {
			failed++
			fmt.Fprintf(&b, "FAILED check: %s: %s\n", c.Name, c.Detail)
		}
	}
	if failed == 0 {
		fmt.Fprintf(&b, "all %d checks passed (zero errors, exact counts, replay identical to the live projection)\n", len(r.Checks))
	} else {
		fmt.Fprintf(&b, "FLAGGED: %d of %d checks failed; the figures are suspect\n", failed, len(r.Checks))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// compareSchemas compares every table of two serving schemas row by row
// (migration bookkeeping aside) and describes the differences; "" means
// identical.
func compareSchemas(ctx context.Context, databaseURL, a, b string) (string, error) {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return "", fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations' ORDER BY 1`, a)
	if err != nil {
		return "", fmt.Errorf("list tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("list tables: %w", err)
	}
	var diffs []string
	for _, t := range tables {
		sum := func(schema string) (string, error) {
			var n int
			var h string
			q := `SELECT count(*), md5(COALESCE(string_agg(t::text, E'\n' ORDER BY t::text), '')) FROM ` + pgx.Identifier{schema, t}.Sanitize() + ` t`
			if err := conn.QueryRow(ctx, q).Scan(&n, &h); err != nil {
				return "", fmt.Errorf("sum %s.%s: %w", schema, t, err)
			}
			return fmt.Sprintf("%d rows, md5 %s", n, h), nil
		}
		sa, err := sum(a)
		if err != nil {
			return "", err
		}
		sb, err := sum(b)
		if err != nil {
			return "", err
		}
		if sa != sb {
			diffs = append(diffs, fmt.Sprintf("%s: %s vs %s", t, sa, sb))
		}
	}
	return strings.Join(diffs, "; "), nil
}
