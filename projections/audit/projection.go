package audit

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/projections/pgproj"
)

// ProjectorName is the audit projector's checkpoint identity; Schema is
// the Postgres schema of its tables.
const (
	ProjectorName = "audit"
	Schema        = "audit"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the audit schema's migrations (pgproj.Migrate).
func Migrations() fs.FS {
	return migrate.Dir(migrationFiles, "migrations")
}

// Applier projects the investigations and posts topics into the audit
// tables: every investigation event's envelope with its position (keyed by
// event id, so a retried append is stored once, as Build counts it once),
// and the registration facts of every post version, folded with
// PostVersion.Add exactly as ReadLog folds them.
type Applier struct {
	registry *events.Registry
}

// NewApplier returns the audit applier; reg encodes the stored envelopes.
func NewApplier(reg *events.Registry) *Applier { return &Applier{registry: reg} }

var _ pgproj.PositionedApplier = (*Applier)(nil)

// Handles implements pgproj.Applier (t is the stored type of a record).
func (a *Applier) Handles(t string) bool {
	cur := a.registry.CurrentType(t)
	return IsInvestigationType(cur) || IsPostType(cur) || IsAnalysisType(cur) || IsAppealType(cur)
}

// Apply implements pgproj.Applier; the audit needs positions.
func (a *Applier) Apply(context.Context, pgx.Tx, []events.Event) error {
	return errors.New("audit: the applier needs log positions (ApplyPositioned)")
}

// ApplyPositioned implements pgproj.PositionedApplier.
func (a *Applier) ApplyPositioned(ctx context.Context, tx pgx.Tx, evs []pgproj.Positioned) error {
	b := &pgx.Batch{}
	var versions []string
	byVersion := map[string][]Record{}
	for _, pe := range evs {
		ev := pe.Event
		rec := Record{Event: ev, Position: Position{Topic: pe.Topic, Partition: pe.Partition, Offset: pe.Offset}}
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			if _, ok := byVersion[p.PostVersionID]; !ok {
				versions = append(versions, p.PostVersionID)
			}
			byVersion[p.PostVersionID] = append(byVersion[p.PostVersionID], rec)
		case *events.PostIntegrityAnomalyRecordedV1:
			if _, ok := byVersion[p.PostVersionID]; !ok {
				versions = append(versions, p.PostVersionID)
			}
			byVersion[p.PostVersionID] = append(byVersion[p.PostVersionID], rec)
		default:
			if table, column, ok := aggregateTable(ev.Type()); ok {
				msg, err := a.registry.Encode(ev)
				if err != nil {
					return fmt.Errorf("audit: encode %s: %w", ev.ID, err)
				}
				b.Queue(`INSERT INTO `+table+` (event_id, `+column+`, topic, partition, kafka_offset, event_type, event_time, envelope)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (event_id) DO NOTHING`,
					ev.ID, ev.Subject, pe.Topic, pe.Partition, pe.Offset, ev.Type(), ev.Time, msg.Value)
				continue
			}
			if !IsInvestigationType(ev.Type()) {
				return fmt.Errorf("audit: unexpected payload %T", ev.Payload)
			}
			msg, err := a.registry.Encode(ev)
			if err != nil {
				return fmt.Errorf("audit: encode %s: %w", ev.ID, err)
			}
			b.Queue(`INSERT INTO audit_events (event_id, investigation_id, topic, partition, kafka_offset, event_type, event_time, envelope)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (event_id) DO NOTHING`,
				ev.ID, ev.Subject, pe.Topic, pe.Partition, pe.Offset, ev.Type(), ev.Time, msg.Value)
			if p, ok := ev.Payload.(*events.InvestigationRequestedV1); ok && p.Supersedes != "" && p.Supersedes != p.InvestigationID {
				b.Queue(`INSERT INTO audit_supersessions (superseded, investigation_id, requested_at) VALUES ($1, $2, $3)
					ON CONFLICT (superseded, investigation_id) DO UPDATE SET requested_at = LEAST(audit_supersessions.requested_at, EXCLUDED.requested_at)`,
					p.Supersedes, p.InvestigationID, ev.Time)
			}
		}
	}
	if len(versions) > 0 {
		facts, err := loadFacts(ctx, tx, versions)
		if err != nil {
			return err
		}
		for _, id := range versions {
			pv := facts[id]
			if pv == nil {
				pv = &PostVersion{PostVersionID: id, Anomalies: []Anomaly{}}
			}
			for _, r := range byVersion[id] {
				pv.Add(r)
			}
			raw, err := json.Marshal(pv)
			if err != nil {
				return fmt.Errorf("audit: encode facts of %s: %w", id, err)
			}
			b.Queue(`INSERT INTO audit_post_versions (post_version_id, facts) VALUES ($1, $2)
				ON CONFLICT (post_version_id) DO UPDATE SET facts = EXCLUDED.facts`, id, raw)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("audit statements: %w", err)
	}
	return nil
}

// aggregateTable is the per-aggregate event table (and its id column) of
// verdict analysis and appeal events.
func aggregateTable(eventType string) (table, idColumn string, ok bool) {
	switch {
	case IsAnalysisType(eventType):
		return "audit_analysis_events", "analysis_id", true
	case IsAppealType(eventType):
		return "audit_appeal_events", "appeal_id", true
	}
	return "", "", false
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func loadFacts(ctx context.Context, q querier, versionIDs []string) (map[string]*PostVersion, error) {
	rows, err := q.Query(ctx, `SELECT post_version_id::text, facts FROM audit_post_versions WHERE post_version_id = ANY($1::uuid[])`, versionIDs)
	if err != nil {
		return nil, fmt.Errorf("audit: load post versions: %w", err)
	}
	defer rows.Close()
	out := map[string]*PostVersion{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		var pv PostVersion
		if err := json.Unmarshal(raw, &pv); err != nil {
			return nil, fmt.Errorf("audit: facts of %s: %w", id, err)
		}
		out[id] = &pv
	}
	return out, rows.Err()
}

// Reader reads trails from the audit projection.
type Reader struct {
	pool     *pgxpool.Pool
	registry *events.Registry
}

// NewReader returns a reader over a pool whose search_path is the audit
// schema (postgres.Connect(ctx, url, audit.Schema)).
func NewReader(pool *pgxpool.Pool, reg *events.Registry) *Reader {
	return &Reader{pool: pool, registry: reg}
}

// FullTrail is the whole trail of an investigation in any state, raw
// exchange bodies and caller hashes included (operators and auditors).
// ErrNotFound when the projection has no event of it; ErrInvalidID when id
// is not a UUID.
func (r *Reader) FullTrail(ctx context.Context, investigationID string) (*Trail, error) {
	if !isUUID(investigationID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidID, investigationID)
	}
	// One snapshot for the events and the post facts.
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("audit: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // reads only: a failed rollback closes the connection, which ends the transaction
	rows, err := tx.Query(ctx, `SELECT topic, partition, kafka_offset, envelope FROM audit_events
		WHERE investigation_id = $1 ORDER BY partition, kafka_offset`, investigationID)
	if err != nil {
		return nil, fmt.Errorf("audit: read events: %w", err)
	}
	var recs []Record
	for rows.Next() {
		var pos Position
		var env []byte
		if err := rows.Scan(&pos.Topic, &pos.Partition, &pos.Offset, &env); err != nil {
			rows.Close()
			return nil, err
		}
		ev, err := r.registry.Decode(env)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit: stored event at %s: %w", pos, err)
		}
		recs = append(recs, Record{Event: ev, Position: pos})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: read events: %w", err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, investigationID)
	}
	var post *PostVersion
	if _, versionID := postOf(recs); versionID != "" {
		facts, err := loadFacts(ctx, tx, []string{versionID})
		if err != nil {
			return nil, err
		}
		if pv := facts[versionID]; pv != nil && pv.Registrations > 0 {
			post = pv
		}
	}
	t, err := Build(investigationID, recs, post)
	if err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT investigation_id::text FROM audit_supersessions WHERE superseded = $1
		ORDER BY requested_at, investigation_id`, investigationID)
	if err != nil {
		return nil, fmt.Errorf("audit: read supersessions: %w", err)
	}
	if t.SupersededBy, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return nil, fmt.Errorf("audit: read supersessions: %w", err)
	}
	return t, nil
}

// Trail is the public trail of a COMPLETE investigation (see
// Trail.Public for what it leaves out), or nil when the investigation is
// unknown or not complete (pending, processing, failed). ErrInvalidID when
// id is not a UUID. The public GraphQL field resolves through this.
func (r *Reader) Trail(ctx context.Context, investigationID string) (*Trail, error) {
	t, err := r.FullTrail(ctx, investigationID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if t.Status != events.StatusComplete {
		return nil, nil
	}
	return t.Public()
}

// FullAnalysisTrail is the whole trail of a verdict analysis in any
// state, exact exchange bodies and requester hashes included (operators
// and auditors). ErrAnalysisNotFound when the projection has no event of
// it; ErrInvalidAnalysisID when id is not a UUID.
func (r *Reader) FullAnalysisTrail(ctx context.Context, analysisID string) (*AnalysisTrail, error) {
	if !isUUID(analysisID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidAnalysisID, analysisID)
	}
	got, err := r.fullAnalysisTrails(ctx, []string{analysisID})
	if err != nil {
		return nil, err
	}
	t, ok := got[analysisID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrAnalysisNotFound, analysisID)
	}
	return t, nil
}

// fullAnalysisTrails builds the trails of ids from one query; analyses
// without events are absent.
func (r *Reader) fullAnalysisTrails(ctx context.Context, ids []string) (map[string]*AnalysisTrail, error) {
	byID, err := r.recordsOf(ctx, "audit_analysis_events", "analysis_id", ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*AnalysisTrail, len(byID))
	for id, recs := range byID {
		t, err := BuildAnalysis(id, recs)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, nil
}

// recordsOf reads the stored events of the aggregates ids from one of the
// per-aggregate event tables (audit_analysis_events by analysis_id,
// audit_appeal_events by appeal_id), in log order, from one query.
func (r *Reader) recordsOf(ctx context.Context, table, idColumn string, ids []string) (map[string][]Record, error) {
	rows, err := r.pool.Query(ctx, `SELECT `+idColumn+`::text, topic, partition, kafka_offset, envelope FROM `+table+`
		WHERE `+idColumn+` = ANY($1::uuid[]) ORDER BY `+idColumn+`, partition, kafka_offset`, ids)
	if err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", table, err)
	}
	defer rows.Close()
	byID := map[string][]Record{}
	for rows.Next() {
		var id string
		var pos Position
		var env []byte
		if err := rows.Scan(&id, &pos.Topic, &pos.Partition, &pos.Offset, &env); err != nil {
			return nil, err
		}
		ev, err := r.registry.Decode(env)
		if err != nil {
			return nil, fmt.Errorf("audit: stored event at %s: %w", pos, err)
		}
		byID[id] = append(byID[id], Record{Event: ev, Position: pos})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: read %s: %w", table, err)
	}
	return byID, nil
}

// uuids keeps the ids that are UUIDs (batched public reads answer the
// others as absent).
func uuids(ids []string) []string {
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	return valid
}

// AnalysisTrails are the public trails of analyses in any state (the job
// JSON is public in any state too; see AnalysisTrail.Public for what they
// leave out), from one query; ids without events (or not UUIDs) are
// absent. The public GraphQL field resolves through this, batched.
func (r *Reader) AnalysisTrails(ctx context.Context, ids []string) (map[string]*AnalysisTrail, error) {
	valid := uuids(ids)
	if len(valid) == 0 {
		return map[string]*AnalysisTrail{}, nil
	}
	full, err := r.fullAnalysisTrails(ctx, valid)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*AnalysisTrail, len(full))
	for id, t := range full {
		if out[id], err = t.Public(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FullAppealTrail is the whole trail of an appeal (requester hash, worker
// names and exact exchange bodies included: operators and auditors).
// ErrAppealNotFound when the projection has no event of it, ErrInvalidID
// when id is not a UUID.
func (r *Reader) FullAppealTrail(ctx context.Context, appealID string) (*AppealTrail, error) {
	if !isUUID(appealID) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidID, appealID)
	}
	got, err := r.fullAppealTrails(ctx, []string{appealID})
	if err != nil {
		return nil, err
	}
	t, ok := got[appealID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrAppealNotFound, appealID)
	}
	return t, nil
}

// AppealTrails are the public trails (AppealTrail.Public) of the appeals
// in ids that were filed, from one query; other ids are absent. The
// public GraphQL field resolves through this, batched.
func (r *Reader) AppealTrails(ctx context.Context, ids []string) (map[string]*AppealTrail, error) {
	valid := uuids(ids)
	if len(valid) == 0 {
		return map[string]*AppealTrail{}, nil
	}
	full, err := r.fullAppealTrails(ctx, valid)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*AppealTrail, len(full))
	for id, t := range full {
		if t.Filed == nil {
			continue // a decision folded before its filing: not public yet
		}
		if out[id], err = t.Public(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *Reader) fullAppealTrails(ctx context.Context, ids []string) (map[string]*AppealTrail, error) {
	byID, err := r.recordsOf(ctx, "audit_appeal_events", "appeal_id", ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*AppealTrail, len(byID))
	for id, recs := range byID {
		t, err := BuildAppeal(id, recs)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, nil
}
