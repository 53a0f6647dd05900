package search

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/migrate"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the search state schema's migrations (pgproj.Migrate).
func Migrations() fs.FS {
	return migrate.Dir(migrationFiles, "migrations")
}

// StateSchema is the Postgres schema of the projector's fold (generation 1;
// later generations are suffixed, see projections/targets.Name).
const StateSchema = "search_state"

// ExcerptRunes bounds the post excerpt indexed with a document.
const ExcerptRunes = 2000

// Applier folds post registrations and investigation completions into the
// search state schema and, in the same transaction, indexes the documents of
// the COMPLETE investigations a batch touched at their new revisions
// (Elasticsearch external versions). If indexing fails the transaction rolls
// back and the batch is retried; if the process dies after Elasticsearch
// accepted the documents but before the commit, the redelivered batch folds
// to the same revisions and the same documents, which Elasticsearch answers
// with 409 (already there): indexing is idempotent.
//
// With WithAnalyses, it also folds verdict analyses and indexes the
// documents of the COMPLETE ones into their own index, the same way.
type Applier struct {
	index         string
	analysisIndex string
	bulk          *Bulk
}

// NewApplier indexes into index (a versioned index, not the alias) with bulk.
func NewApplier(bulk *Bulk, index string) *Applier {
	return &Applier{index: index, bulk: bulk}
}

// NewApplierFor is NewApplier with the default bulk limits.
func NewApplierFor(es *elasticsearch.Client, index string) *Applier {
	return NewApplier(NewBulk(es), index)
}

// WithAnalyses makes the applier index COMPLETE verdict analyses into
// index (a versioned analyses index, not the alias); without it, analysis
// events are not read.
func (a *Applier) WithAnalyses(index string) *Applier {
	a.analysisIndex = index
	return a
}

// Handles implements pgproj.Applier.
func (a *Applier) Handles(t string) bool {
	if a.analysisIndex != "" && slices.Contains(analysisTypes, t) {
		return true
	}
	return t == events.TypePostVersionRegisteredV1 || t == events.TypeInvestigationCompletedV1 ||
		t == events.TypeAppealDecidedV1
}

// Apply implements pgproj.Applier.
func (a *Applier) Apply(ctx context.Context, tx pgx.Tx, evs []events.Event) error {
	b := &pgx.Batch{}
	touched := map[string]bool{}
	var registered []string
	var regs []registration
	var comps []completion
	analyses := map[string]int64{}
	for _, ev := range evs {
		if slices.Contains(analysisTypes, ev.Type()) {
			id, err := queueAnalysisEvent(b, ev)
			if err != nil {
				return err
			}
			analyses[id]++
			continue
		}
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			regs = append(regs, newRegistration(ev, p))
			touched[events.InvestigationID(p.PostVersionID)] = true
			registered = append(registered, p.PostVersionID)
		case *events.InvestigationCompletedV1:
			c, err := newCompletion(ev, p)
			if err != nil {
				return err
			}
			comps = append(comps, c)
			touched[p.InvestigationID] = true
		case *events.AppealDecidedV1:
			// Only an appeal's first decision counts; a retraction marks
			// the claim (the smallest appeal id keeps it, in any order).
			b.Queue(`WITH first AS (
					INSERT INTO appeal_decisions (appeal_id, outcome) VALUES ($3, $6)
					ON CONFLICT (appeal_id) DO NOTHING RETURNING outcome)
				INSERT INTO retracted_claims (claim_id, investigation_id, appeal_id, reason, retracted_at)
				SELECT $1, $2, $3, $4, $5 FROM first WHERE first.outcome = $7
				ON CONFLICT (claim_id) DO UPDATE SET appeal_id = EXCLUDED.appeal_id, reason = EXCLUDED.reason,
					retracted_at = EXCLUDED.retracted_at
				WHERE EXCLUDED.appeal_id < retracted_claims.appeal_id`,
				p.ClaimID, p.InvestigationID, p.AppealID, p.Reason, ev.Time, p.Outcome, events.AppealRetracted)
			if p.Outcome == events.AppealRetracted {
				touched[p.InvestigationID] = true
			}
		default:
			// Handles admits nothing else.
			return fmt.Errorf("search: unexpected payload %T", ev.Payload)
		}
	}
	queueFold(b, regs, comps)
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("search: fold: %w", err)
		}
	}
	if len(analyses) > 0 {
		ids, err := advanceAnalyses(ctx, tx, analyses)
		if err != nil {
			return err
		}
		docs, err := BuildAnalysisDocuments(ctx, tx, ids)
		if err != nil {
			return err
		}
		if len(docs) > 0 {
			if err := a.bulk.Index(ctx, a.analysisIndex, docs); err != nil {
				return fmt.Errorf("search: %w", err)
			}
		}
	}
	if len(touched) == 0 {
		return nil
	}
	// A registration changes the documents of every investigation of its
	// version, under any configuration.
	if len(registered) > 0 {
		rows, err := tx.Query(ctx, `SELECT investigation_id::text FROM investigations
			WHERE post_version_id = ANY($1::uuid[]) AND configuration_id <> ''`, registered)
		if err != nil {
			return fmt.Errorf("search: investigations of registered versions: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("search: investigations of registered versions: %w", err)
		}
		for _, id := range ids {
			touched[id] = true
		}
	}
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if err := lockDocuments(ctx, tx, ids); err != nil {
		return err
	}
	docs, err := advanceDocuments(ctx, tx, ids, batchClaims(comps))
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return nil
	}
	if err := a.bulk.Index(ctx, a.index, docs); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	return nil
}

// lockDocuments locks the document rows of ids (sorted), creating the
// missing ones, in id order: concurrent writers of the same documents
// from other partitions lock them in the same order, and a writer waits
// for the transaction holding the lock. DO UPDATE locks an existing row
// even when its WHERE leaves the row as it is, so nothing is written for
// the lock alone. The revisions and documents are then computed by a
// later statement (advanceDocuments), whose snapshot includes whatever the
// previous holder committed.
func lockDocuments(ctx context.Context, tx pgx.Tx, ids []string) error {
	if _, err := tx.Exec(ctx, `INSERT INTO documents (investigation_id, revision)
		SELECT id, 1 FROM unnest($1::uuid[]) WITH ORDINALITY AS t(id, ord) ORDER BY ord
		ON CONFLICT (investigation_id) DO UPDATE SET revision = documents.revision WHERE false`, ids); err != nil {
		return fmt.Errorf("search: lock revisions: %w", err)
	}
	return nil
}

// revisionsSQL computes, for the documents $1, the revision the fold now
// says: its version's registrations, its investigation's completions and
// its retracted claims. Every term only grows, so a revision never goes
// back, and it does not depend on how events were batched or interleaved.
const revisionsSQL = `SELECT t.id, GREATEST(1,
			COALESCE((SELECT v.registrations FROM versions v
				WHERE v.post_version_id = COALESCE(i.post_version_id,
					(SELECT w.post_version_id FROM versions w WHERE w.investigation_id = t.id LIMIT 1))), 0)
			+ COALESCE(i.completions, 0)
			+ (SELECT count(*) FROM retracted_claims r WHERE r.investigation_id = t.id)) AS revision
		FROM unnest($1::uuid[]) AS t(id)
		LEFT JOIN investigations i ON i.investigation_id = t.id`

// documentColumns are the columns scanDocuments reads, over the aliases d
// (investigation_id and revision), i (investigations) and v (versions);
// claims is the expression of the investigation's claims (NULL: the
// caller has them).
func documentColumns(claims string) string {
	return `d.investigation_id::text, d.revision, i.post_id::text, i.post_version_id::text, i.provenance,
		i.checked_at, i.prompt_version, i.provider, i.model, ` + claims + `, i.configuration_id,
		COALESCE((SELECT array_agg(r.claim_id::text ORDER BY r.claim_id) FROM retracted_claims r
		          WHERE r.investigation_id = d.investigation_id), '{}'),
		v.platform, v.external_id, v.url, v.content_hash, v.author_id::text, v.author_name, v.excerpt,
		v.server_verified_at,
		(SELECT count(*) FROM version_reporters r WHERE r.post_version_id = v.post_version_id)`
}

// advanceDocuments sets the revision of each document in ids (locked by
// lockDocuments) to what the fold now says (a row whose revision stays,
// such as a version registered before its investigation completes, is not
// written again) and returns, in the same statement, the documents of the
// COMPLETE ones at those revisions. claims holds the claims of the
// investigations whose last completion is in the batch (by lower-case id),
// which are then not read back from Postgres.
func advanceDocuments(ctx context.Context, tx pgx.Tx, ids []string, claims map[string][]events.ClaimV1) ([]Document, error) {
	known := make([]string, 0, len(claims))
	for id := range claims {
		known = append(known, id)
	}
	rows, err := tx.Query(ctx, `WITH n AS (`+revisionsSQL+`),
		u AS (UPDATE documents SET revision = n.revision FROM n
			WHERE documents.investigation_id = n.id AND documents.revision <> n.revision)
		SELECT `+documentColumns("CASE WHEN m.id IS NULL THEN i.claims END")+`
		FROM (SELECT id AS investigation_id, revision FROM n) d
		JOIN investigations i ON i.investigation_id = d.investigation_id
		JOIN versions v ON v.post_version_id = i.post_version_id
		LEFT JOIN unnest($2::uuid[]) AS m(id) ON m.id = d.investigation_id
		ORDER BY d.investigation_id`, ids, known)
	if err != nil {
		return nil, fmt.Errorf("search: revisions: %w", err)
	}
	return scanDocuments(rows, claims)
}

// batchClaims are the claims of each investigation as its last completion
// in comps (log order) left them in the fold.
func batchClaims(comps []completion) map[string][]events.ClaimV1 {
	out := make(map[string][]events.ClaimV1, len(comps))
	for _, c := range comps {
		out[strings.ToLower(c.p.InvestigationID)] = c.p.Claims
	}
	return out
}

// Excerpt is the start of a post's normalized text that is indexed: at most
// ExcerptRunes runes, cut back to a word boundary when the text is longer.
func Excerpt(text string) string {
	if utf8.RuneCountInString(text) <= ExcerptRunes {
		return text
	}
	n := 0
	for i := range text {
		if n == ExcerptRunes {
			cut := text[:i]
			if j := strings.LastIndexFunc(cut, unicode.IsSpace); j > len(cut)/2 {
				cut = cut[:j]
			}
			return strings.TrimRightFunc(cut, unicode.IsSpace)
		}
		n++
	}
	return text
}

// Source is the indexed document of one COMPLETE investigation (the
// _source in Elasticsearch). Field order is fixed, so the same state always
// gives the same bytes.
type Source struct {
	InvestigationID string `json:"investigation_id"`
	// ConfigurationID is the analysis configuration the investigation ran
	// under (absent for the default configuration, as in documents indexed
	// before configurations existed).
	ConfigurationID    string        `json:"configuration_id,omitempty"`
	PostID             string        `json:"post_id"`
	PostVersionID      string        `json:"post_version_id"`
	ContentHash        string        `json:"content_hash"`
	Status             string        `json:"status"`
	CheckedAt          string        `json:"checked_at"`
	Platform           string        `json:"platform"`
	ExternalID         string        `json:"external_id"`
	URL                string        `json:"url"`
	AuthorID           *string       `json:"author_id"`
	AuthorDisplayName  *string       `json:"author_display_name"`
	PostExcerpt        string        `json:"post_excerpt"`
	Provenance         string        `json:"provenance"`
	ServerVerifiedAt   *string       `json:"server_verified_at"`
	CorroborationCount int           `json:"corroboration_count"`
	ClaimCount         int           `json:"claim_count"`
	PromptVersion      string        `json:"prompt_version"`
	Provider           string        `json:"provider"`
	Model              string        `json:"model"`
	Claims             []ClaimSource `json:"claims"`
}

// ClaimSource is one published claim inside a Source.
type ClaimSource struct {
	ID        string           `json:"id"`
	Text      string           `json:"text"`
	Context   string           `json:"context"`
	Summary   string           `json:"summary"`
	Reasoning string           `json:"reasoning"`
	Sources   []EvidenceSource `json:"sources"`
}

// EvidenceSource is one source of a claim.
type EvidenceSource struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// Querier is a pool, connection or transaction.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// timeLayout renders times with fixed microsecond precision in UTC (event
// times have microseconds; date_nanos keeps them).
const timeLayout = "2006-01-02T15:04:05.000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// BuildDocuments reads the documents of the given investigations from the
// state schema (q's search_path), each at its current revision. An
// investigation that is not complete yet, or whose version is not
// registered yet, has no document.
func BuildDocuments(ctx context.Context, q Querier, ids []string) ([]Document, error) {
	rows, err := q.Query(ctx, `SELECT `+documentColumns("i.claims")+`
		FROM documents d
		JOIN investigations i ON i.investigation_id = d.investigation_id
		JOIN versions v ON v.post_version_id = i.post_version_id
		WHERE d.investigation_id = ANY($1::uuid[])
		ORDER BY d.investigation_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("search: read documents: %w", err)
	}
	return scanDocuments(rows, nil)
}

// scanDocuments reads the documents of rows (documentColumns). A row
// without claims takes those of known (by lower-case id): the claims the
// fold holds are the JSON of the same values.
func scanDocuments(rows pgx.Rows, known map[string][]events.ClaimV1) ([]Document, error) {
	defer rows.Close()
	var out []Document
	for rows.Next() {
		var s Source
		var revision int64
		var checkedAt time.Time
		var verifiedAt *time.Time
		var claims []byte
		var corroboration int64
		var retracted []string
		if err := rows.Scan(&s.InvestigationID, &revision, &s.PostID, &s.PostVersionID, &s.Provenance,
			&checkedAt, &s.PromptVersion, &s.Provider, &s.Model, &claims, &s.ConfigurationID, &retracted,
			&s.Platform, &s.ExternalID, &s.URL, &s.ContentHash, &s.AuthorID, &s.AuthorDisplayName, &s.PostExcerpt,
			&verifiedAt, &corroboration); err != nil {
			return nil, fmt.Errorf("search: read documents: %w", err)
		}
		s.Status = events.StatusComplete
		s.CheckedAt = formatTime(checkedAt)
		if verifiedAt != nil {
			v := formatTime(*verifiedAt)
			s.ServerVerifiedAt = &v
		}
		s.CorroborationCount = int(corroboration)
		published, ok := known[s.InvestigationID]
		if claims != nil || !ok {
			published = nil
			if err := json.Unmarshal(claims, &published); err != nil {
				return nil, fmt.Errorf("search: claims of %s: %w", s.InvestigationID, err)
			}
		}
		// A claim an appeal retracted is no longer part of the current view.
		s.Claims = make([]ClaimSource, 0, len(published))
		for _, c := range published {
			if slices.Contains(retracted, c.ID) {
				continue
			}
			cs := ClaimSource{ID: c.ID, Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning,
				Sources: make([]EvidenceSource, len(c.Sources))}
			for j, src := range c.Sources {
				cs.Sources[j] = EvidenceSource{URL: src.URL, Title: src.Title, Snippet: src.Snippet}
			}
			s.Claims = append(s.Claims, cs)
		}
		s.ClaimCount = len(s.Claims)
		body, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("search: document %s: %w", s.InvestigationID, err)
		}
		out = append(out, Document{ID: s.InvestigationID, Version: revision, Source: body})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: read documents: %w", err)
	}
	return out, nil
}
