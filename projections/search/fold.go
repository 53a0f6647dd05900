package search

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// registration is one post.version_registered event awaiting its
// statements; completion one investigation.completed.
type (
	registration struct {
		t time.Time
		p *events.PostVersionRegisteredV1
		// the event's id and the fields derived from it
		id             string
		verifiedAt     *time.Time
		authorID, name *string
	}
	completion struct {
		t      time.Time
		p      *events.InvestigationCompletedV1
		claims []byte
	}
)

func newRegistration(ev events.Event, p *events.PostVersionRegisteredV1) registration {
	r := registration{t: ev.Time, p: p, id: ev.ID}
	if p.Provenance == events.ProvenanceServerVerified {
		r.verifiedAt = &r.t
	}
	if p.Author != nil {
		id := events.AuthorID(p.Platform, p.Author.PlatformUserID)
		r.authorID, r.name = &id, &p.Author.DisplayName
	}
	return r
}

func newCompletion(ev events.Event, p *events.InvestigationCompletedV1) (completion, error) {
	claims, err := json.Marshal(p.Claims)
	if err != nil {
		return completion{}, fmt.Errorf("search: claims of %s: %w", p.InvestigationID, err)
	}
	return completion{t: ev.Time, p: p, claims: claims}, nil
}

// queueFold queues the fold of a batch's registrations and completions
// (each in log order) as set-based upserts: one statement per table and
// round instead of one per event, which is most of what a batch costs
// Postgres (a plan and an executor start per statement). The result is
// the one the events applied one at a time give: each upsert reads and
// writes only its own table, and the rows of one key are applied in log
// order, one per round (an upsert may not touch a row twice). Nothing is
// folded in memory, so an event that fails on its own fails its
// statement, and parking isolates the same events whatever the batch.
func queueFold(b *pgx.Batch, regs []registration, comps []completion) {
	queueRounds(b, regs, func(r registration) string { return strings.ToLower(r.p.PostVersionID) }, upsertVersions,
		func(rs []registration) []any {
			return []any{
				column(rs, func(r registration) string { return r.p.PostVersionID }),
				column(rs, func(r registration) string { return events.InvestigationID(r.p.PostVersionID) }),
				column(rs, func(r registration) string { return r.p.PostID }),
				column(rs, func(r registration) string { return r.p.Platform }),
				column(rs, func(r registration) string { return r.p.ExternalID }),
				column(rs, func(r registration) string { return r.p.URL }),
				column(rs, func(r registration) string { return r.p.ContentHash }),
				column(rs, func(r registration) *string { return r.authorID }),
				column(rs, func(r registration) *string { return r.name }),
				column(rs, func(r registration) string { return Excerpt(r.p.ContentText) }),
				column(rs, func(r registration) bool { return r.verifiedAt != nil }),
				column(rs, func(r registration) time.Time { return r.t }),
				column(rs, func(r registration) string { return r.id }),
				column(rs, func(r registration) *time.Time { return r.verifiedAt }),
			}
		})
	var reporters []registration
	for _, r := range regs {
		if r.p.ReporterKey != "" {
			reporters = append(reporters, r)
		}
	}
	if len(reporters) > 0 {
		// DO NOTHING may meet the same row twice in one statement.
		b.Queue(`INSERT INTO version_reporters (post_version_id, reporter_key)
			SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT DO NOTHING`,
			column(reporters, func(r registration) string { return r.p.PostVersionID }),
			column(reporters, func(r registration) string { return r.p.ReporterKey }))
	}
	queueRounds(b, comps, func(c completion) string { return strings.ToLower(c.p.InvestigationID) },
		`INSERT INTO investigations (investigation_id, post_id, post_version_id, status, provenance,
				checked_at, prompt_version, provider, model, claims, configuration_id)
			SELECT id, post_id, version_id, 'COMPLETE', provenance, t, prompt_version, provider, model, claims, configuration_id
			FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[],
				$9::jsonb[], $10::text[])
				AS r(id, post_id, version_id, provenance, t, prompt_version, provider, model, claims, configuration_id)
			ON CONFLICT (investigation_id) DO UPDATE SET provenance = EXCLUDED.provenance,
				checked_at = EXCLUDED.checked_at, prompt_version = EXCLUDED.prompt_version,
				provider = EXCLUDED.provider, model = EXCLUDED.model, claims = EXCLUDED.claims,
				completions = investigations.completions + 1`,
		func(cs []completion) []any {
			return []any{
				column(cs, func(c completion) string { return c.p.InvestigationID }),
				column(cs, func(c completion) string { return c.p.PostID }),
				column(cs, func(c completion) string { return c.p.PostVersionID }),
				column(cs, func(c completion) string { return c.p.Provenance }),
				column(cs, func(c completion) time.Time { return c.t }),
				column(cs, func(c completion) string { return c.p.PromptVersion }),
				column(cs, func(c completion) string { return c.p.Provider }),
				column(cs, func(c completion) string { return c.p.Model }),
				column(cs, func(c completion) string { return string(c.claims) }),
				column(cs, func(c completion) string { return c.p.ConfigurationID }),
			}
		})
}

// upsertVersions inserts versions or folds more registrations of them:
// the verification latch keeps the earliest time, and a better
// registration than the one the row describes (see migration 0001)
// replaces the descriptive fields.
var upsertVersions = func() string {
	better := `(NOT EXCLUDED.source_verified, EXCLUDED.source_at, EXCLUDED.source_event) < ` +
		`(NOT versions.source_verified, versions.source_at, versions.source_event)`
	var set []string
	for _, col := range []string{"url", "author_id", "author_name", "source_verified", "source_at", "source_event"} {
		set = append(set, fmt.Sprintf("%[1]s = CASE WHEN %[2]s THEN EXCLUDED.%[1]s ELSE versions.%[1]s END", col, better))
	}
	// Every SET expression reads the row as it was before the update.
	return `INSERT INTO versions (post_version_id, investigation_id, post_id, platform, external_id, url,
			content_hash, author_id, author_name, excerpt, source_verified, source_at, source_event, server_verified_at,
			registrations)
		SELECT *, 1 FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[],
			$8::uuid[], $9::text[], $10::text[], $11::boolean[], $12::timestamptz[], $13::text[], $14::timestamptz[])
		ON CONFLICT (post_version_id) DO UPDATE SET ` + strings.Join(set, ",\n\t\t\t") + `,
			server_verified_at = LEAST(versions.server_verified_at, EXCLUDED.server_verified_at),
			registrations = versions.registrations + 1`
}()

// queueRounds queues sql once per round of rows: a row goes to the round
// after the last one holding its key, so no statement touches a row twice
// and each key's rows are applied in their order. args builds the
// statement's column arrays from a round's rows.
func queueRounds[R any](b *pgx.Batch, rows []R, key func(R) string, sql string, args func([]R) []any) {
	if len(rows) == 0 {
		return
	}
	seen := make(map[string]int, len(rows))
	var rounds [][]R
	for _, r := range rows {
		k := key(r)
		n := seen[k]
		seen[k] = n + 1
		if n == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[n] = append(rounds[n], r)
	}
	for _, rs := range rounds {
		b.Queue(sql, args(rs)...)
	}
}

// column is one field of rows, as the array a statement unnests.
func column[R, V any](rows []R, f func(R) V) []V {
	out := make([]V, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}
