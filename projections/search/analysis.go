package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// Verdict analyses are searchable beside investigations: generation N of
// the projection also writes the versioned index "<prefix>analyses-vN",
// read through the alias "<prefix>analyses". Only COMPLETE analyses with a
// post verdict have a document.

// AnalysisAliasName is the alias analysis searches read through.
func AnalysisAliasName(prefix string) string { return prefix + "analyses" }

// AnalysisIndexName is the versioned analyses index of generation gen.
func AnalysisIndexName(prefix string, gen int64) string {
	return prefix + "analyses-v" + strconv.FormatInt(gen, 10)
}

// analysisIndexBody is the settings and mapping of an analyses index
// (dynamic: strict, like the investigations index).
const analysisIndexBody = `{
  "settings": {
    "number_of_shards": 1,
    "auto_expand_replicas": "0-1",
    "max_result_window": 10000
  },
  "mappings": {
    "dynamic": "strict",
    "properties": {
      "analysis_id":   {"type": "keyword"},
      "status":        {"type": "keyword"},
      "created_at":    {"type": "date_nanos"},
      "completed_at":  {"type": "date_nanos"},
      "input_kind":    {"type": "keyword"},
      "platform":      {"type": "keyword"},
      "external_id":   {"type": "keyword"},
      "url":           {"type": "keyword", "index": false},
      "title":         {"type": "text", "analyzer": "english"},
      "label":         {"type": "keyword"},
      "band":          {"type": "keyword"},
      "truth_percent": {"type": "integer"},
      "confidence":    {"type": "integer"},
      "summary":       {"type": "text", "analyzer": "english"},
      "caveats":       {"type": "text", "analyzer": "english"},
      "claim_count":   {"type": "integer"},
      "claims": {
        "properties": {
          "id":   {"type": "keyword"},
          "text": {"type": "text", "analyzer": "english"}
        }
      }
    }
  }
}`

// analysisTypes are the analysis events the search projection folds.
var analysisTypes = []string{events.TypeAnalysisRequestedV1, events.TypeAnalysisClaimExtractedV1,
	events.TypeAnalysisPostVerdictV1, events.TypeAnalysisCompletedV1}

// earliest is the condition under which an upsert's incoming row
// (EXCLUDED) replaces table's stored one: it comes from an earlier event.
func earliest(table, at, event string) string {
	return fmt.Sprintf(`(EXCLUDED.%[2]s, EXCLUDED.%[3]s) < (%[1]s.%[2]s, %[1]s.%[3]s)`, table, at, event)
}

// queueAnalysisEvent folds one analysis event and returns the analysis it
// touches.
func queueAnalysisEvent(b *pgx.Batch, ev events.Event) (string, error) {
	switch p := ev.Payload.(type) {
	case *events.AnalysisRequestedV1:
		var set []string
		for _, col := range []string{"input_kind", "platform", "external_id", "url", "title", "created_at", "request_event"} {
			set = append(set, fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN EXCLUDED.%[1]s ELSE analyses.%[1]s END",
				col, earliest("analyses", "created_at", "request_event")))
		}
		b.Queue(`INSERT INTO analyses (analysis_id, input_kind, platform, external_id, url, title, created_at, request_event)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (analysis_id) DO UPDATE SET `+strings.Join(set, ", "),
			p.AnalysisID, p.InputKind, nilIfEmpty(p.Platform), nilIfEmpty(p.ExternalID), nilIfEmpty(p.URL),
			nilIfEmpty(p.Title), ev.Time, ev.ID)
		return p.AnalysisID, nil
	case *events.AnalysisClaimExtractedV1:
		b.Queue(`INSERT INTO analysis_claims (claim_id, analysis_id, attempt, idx, text, at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (claim_id) DO UPDATE SET analysis_id = EXCLUDED.analysis_id, attempt = EXCLUDED.attempt,
				idx = EXCLUDED.idx, text = EXCLUDED.text, at = EXCLUDED.at, event_id = EXCLUDED.event_id
			WHERE `+earliest("analysis_claims", "at", "event_id"),
			p.ClaimID, p.AnalysisID, p.Attempt, p.Index, p.Text, ev.Time, ev.ID)
		return p.AnalysisID, nil
	case *events.AnalysisPostVerdictV1:
		caveats, err := json.Marshal(emptyIfNil(p.Caveats))
		if err != nil {
			return "", fmt.Errorf("search: caveats of %s: %w", p.AnalysisID, err)
		}
		b.Queue(`INSERT INTO analysis_post_verdicts (analysis_id, attempt, label, band, truth_percent, confidence, summary,
				caveats, at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
			ON CONFLICT (analysis_id, attempt) DO UPDATE SET label = EXCLUDED.label, band = EXCLUDED.band,
				truth_percent = EXCLUDED.truth_percent, confidence = EXCLUDED.confidence, summary = EXCLUDED.summary,
				caveats = EXCLUDED.caveats, at = EXCLUDED.at, event_id = EXCLUDED.event_id
			WHERE `+earliest("analysis_post_verdicts", "at", "event_id"),
			p.AnalysisID, p.Attempt, p.Label, p.Band, p.TruthPercent, p.Confidence, p.Summary, caveats, ev.Time, ev.ID)
		return p.AnalysisID, nil
	case *events.AnalysisCompletedV1:
		b.Queue(`INSERT INTO analysis_completions (analysis_id, attempt, completed_at, event_id) VALUES ($1, $2, $3, $4)
			ON CONFLICT (analysis_id, attempt) DO UPDATE SET completed_at = EXCLUDED.completed_at, event_id = EXCLUDED.event_id
			WHERE `+earliest("analysis_completions", "completed_at", "event_id"),
			p.AnalysisID, p.Attempt, ev.Time, ev.ID)
		return p.AnalysisID, nil
	}
	return "", fmt.Errorf("search: unexpected analysis payload %T", ev.Payload)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// advanceAnalyses adds touched's counts to the analyses' revisions, in id
// order (see Apply).
func advanceAnalyses(ctx context.Context, tx pgx.Tx, touched map[string]int64) ([]string, error) {
	ids := make([]string, 0, len(touched))
	for id := range touched {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	counts := make([]int64, len(ids))
	for i, id := range ids {
		counts[i] = touched[id]
	}
	if _, err := tx.Exec(ctx, `INSERT INTO analysis_documents (analysis_id, revision)
		SELECT id, n FROM unnest($1::uuid[], $2::bigint[]) WITH ORDINALITY AS t(id, n, ord) ORDER BY ord
		ON CONFLICT (analysis_id) DO UPDATE SET revision = analysis_documents.revision + EXCLUDED.revision`,
		ids, counts); err != nil {
		return nil, fmt.Errorf("search: analysis revisions: %w", err)
	}
	return ids, nil
}

// AnalysisSource is the indexed document of one COMPLETE analysis. Field
// order is fixed, so the same state always gives the same bytes.
type AnalysisSource struct {
	AnalysisID   string                `json:"analysis_id"`
	Status       string                `json:"status"`
	CreatedAt    string                `json:"created_at"`
	CompletedAt  string                `json:"completed_at"`
	InputKind    string                `json:"input_kind"`
	Platform     *string               `json:"platform"`
	ExternalID   *string               `json:"external_id"`
	URL          *string               `json:"url"`
	Title        *string               `json:"title"`
	Label        string                `json:"label"`
	Band         string                `json:"band"`
	TruthPercent int                   `json:"truth_percent"`
	Confidence   int                   `json:"confidence"`
	Summary      string                `json:"summary"`
	Caveats      []string              `json:"caveats"`
	ClaimCount   int                   `json:"claim_count"`
	Claims       []AnalysisClaimSource `json:"claims"`
}

// AnalysisClaimSource is one claim of an analysis document.
type AnalysisClaimSource struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// BuildAnalysisDocuments reads the documents of the given analyses at
// their current revisions: an analysis with a completed attempt (the
// highest) whose post verdict and request are folded; others have none.
func BuildAnalysisDocuments(ctx context.Context, q Querier, ids []string) ([]Document, error) {
	rows, err := q.Query(ctx, `
		SELECT d.analysis_id::text, d.revision, a.input_kind, a.platform, a.external_id, a.url, a.title, a.created_at,
		       c.completed_at, v.label, v.band, v.truth_percent, v.confidence, v.summary, v.caveats,
		       COALESCE((SELECT jsonb_agg(jsonb_build_object('id', cl.claim_id::text, 'text', cl.text) ORDER BY cl.idx, cl.claim_id)
		                 FROM analysis_claims cl WHERE cl.analysis_id = d.analysis_id AND cl.attempt = c.attempt), '[]'::jsonb)
		FROM analysis_documents d
		JOIN analyses a ON a.analysis_id = d.analysis_id
		JOIN LATERAL (SELECT attempt, completed_at FROM analysis_completions
		              WHERE analysis_id = d.analysis_id ORDER BY attempt DESC LIMIT 1) c ON true
		JOIN analysis_post_verdicts v ON v.analysis_id = d.analysis_id AND v.attempt = c.attempt
		WHERE d.analysis_id = ANY($1::uuid[])
		ORDER BY d.analysis_id`, ids)
	if err != nil {
		return nil, fmt.Errorf("search: read analysis documents: %w", err)
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		var s AnalysisSource
		var revision int64
		var created, completed time.Time
		var caveats, claims []byte
		if err := rows.Scan(&s.AnalysisID, &revision, &s.InputKind, &s.Platform, &s.ExternalID, &s.URL, &s.Title,
			&created, &completed, &s.Label, &s.Band, &s.TruthPercent, &s.Confidence, &s.Summary, &caveats, &claims); err != nil {
			return nil, fmt.Errorf("search: read analysis documents: %w", err)
		}
		s.Status = events.StatusComplete
		s.CreatedAt, s.CompletedAt = formatTime(created), formatTime(completed)
		if err := json.Unmarshal(caveats, &s.Caveats); err != nil {
			return nil, fmt.Errorf("search: caveats of %s: %w", s.AnalysisID, err)
		}
		if err := json.Unmarshal(claims, &s.Claims); err != nil {
			return nil, fmt.Errorf("search: claims of %s: %w", s.AnalysisID, err)
		}
		s.Caveats = emptyIfNil(s.Caveats)
		s.ClaimCount = len(s.Claims)
		body, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("search: analysis document %s: %w", s.AnalysisID, err)
		}
		out = append(out, Document{ID: s.AnalysisID, Version: revision, Source: body})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: read analysis documents: %w", err)
	}
	return out, nil
}
