package analytics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
)

// DeadLetterer receives the records the projector parks: records it cannot
// decode and events ClickHouse refuses (the cause says which, through
// kafka.Undecodable and kafka.Permanent).
type DeadLetterer interface {
	Send(ctx context.Context, rec *kgo.Record, cause error, now time.Time) error
}

// DefaultInsertRows bounds the rows of one INSERT.
const DefaultInsertRows = 50_000

// Projector is the metrics projection's kafka.Handler and
// kafka.PositionStore. For each batch it inserts the rows of its events
// (one INSERT per table, at most insertRows rows each, several tables at
// once), and only after every one of those inserts returned writes the partition's next offset to _positions;
// Handle returns after both, so the runner commits afterwards. A crash in
// between redelivers the batch, whose rows carry the same event ids and
// collapse in the ReplacingMergeTree tables.
//
// No event stops it. A record it cannot decode, and an event whose rows
// ClickHouse refuses deterministically (a bad value: see refused), is
// parked: recorded in _parked, copied to the dead-letter topic, and
// skipped, while the rest of the batch is applied. A refused batch is
// split in halves until the refused events are alone, so finding k of them
// among n costs about k·log2(n) INSERTs. Any other failure (ClickHouse
// away, a timeout, a missing table) fails Handle, and the runner retries
// the batch until it succeeds. The same log parks the same events, so a
// rebuild is identical.
type Projector struct {
	conn       driver.Conn
	registry   *events.Registry
	topics     events.Topics
	deadLetter DeadLetterer
	log        *slog.Logger
	insertRows int
	columns    *columnTypes
}

// NewProjector returns a projector writing to conn's default database;
// topics names the Kafka topics it reads (parked records are recorded by
// logical topic). insertRows <= 0 means DefaultInsertRows.
func NewProjector(conn driver.Conn, reg *events.Registry, topics events.Topics, dl DeadLetterer, insertRows int, log *slog.Logger) *Projector {
	if insertRows <= 0 {
		insertRows = DefaultInsertRows
	}
	return &Projector{conn: conn, registry: reg, topics: topics, deadLetter: dl, insertRows: insertRows,
		columns: &columnTypes{conn: conn}, log: log.With("projector", ProjectorName)}
}

// Positions implements kafka.PositionStore: the next offset stored per
// partition (the largest written; rows of older writes may linger until a
// merge).
func (p *Projector) Positions(ctx context.Context, topics []string) (_ map[string]map[int32]int64, err error) {
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	rows, err := p.conn.Query(ctx, "SELECT topic, partition, max(next_offset) FROM _positions GROUP BY topic, partition")
	if err != nil {
		return nil, fmt.Errorf("read metrics positions: %w", err)
	}
	defer closeRows(rows, &err)
	out := map[string]map[int32]int64{}
	for rows.Next() {
		var topic string
		var part int32
		var next int64
		if err := rows.Scan(&topic, &part, &next); err != nil {
			return nil, fmt.Errorf("read metrics positions: %w", err)
		}
		if !want[topic] {
			continue
		}
		if out[topic] == nil {
			out[topic] = map[int32]int64{}
		}
		out[topic][part] = next
	}
	return out, rows.Err()
}

// pending is one decoded event of a batch with its rows.
type pending struct {
	rec  *kgo.Record
	ev   events.Event
	rows rowSet
}

// parking is a record the batch parks, with its cause (marked
// kafka.Undecodable or kafka.Permanent).
type parking struct {
	rec   *kgo.Record
	id    string // the decoded event's id; empty when it did not decode
	cause error
}

// Handle implements kafka.Handler.
func (p *Projector) Handle(ctx context.Context, b kafka.Batch) error {
	if len(b.Records) == 0 {
		return nil
	}
	decoded := p.decode(b.Records)
	var evs []pending
	var parked []parking
	for i, rec := range b.Records {
		d := decoded[i]
		if d.skip {
			continue
		}
		if d.err != nil {
			parked = append(parked, parking{rec: rec, cause: kafka.Undecodable(d.err)})
			continue
		}
		var rows rowSet
		if err := rows.add(d.ev, position{partition: rec.Partition, offset: rec.Offset}); err != nil {
			cause := kafka.Undecodable(err)
			if errors.Is(err, errRowRefused) {
				cause = kafka.Permanent(err)
			}
			parked = append(parked, parking{rec: rec, id: d.ev.ID, cause: cause})
			continue
		}
		evs = append(evs, pending{rec: rec, ev: d.ev, rows: rows})
	}
	refusedEvs, err := p.insertIsolating(ctx, evs, nil)
	if err != nil {
		return fmt.Errorf("metrics %s/%d@%d..%d: %w", b.Topic, b.Partition, b.Records[0].Offset, b.Records[len(b.Records)-1].Offset, err)
	}
	var lastTime time.Time
	for _, e := range evs {
		if _, ok := refusedEvs[e.rec.Offset]; !ok {
			lastTime = e.ev.Time
		}
	}
	if len(refusedEvs) > 0 {
		for _, e := range evs {
			if cause, ok := refusedEvs[e.rec.Offset]; ok {
				parked = append(parked, parking{rec: e.rec, id: e.ev.ID, cause: kafka.Permanent(cause)})
			}
		}
		if err := p.deleteRows(ctx, b.Topic, b.Partition, refusedEvs); err != nil {
			return err
		}
	}
	if err := p.park(ctx, parked); err != nil {
		return err
	}
	last := b.Records[len(b.Records)-1]
	return p.storePosition(ctx, b.Topic, b.Partition, last.Offset+1, lastTime)
}

// insertIsolating inserts the rows of evs. When ClickHouse refuses them
// for their data, it splits evs in halves and inserts each, down to single
// events, and returns the events refused alone (by offset, with the
// error); every other event's rows are then stored. known is the error of
// inserting evs when the caller already has it. Any other error is
// returned: the batch must be retried.
func (p *Projector) insertIsolating(ctx context.Context, evs []pending, known error) (map[int64]error, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	err := known
	if err == nil {
		var set rowSet
		for i := range evs {
			set.merge(&evs[i].rows)
		}
		err = p.insert(ctx, &set)
	}
	if err == nil {
		return nil, nil
	}
	if !refused(err) {
		return nil, err
	}
	if len(evs) == 1 {
		p.log.Warn("clickhouse refuses the rows of an event; parking it", "topic", evs[0].rec.Topic,
			"partition", evs[0].rec.Partition, "offset", evs[0].rec.Offset, "event_id", evs[0].ev.ID, "err", err)
		return map[int64]error{evs[0].rec.Offset: err}, nil
	}
	mid := len(evs) / 2
	left, err := p.insertIsolating(ctx, evs[:mid], nil)
	if err != nil {
		return nil, err
	}
	right, err := p.insertIsolating(ctx, evs[mid:], nil)
	if err != nil {
		return nil, err
	}
	if left == nil {
		return right, nil
	}
	maps.Copy(left, right)
	return left, nil
}

// refusedCodes are the ClickHouse exception codes that mean a value cannot
// be stored: inserting the same rows fails the same way every time.
// Anything else (a server away, memory or part limits, a timeout, a
// missing table) may clear, so the batch is retried instead.
var refusedCodes = map[int32]string{
	6:   "CANNOT_PARSE_TEXT",
	26:  "CANNOT_PARSE_QUOTED_STRING",
	27:  "CANNOT_PARSE_INPUT_ASSERTION_FAILED",
	38:  "CANNOT_PARSE_DATE",
	41:  "CANNOT_PARSE_DATETIME",
	53:  "TYPE_MISMATCH",
	69:  "ARGUMENT_OUT_OF_BOUND",
	70:  "CANNOT_CONVERT_TYPE",
	72:  "CANNOT_PARSE_NUMBER",
	117: "INCORRECT_DATA",
	128: "TOO_LARGE_ARRAY_SIZE",
	131: "TOO_LARGE_STRING_SIZE",
	321: "VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE",
	349: "CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN",
	376: "CANNOT_PARSE_UUID",
	395: "FUNCTION_THROW_IF_VALUE_IS_NON_ZERO",
	407: "DECIMAL_OVERFLOW",
	469: "VIOLATED_CONSTRAINT",
	691: "UNKNOWN_ELEMENT_OF_ENUM",
}

// errRowRefused marks a row the driver refused to encode for its column
// (a value out of the type's range or form): the same row always fails.
var errRowRefused = errors.New("row refused by the column encoder")

// refused reports whether err says the inserted rows themselves cannot be
// stored: a row the driver cannot encode, a ClickHouse exception with a
// data error code, or 413 Payload Too Large from the HTTP interface.
func refused(err error) bool {
	if errors.Is(err, errRowRefused) {
		return true
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		_, ok := refusedCodes[ex.Code]
		return ok
	}
	var httpErr *clickhouse.HTTPError
	return errors.As(err, &httpErr) && httpErr.StatusCode == http.StatusRequestEntityTooLarge
}

// deleteRows removes whatever rows of refused events an INSERT stored
// before another table's INSERT refused them (an event's rows span
// tables): a parked event leaves no rows. Offsets identify the events:
// the batch is one partition of one topic.
func (p *Projector) deleteRows(ctx context.Context, topic string, partition int32, refusedEvs map[int64]error) error {
	offsets := slices.Sorted(maps.Keys(refusedEvs))
	list := make([]string, len(offsets))
	for i, o := range offsets {
		list[i] = strconv.FormatInt(o, 10)
	}
	logical := p.logicalTopic(topic)
	for _, table := range Tables {
		if TableTopics[table] != logical {
			continue
		}
		stmt := fmt.Sprintf("DELETE FROM %s WHERE log_partition = %d AND log_offset IN (%s)", table, partition, strings.Join(list, ", "))
		if err := p.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("delete rows of refused events from %s: %w", table, err)
		}
	}
	return nil
}

// park records parked records in _parked and copies each to the
// dead-letter topic. Both are idempotent under redelivery: _parked
// collapses by position, and readers of the dead-letter topic dedupe by
// source position.
func (p *Projector) park(ctx context.Context, parked []parking) error {
	if len(parked) == 0 {
		return nil
	}
	slices.SortFunc(parked, func(a, b parking) int { return cmp.Compare(a.rec.Offset, b.rec.Offset) })
	batch, err := p.conn.PrepareBatch(p.columns.insertContext(ctx, "_parked", columnList(parkedColumns+", reason, record_time")),
		"INSERT INTO _parked ("+parkedColumns+", reason, record_time)")
	if err != nil {
		return fmt.Errorf("prepare insert into _parked: %w", err)
	}
	for _, pk := range parked {
		id := pk.id // the decoded event's, else the header's
		if id == "" {
			id = header(pk.rec, events.HeaderID)
		}
		if err := batch.Append(string(p.logicalTopic(pk.rec.Topic)), pk.rec.Partition, pk.rec.Offset, id,
			header(pk.rec, events.HeaderType), kafka.PermanentClass(pk.cause),
			kafka.TruncateUTF8(pk.cause.Error(), kafka.MaxDLQErrorBytes), ms(pk.rec.Timestamp)); err != nil {
			_ = batch.Abort()
			return fmt.Errorf("append to _parked: %w", err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert into _parked: %w", err)
	}
	for _, pk := range parked {
		// The record's own timestamp, not the clock: a redelivery sends
		// the same copy.
		if err := p.deadLetter.Send(ctx, pk.rec, pk.cause, pk.rec.Timestamp); err != nil {
			return fmt.Errorf("dead-letter %s/%d@%d: %w", pk.rec.Topic, pk.rec.Partition, pk.rec.Offset, err)
		}
	}
	return nil
}

// logicalTopic is the events.Topic of a Kafka topic name.
func (p *Projector) logicalTopic(name string) events.Topic {
	return events.Topic(strings.TrimPrefix(name, p.topics.Prefix))
}

type decodedRecord struct {
	ev   events.Event
	err  error
	skip bool
}

// decode decodes the records the projection reads, spread over the CPUs
// (decoding and validating JSON is most of a batch's cost); results keep
// the records' order.
func (p *Projector) decode(recs []*kgo.Record) []decodedRecord {
	out := make([]decodedRecord, len(recs))
	workers := min(runtime.GOMAXPROCS(0), (len(recs)+255)/256)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(recs); i += workers {
				t := header(recs[i], events.HeaderType)
				if !Handles(t) {
					// A later version of a handled event is not skipped: it
					// is parked until a build that reads it replays.
					if _, known := p.registry.Lookup(t); !known && handledFamily(t) {
						out[i].err = fmt.Errorf("%w: %s is a version of an event the metrics projection reads that this build does not know",
							events.ErrUnknownType, t)
						continue
					}
					out[i].skip = true
					continue
				}
				out[i].ev, out[i].err = p.registry.Decode(recs[i].Value)
				if out[i].err == nil && out[i].ev.Payload.EventType() != p.registry.CurrentType(t) {
					// Filtering trusted the header; the value is another event.
					out[i].err = fmt.Errorf("header %s %q does not match the envelope's type (decodes to %s)",
						events.HeaderType, t, out[i].ev.Payload.EventType())
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// positionColumns are the columns of _positions storePosition writes.
var positionColumns = []string{"topic", "partition", "next_offset", "event_time"}

func (p *Projector) storePosition(ctx context.Context, topic string, partition int32, next int64, at time.Time) error {
	batch, err := p.conn.PrepareBatch(p.columns.insertContext(ctx, "_positions", positionColumns),
		"INSERT INTO _positions (topic, partition, next_offset, event_time)")
	if err != nil {
		return fmt.Errorf("store metrics position: %w", err)
	}
	if err := batch.Append(topic, partition, next, ms(at)); err != nil {
		_ = batch.Abort()
		return fmt.Errorf("store metrics position: %w", err)
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("store metrics position: %w", err)
	}
	return nil
}

// insertParallel bounds the INSERTs one batch has in flight.
const insertParallel = 4

// insert writes the rows, in INSERTs of at most insertRows per table. The
// tables' INSERTs are independent (the position is written after all of
// them), so up to insertParallel are in flight at once: the next table's
// block is encoded and sent while the server stores the previous one.
func (p *Projector) insert(ctx context.Context, s *rowSet) error {
	var jobs []func(context.Context) error
	add := func(job func(context.Context) error) { jobs = append(jobs, job) }
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "post_versions", s.postVersions, func(b driver.Batch, r postVersionRow) error {
			return b.Append(r.EventID, r.PostID, r.PostVersionID, r.Platform, r.ExternalID, r.URL, r.VersionHash,
				r.AuthorID, r.AuthorPlatformUserID, r.AuthorDisplayName, r.Provenance, r.WordCount, r.ReporterKeyHash,
				r.RegisteredAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "views", s.views, func(b driver.Batch, r viewRow) error {
			return b.Append(r.EventID, r.PostID, r.PostVersionID, r.Platform, r.ViewerKind, r.Authenticated,
				r.ViewedAt, r.ViewedOn, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "investigations", s.investigations, func(b driver.Batch, r investigationRow) error {
			return b.Append(r.EventID, r.InvestigationID, r.PostID, r.PostVersionID, r.Status, r.Platform, r.Source,
				r.UniqueViewScore, r.Provenance, r.PromptVersion, r.Provider, r.Model, r.ClaimCount, r.FailureReason,
				r.Attempts, r.Series, r.ConfigurationID, r.ExperimentID, r.Arm, r.Supersedes, r.EventTime, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "claims", s.claims, func(b driver.Batch, r claimRow) error {
			return b.Append(r.EventID, r.ClaimID, r.InvestigationID, r.PostID, r.PostVersionID, r.Position, r.Text,
				r.Summary, r.SourceCount, r.PublishedAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "attempts", s.attempts, func(b driver.Batch, r attemptRow) error {
			return b.Append(r.EventID, r.InvestigationID, r.Series, r.Attempt, r.PromptName, r.PromptVersion, r.PromptSHA256,
				r.Provider, r.Model, r.Credential, r.StartedAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "claim_assessments", s.assessments, func(b driver.Batch, r assessmentRow) error {
			return b.Append(r.EventID, r.SubmissionID, r.InvestigationID, r.Series, r.Attempt, r.Causal,
				r.EMax, r.EMean3, r.CMax, r.AgreeDom, r.RelAvg, r.RecMax, r.NumOK, r.Raw, r.Score, r.Verdict,
				r.Gate4, r.Gate4Sources, r.Gate4Quality, r.Gate4Agreement, r.RegistryVersion, r.PolicyVersion, r.PublishMode,
				r.Published, r.Reason, r.Failed, r.QueryCount, r.QueryErrors, r.SourceCount, r.DroppedCount,
				r.StanceProvider, r.StanceModel, r.StancePromptVersion, r.AssessedAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "assessment_sources", s.assessmentSources, func(b driver.Batch, r assessmentSourceRow) error {
			return b.Append(r.EventID, r.SubmissionID, r.InvestigationID, r.Position, r.URL, r.Domain, r.Tier, r.Rule, r.Origin,
				r.Entail, r.Contradict, r.Neutral, r.StanceNote, r.Num, r.Recency, r.AssessedAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "analyses", s.analyses, func(b driver.Batch, r analysisRow) error {
			return b.Append(r.EventID, r.AnalysisID, r.InputKind, r.Platform, r.Source, r.Prompt, r.TextLength, r.RequestedAt,
				r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "analysis_attempts", s.analysisAttempts, func(b driver.Batch, r analysisAttemptRow) error {
			return b.Append(r.EventID, r.AnalysisID, r.Attempt, r.Prompts, r.Provider, r.Model, r.RegistryVersion,
				r.PolicyVersion, r.Rubric, r.StartedAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "post_verdicts", s.postVerdicts, func(b driver.Batch, r postVerdictRow) error {
			return b.Append(r.EventID, r.AnalysisID, r.Attempt, r.Label, r.Band, r.TruthPercent, r.Confidence, r.ConfidenceBand,
				r.Caps, r.ClaimCount, r.CaveatCount, r.SourceCount, r.FromSearch, r.VerdictAt, r.partition, r.offset)
		})
	})
	p.cohortJobs(s, add)
	return runInserts(ctx, jobs)
}

// runInserts runs jobs, at most insertParallel at once, and returns the
// first failure in job order that may clear (the batch is retried), else
// the first refusal (the batch is split to find the refused events), else
// nil. Every job runs to its end whatever the others do: rows a job stored
// stay, as when a later table refused a batch before (redelivered rows
// collapse by event identity, and the rows of parked events are deleted).
func runInserts(ctx context.Context, jobs []func(context.Context) error) error {
	errs := make([]error, len(jobs))
	var g errgroup.Group
	g.SetLimit(insertParallel)
	for i, job := range jobs {
		g.Go(func() error {
			errs[i] = job(ctx)
			return nil // every job runs to its end; errs decides below
		})
	}
	_ = g.Wait()
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !refused(err) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// cohortJobs adds the inserts of the rows of configurations, experiments,
// appeals and exchanges.
func (p *Projector) cohortJobs(s *rowSet, add func(func(context.Context) error)) {
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "configurations", s.configurations, func(b driver.Batch, r configurationRow) error {
			return b.Append(r.EventID, r.ConfigurationID, r.Name, r.Provider, r.Model, r.ValidatorModel, r.InvestigatorPrompt,
				r.ValidatorPrompt, r.Policy, r.AuthorContext, r.Operator, r.DeclaredAt, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "experiments", s.experiments, func(b driver.Batch, r experimentRow) error {
			return b.Append(r.EventID, r.ExperimentID, r.Kind, r.Name, r.ControlConfigurationID, r.CandidateConfigurationID,
				r.CandidateShareBP, r.Operator, r.EventTime, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "appeals", s.appeals, func(b driver.Batch, r appealRow) error {
			return b.Append(r.EventID, r.AppealID, r.Kind, r.ClaimID, r.InvestigationID, r.Role, r.URLCount, r.Outcome,
				r.PolicyVersion, r.EventTime, r.partition, r.offset)
		})
	})
	add(func(ctx context.Context) error {
		return insertChunks(ctx, p, "exchanges", s.exchanges, func(b driver.Batch, r exchangeRow) error {
			return b.Append(r.EventID, r.InvestigationID, r.Series, r.Attempt, r.Stage, r.Round, r.Provider, r.Model, r.HTTPStatus,
				r.Failed, r.DurationMS, r.InputTokens, r.CachedInputTokens, r.OutputTokens, r.ReasoningTokens, r.TotalTokens,
				r.RecordedAt, r.partition, r.offset)
		})
	})
}

// parkedColumns are the columns of _parked in the canonical dump.
const parkedColumns = "topic, log_partition, log_offset, event_id, event_type, class"

// columns lists each table's inserted columns, in Append order.
var columns = map[string]string{
	"post_versions": "event_id, post_id, post_version_id, platform, external_id, url, version_hash, author_id, author_platform_user_id, author_display_name, provenance, word_count, reporter_key_hash, registered_at, log_partition, log_offset",
	"views":         "event_id, post_id, post_version_id, platform, viewer_kind, authenticated, viewed_at, viewed_on, log_partition, log_offset",
	"investigations": "event_id, investigation_id, post_id, post_version_id, status, platform, source, unique_view_score, provenance, prompt_version, provider, model, claim_count, failure_reason, attempts, series, " +
		"configuration_id, experiment_id, arm, supersedes, event_time, log_partition, log_offset",
	"claims":   "event_id, claim_id, investigation_id, post_id, post_version_id, position, text, summary, source_count, published_at, log_partition, log_offset",
	"attempts": "event_id, investigation_id, series, attempt, prompt_name, prompt_version, prompt_sha256, provider, model, credential, started_at, log_partition, log_offset",
	"claim_assessments": "event_id, submission_id, investigation_id, series, attempt, causal, e_max, e_mean3, c_max, agree_dom, rel_avg, rec_max, num_ok, raw, score, verdict, " +
		"gate4, gate4_sources, gate4_quality, gate4_agreement, registry_version, policy_version, publish_mode, published, reason, failed, " +
		"query_count, query_errors, source_count, dropped_count, stance_provider, stance_model, stance_prompt_version, assessed_at, log_partition, log_offset",
	"assessment_sources": "event_id, submission_id, investigation_id, position, url, domain, tier, rule, origin, entail, contradict, neutral, stance_note, num, recency, " +
		"assessed_at, log_partition, log_offset",
	"analyses":          "event_id, analysis_id, input_kind, platform, source, prompt_version, text_length, requested_at, log_partition, log_offset",
	"analysis_attempts": "event_id, analysis_id, attempt, prompts, provider, model, registry_version, policy_version, rubric_version, started_at, log_partition, log_offset",
	"post_verdicts": "event_id, analysis_id, attempt, label, band, truth_percent, confidence, confidence_band, caps, claim_count, caveat_count, " +
		"source_count, from_search, verdict_at, log_partition, log_offset",
	"configurations": "event_id, configuration_id, name, provider, model, validator_model, investigator_prompt, validator_prompt, policy, " +
		"author_context, operator, declared_at, log_partition, log_offset",
	"experiments": "event_id, experiment_id, kind, name, control_configuration_id, candidate_configuration_id, candidate_share_bp, operator, " +
		"event_time, log_partition, log_offset",
	"appeals": "event_id, appeal_id, kind, claim_id, investigation_id, role, url_count, outcome, policy_version, event_time, log_partition, log_offset",
	"exchanges": "event_id, investigation_id, series, attempt, stage, round, provider, model, http_status, failed, duration_ms, input_tokens, " +
		"cached_input_tokens, output_tokens, reasoning_tokens, total_tokens, recorded_at, log_partition, log_offset",
}

// insertChunks inserts rows into table in INSERTs of at most p.insertRows.
func insertChunks[R any](ctx context.Context, p *Projector, table string, rows []R, appendRow func(driver.Batch, R) error) error {
	for start := 0; start < len(rows); start += p.insertRows {
		end := min(start+p.insertRows, len(rows))
		batch, err := p.conn.PrepareBatch(p.columns.insertContext(ctx, table, columnList(columns[table])),
			"INSERT INTO "+table+" ("+columns[table]+")")
		if err != nil {
			return fmt.Errorf("prepare insert into %s: %w", table, err)
		}
		for _, r := range rows[start:end] {
			if err := appendRow(batch, r); err != nil {
				_ = batch.Abort()
				return fmt.Errorf("append to %s: %w: %w", table, errRowRefused, err)
			}
		}
		if err := batch.Send(); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

func header(rec *kgo.Record, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}
