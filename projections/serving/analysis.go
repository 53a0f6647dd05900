package serving

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/pgproj"
)

// The verdict analyses (topic analyses). Each event writes the row of its
// own identity; when two events name the same identity the earliest (event
// time, then event id) wins, so the rows never depend on the order the
// events are applied in. A value Postgres refuses (a NUL) fails the
// statement, and the projector parks the event.

// isAnalysisType reports whether t is an analysis event type the serving
// projection applies.
func isAnalysisType(t string) bool {
	switch t {
	case events.TypeAnalysisRequestedV1, events.TypeAnalysisAttemptStartedV1, events.TypeAnalysisExchangeRecordedV1,
		events.TypeAnalysisClaimExtractedV1, events.TypeAnalysisClaimTriagedV1, events.TypeAnalysisQueryIssuedV1,
		events.TypeAnalysisSourceAssessedV1, events.TypeAnalysisClaimVerdictV1, events.TypeAnalysisPostVerdictV1,
		events.TypeAnalysisCompletedV1, events.TypeAnalysisFailedV1:
		return true
	}
	return false
}

// earlier is the condition under which an upsert's incoming row (EXCLUDED)
// replaces the stored one of table: it comes from an earlier event.
func earlier(table, at string) string {
	return fmt.Sprintf(`(EXCLUDED.%[2]s, EXCLUDED.event_id) < (%[1]s.%[2]s, %[1]s.event_id)`, table, at)
}

// queueAnalysisEvent queues the rows of one analysis event at its log
// position: its own row (see the migration) and its entry in the job's
// event stream.
func queueAnalysisEvent(b *pgx.Batch, pe pgproj.Positioned) error {
	ev := pe.Event
	t := ev.Time
	var analysisID string
	switch p := ev.Payload.(type) {
	case *events.AnalysisRequestedV1:
		analysisID = p.AnalysisID
		queueAnalysisRequested(b, ev.ID, t, p)
	case *events.AnalysisAttemptStartedV1:
		analysisID = p.AnalysisID
		prompts, err := json.Marshal(emptyIfNilSlice(p.Prompts))
		if err != nil {
			return fmt.Errorf("analysis prompts: %w", err)
		}
		b.Queue(`INSERT INTO analysis_attempts (analysis_id, attempt, worker, prompts, provider, model,
				registry_version, policy_version, rubric_version, started_at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (analysis_id, attempt) DO UPDATE SET worker = EXCLUDED.worker, prompts = EXCLUDED.prompts,
				provider = EXCLUDED.provider, model = EXCLUDED.model, registry_version = EXCLUDED.registry_version,
				policy_version = EXCLUDED.policy_version, rubric_version = EXCLUDED.rubric_version,
				started_at = EXCLUDED.started_at, event_id = EXCLUDED.event_id
			WHERE `+earlier("analysis_attempts", "started_at"),
			p.AnalysisID, p.Attempt, p.Worker, prompts, p.Provider, p.Model, p.RegistryVersion, p.PolicyVersion,
			p.RubricVersion, t, ev.ID)
	case *events.AnalysisExchangeRecordedV1:
		analysisID = p.AnalysisID
	case *events.AnalysisClaimExtractedV1:
		analysisID = p.AnalysisID
		b.Queue(`INSERT INTO analysis_claims (claim_id, analysis_id, attempt, idx, text, context, at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (claim_id) DO UPDATE SET analysis_id = EXCLUDED.analysis_id, attempt = EXCLUDED.attempt,
				idx = EXCLUDED.idx, text = EXCLUDED.text, context = EXCLUDED.context, at = EXCLUDED.at,
				event_id = EXCLUDED.event_id
			WHERE `+earlier("analysis_claims", "at"),
			p.ClaimID, p.AnalysisID, p.Attempt, p.Index, p.Text, p.Context, t, ev.ID)
	case *events.AnalysisClaimTriagedV1:
		analysisID = p.AnalysisID
		b.Queue(`INSERT INTO analysis_triage (claim_id, analysis_id, attempt, kind, specificity, time_sensitive,
				current_events, numeric, researched, reason, at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (claim_id) DO UPDATE SET analysis_id = EXCLUDED.analysis_id, attempt = EXCLUDED.attempt,
				kind = EXCLUDED.kind, specificity = EXCLUDED.specificity, time_sensitive = EXCLUDED.time_sensitive,
				current_events = EXCLUDED.current_events, numeric = EXCLUDED.numeric, researched = EXCLUDED.researched,
				reason = EXCLUDED.reason, at = EXCLUDED.at, event_id = EXCLUDED.event_id
			WHERE `+earlier("analysis_triage", "at"),
			p.ClaimID, p.AnalysisID, p.Attempt, p.Kind, p.Specificity, p.TimeSensitive, p.CurrentEvents, p.Numeric,
			p.Researched, p.Reason, t, ev.ID)
	case *events.AnalysisQueryIssuedV1:
		analysisID = p.AnalysisID
		results, err := json.Marshal(emptyIfNilSlice(p.Results))
		if err != nil {
			return fmt.Errorf("query results: %w", err)
		}
		b.Queue(`INSERT INTO analysis_queries (event_id, analysis_id, attempt, claim_id, query, kind, results, error, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (event_id) DO NOTHING`,
			ev.ID, p.AnalysisID, p.Attempt, p.ClaimID, p.Query, p.Kind, results, p.Error, t)
	case *events.AnalysisSourceAssessedV1:
		analysisID = p.AnalysisID
		s := p.Source
		b.Queue(`INSERT INTO analysis_sources (event_id, analysis_id, attempt, claim_id, url, domain, tier, rule, origin,
				title, published_at, entail, contradict, neutral, num, recency, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
			ON CONFLICT (event_id) DO NOTHING`,
			ev.ID, p.AnalysisID, p.Attempt, p.ClaimID, s.URL, s.Domain, s.Tier, s.Rule, s.Origin, s.Title, s.PublishedAt,
			s.Entail, s.Contradict, s.Neutral, s.Num, s.Recency, t)
	case *events.AnalysisClaimVerdictV1:
		analysisID = p.AnalysisID
		caps, err := json.Marshal(emptyIfNilSlice(p.Caps))
		if err != nil {
			return fmt.Errorf("claim verdict caps: %w", err)
		}
		b.Queue(`INSERT INTO analysis_claim_verdicts (claim_id, analysis_id, attempt, e_max, e_mean3, c_max, agree_dom,
				rel_avg, rec_max, num_ok, score, verdict, gate4, truth_percent, confidence, caps, label, band, summary,
				at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
			ON CONFLICT (claim_id) DO UPDATE SET analysis_id = EXCLUDED.analysis_id, attempt = EXCLUDED.attempt,
				e_max = EXCLUDED.e_max, e_mean3 = EXCLUDED.e_mean3, c_max = EXCLUDED.c_max,
				agree_dom = EXCLUDED.agree_dom, rel_avg = EXCLUDED.rel_avg, rec_max = EXCLUDED.rec_max,
				num_ok = EXCLUDED.num_ok, score = EXCLUDED.score, verdict = EXCLUDED.verdict, gate4 = EXCLUDED.gate4,
				truth_percent = EXCLUDED.truth_percent, confidence = EXCLUDED.confidence, caps = EXCLUDED.caps,
				label = EXCLUDED.label, band = EXCLUDED.band, summary = EXCLUDED.summary, at = EXCLUDED.at,
				event_id = EXCLUDED.event_id
			WHERE `+earlier("analysis_claim_verdicts", "at"),
			p.ClaimID, p.AnalysisID, p.Attempt, p.EMax, p.EMean3, p.CMax, p.AgreeDom, p.RelAvg, p.RecMax, p.NumOK,
			p.Score, p.Verdict, p.Gate4, p.TruthPercent, p.Confidence, caps, p.Label, p.Band, p.Summary, t, ev.ID)
	case *events.AnalysisPostVerdictV1:
		analysisID = p.AnalysisID
		caps, err := json.Marshal(emptyIfNilSlice(p.Caps))
		if err != nil {
			return fmt.Errorf("post verdict caps: %w", err)
		}
		caveats, err := json.Marshal(emptyIfNil(p.Caveats))
		if err != nil {
			return fmt.Errorf("post verdict caveats: %w", err)
		}
		sources, err := json.Marshal(emptyIfNilSlice(p.Sources))
		if err != nil {
			return fmt.Errorf("post verdict sources: %w", err)
		}
		b.Queue(`INSERT INTO analysis_post_verdicts (analysis_id, attempt, truth_percent, confidence, caps, label, band,
				summary, caveats, sources, claims, at, event_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
			ON CONFLICT (analysis_id, attempt) DO UPDATE SET truth_percent = EXCLUDED.truth_percent,
				confidence = EXCLUDED.confidence, caps = EXCLUDED.caps, label = EXCLUDED.label, band = EXCLUDED.band,
				summary = EXCLUDED.summary, caveats = EXCLUDED.caveats, sources = EXCLUDED.sources,
				claims = EXCLUDED.claims, at = EXCLUDED.at, event_id = EXCLUDED.event_id
			WHERE `+earlier("analysis_post_verdicts", "at"),
			p.AnalysisID, p.Attempt, p.TruthPercent, p.Confidence, caps, p.Label, p.Band, p.Summary, caveats, sources,
			p.Claims, t, ev.ID)
	case *events.AnalysisCompletedV1:
		analysisID = p.AnalysisID
		queueAttemptEnd(b, ev.ID, t, p.AnalysisRef, AnalysisOutcomeCompleted, "", false, p.Claims, p.Researched)
	case *events.AnalysisFailedV1:
		analysisID = p.AnalysisID
		queueAttemptEnd(b, ev.ID, t, p.AnalysisRef, AnalysisOutcomeFailed, p.Reason, p.Retryable, 0, 0)
	default:
		return fmt.Errorf("serving: unexpected analysis payload %T", ev.Payload)
	}
	payload, err := streamPayload(ev.Payload)
	if err != nil {
		return err
	}
	b.Queue(`INSERT INTO analysis_events (event_id, analysis_id, log_partition, log_offset, event_type, event_time, payload)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`,
		ev.ID, analysisID, pe.Partition, pe.Offset, ev.Type(), t, payload)
	return nil
}

// queueAnalysisRequested creates the analysis on its first request; every
// request counts, and the descriptive fields are the earliest request's.
func queueAnalysisRequested(b *pgx.Batch, eventID string, t time.Time, p *events.AnalysisRequestedV1) {
	var set string
	for _, col := range []string{"analysis_type", "prompt_version", "input_kind", "platform", "external_id", "post_id",
		"post_version_id", "url", "title", "text_length", "content_sha256", "source", "created_at", "request_event"} {
		set += fmt.Sprintf("%[1]s = CASE WHEN (EXCLUDED.created_at, EXCLUDED.request_event) < (analyses.created_at, analyses.request_event) THEN EXCLUDED.%[1]s ELSE analyses.%[1]s END,\n\t\t\t", col)
	}
	var postID, versionID *string
	if p.InputKind == events.AnalysisInputPost {
		postID, versionID = &p.PostID, &p.PostVersionID
	}
	b.Queue(`INSERT INTO analyses (id, analysis_type, prompt_version, input_kind, platform, external_id, post_id,
			post_version_id, url, title, text_length, content_sha256, source, request_count, created_at, request_event)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 1, $14, $15)
		ON CONFLICT (id) DO UPDATE SET `+set+`request_count = analyses.request_count + 1`,
		p.AnalysisID, p.AnalysisType, p.PromptVersion, p.InputKind, nilIfEmpty(p.Platform), nilIfEmpty(p.ExternalID),
		postID, versionID, nilIfEmpty(p.URL), nilIfEmpty(p.Title), utf8.RuneCountInString(p.Text), p.ContentSHA256,
		p.Source, t, eventID)
}

// Outcomes of an attempt (analysis_attempt_ends.outcome).
const (
	AnalysisOutcomeCompleted = "COMPLETED"
	AnalysisOutcomeFailed    = "FAILED"
)

// queueAttemptEnd records how an attempt ended: a completion wins over a
// failure of the same attempt, then the earliest event.
func queueAttemptEnd(b *pgx.Batch, eventID string, t time.Time, ref events.AnalysisRef, outcome, reason string, retryable bool, claims, researched int) {
	b.Queue(`INSERT INTO analysis_attempt_ends (analysis_id, attempt, outcome, reason, retryable, claims, researched, ended_at, event_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (analysis_id, attempt) DO UPDATE SET outcome = EXCLUDED.outcome, reason = EXCLUDED.reason,
			retryable = EXCLUDED.retryable, claims = EXCLUDED.claims, researched = EXCLUDED.researched,
			ended_at = EXCLUDED.ended_at, event_id = EXCLUDED.event_id
		WHERE (EXCLUDED.outcome <> 'COMPLETED', EXCLUDED.ended_at, EXCLUDED.event_id)
			< (analysis_attempt_ends.outcome <> 'COMPLETED', analysis_attempt_ends.ended_at, analysis_attempt_ends.event_id)`,
		ref.AnalysisID, ref.Attempt, outcome, reason, retryable, claims, researched, t, eventID)
}

// streamPayload is the payload as the job's event stream carries it: an
// exchange without its raw bodies (the audit trail keeps them).
func streamPayload(p events.Payload) ([]byte, error) {
	if x, ok := p.(*events.AnalysisExchangeRecordedV1); ok {
		c := *x
		c.RawRequest, c.RawResponse = "", ""
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, fmt.Errorf("exchange payload: %w", err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("exchange payload: %w", err)
		}
		delete(fields, "raw_request")
		delete(fields, "raw_response")
		return json.Marshal(fields)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("%s payload: %w", p.EventType(), err)
	}
	return raw, nil
}

// emptyIfNilSlice maps a JSON null array to [].
func emptyIfNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
