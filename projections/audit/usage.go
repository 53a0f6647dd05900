package audit

import (
	"context"
	"fmt"
)

// StageUsage is the mean tokens per investigation of one stage's model
// exchanges (INVESTIGATOR, VALIDATOR, ASSESSOR).
type StageUsage struct {
	Stage                                 string
	Input, CachedInput, Output, Reasoning float64
}

// UsageSample is the mean token usage of the latest completed
// investigations: the basis of re-processing cost estimates.
type UsageSample struct {
	// Investigations is how many completed investigations were averaged
	// (0: no data, nothing can be estimated).
	Investigations int
	Stages         []StageUsage
}

// MeanUsage averages the token usage recorded in the model exchanges of
// the latest limit completed investigations (by completion time), per
// stage. Every exchange of such an investigation counts, failed attempts
// included: a re-run pays for them too.
func (r *Reader) MeanUsage(ctx context.Context, limit int) (UsageSample, error) {
	if limit < 1 {
		return UsageSample{}, fmt.Errorf("mean usage: limit %d < 1", limit)
	}
	var out UsageSample
	err := r.pool.QueryRow(ctx, `SELECT count(DISTINCT investigation_id) FROM (
			SELECT investigation_id FROM audit_events WHERE event_type = 'investigation.completed.v1'
			ORDER BY event_time DESC, investigation_id LIMIT $1) c`, limit).Scan(&out.Investigations)
	if err != nil {
		return UsageSample{}, fmt.Errorf("mean usage: %w", err)
	}
	if out.Investigations == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `WITH recent AS (
			SELECT DISTINCT investigation_id FROM (
				SELECT investigation_id FROM audit_events WHERE event_type = 'investigation.completed.v1'
				ORDER BY event_time DESC, investigation_id LIMIT $1) c),
		usage AS (
			SELECT d->>'stage' AS stage, d->'usage' AS u
			FROM audit_events e JOIN recent USING (investigation_id),
				LATERAL (SELECT convert_from(e.envelope, 'UTF8')::jsonb->'data') AS x(d)
			WHERE e.event_type = 'investigation.exchange_recorded.v1')
		SELECT stage,
			COALESCE(sum((u->>'input_tokens')::bigint), 0),
			COALESCE(sum((u->>'cached_input_tokens')::bigint), 0),
			COALESCE(sum((u->>'output_tokens')::bigint), 0),
			COALESCE(sum((u->>'reasoning_tokens')::bigint), 0)
		FROM usage GROUP BY stage ORDER BY stage`, limit)
	if err != nil {
		return UsageSample{}, fmt.Errorf("mean usage: %w", err)
	}
	defer rows.Close()
	n := float64(out.Investigations)
	for rows.Next() {
		var s StageUsage
		var in, cached, output, reasoning int64
		if err := rows.Scan(&s.Stage, &in, &cached, &output, &reasoning); err != nil {
			return UsageSample{}, fmt.Errorf("mean usage: %w", err)
		}
		s.Input, s.CachedInput, s.Output, s.Reasoning = float64(in)/n, float64(cached)/n, float64(output)/n, float64(reasoning)/n
		out.Stages = append(out.Stages, s)
	}
	if err := rows.Err(); err != nil {
		return UsageSample{}, fmt.Errorf("mean usage: %w", err)
	}
	return out, nil
}
