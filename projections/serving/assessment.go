package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// queueClaimAssessed stores an assessment and its sources in one
// statement: the sources go in only when the assessment row does, so the
// first assessment of a submission wins whole, and a repeated or second
// one changes nothing. A value Postgres refuses (a NUL) fails the
// statement, and the projector parks the event.
func queueClaimAssessed(b *pgx.Batch, t time.Time, p *events.InvestigationClaimAssessedV1) {
	n := len(p.Sources)
	ord, tier := make([]int32, n), make([]int32, n)
	url, domain, rule, origin, num := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	entail, contradict, neutral, recency := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, s := range p.Sources {
		ord[i], tier[i] = int32(i), int32(s.Tier) //nolint:gosec // G115: i indexes one record's sources; tiers are 1..5 (events validate them)
		url[i], domain[i], rule[i], origin[i], num[i] = s.URL, s.Domain, s.Rule, s.Origin, s.Num
		entail[i], contradict[i], neutral[i], recency[i] = s.Entail, s.Contradict, s.Neutral, s.Recency
	}
	b.Queue(`WITH a AS (
			INSERT INTO claim_assessments (submission_id, investigation_id, series, attempt, causal,
				e_max, e_mean3, c_max, agree_dom, rel_avg, rec_max, num_ok, raw, score, verdict,
				gate4, gate4_sources, gate4_quality, gate4_agreement, registry_version, policy_version, publish_mode,
				published, reason, failed, dropped_count, assessed_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
				$21, $22, $23, $24, $25, $26, $27)
			ON CONFLICT (submission_id) DO NOTHING
			RETURNING submission_id)
		INSERT INTO assessment_sources (submission_id, ord, url, domain, tier, rule, origin, entail, contradict, neutral, num, recency)
		SELECT a.submission_id, s.ord, s.url, s.domain, s.tier, s.rule, s.origin, s.entail, s.contradict, s.neutral, s.num, s.recency
		FROM a CROSS JOIN unnest($28::int[], $29::text[], $30::text[], $31::int[], $32::text[], $33::text[],
			$34::float8[], $35::float8[], $36::float8[], $37::text[], $38::float8[])
			AS s(ord, url, domain, tier, rule, origin, entail, contradict, neutral, num, recency)`,
		p.SubmissionID, p.InvestigationID, p.Series, p.Attempt, p.Causal,
		p.EMax, p.EMean3, p.CMax, p.AgreeDom, p.RelAvg, p.RecMax, p.NumOK, p.Raw, p.Score, p.Verdict,
		p.Gate4, p.Gate4Sources, p.Gate4Quality, p.Gate4Agreement, p.RegistryVersion, p.PolicyVersion, p.PublishMode,
		p.Published, p.Reason, emptyIfNil(p.Failed), len(p.Dropped), t,
		ord, url, domain, tier, rule, origin, entail, contradict, neutral, num, recency)
}

// AssessmentFeatures are Tsao's features of an assessment.
type AssessmentFeatures struct {
	EMax     float64 `json:"e_max"`
	EMean3   float64 `json:"e_mean3"`
	CMax     float64 `json:"c_max"`
	AgreeDom int     `json:"agree_dom"`
	RelAvg   float64 `json:"rel_avg"`
	RecMax   float64 `json:"rec_max"`
	NumOK    int     `json:"num_ok"`
}

// AssessmentSource is one source an assessment read, with its tier and
// stance.
type AssessmentSource struct {
	URL        string  `json:"url"`
	Domain     string  `json:"domain"`
	Tier       int     `json:"tier"`
	Rule       string  `json:"rule"`
	Origin     string  `json:"origin"`
	Entail     float64 `json:"entail"`
	Contradict float64 `json:"contradict"`
	Neutral    float64 `json:"neutral"`
	Num        string  `json:"num"`
	Recency    float64 `json:"recency"`
}

// Assessment is the evidence engine's judgement of one submission, as the
// serving model keeps it (consumers/evidence defines every field).
type Assessment struct {
	SubmissionID    string
	InvestigationID string
	Series, Attempt int
	Causal          bool
	Features        AssessmentFeatures
	Raw             float64
	Score           int
	Verdict         string
	Gate4           string
	Gate4Sources    int
	Gate4Quality    float64
	Gate4Agreement  float64
	RegistryVersion string
	PolicyVersion   string
	PublishMode     string
	Published       bool
	// Reason is "published" or the first rule that failed; Failed every
	// rule that failed.
	Reason       string
	Failed       []string
	DroppedCount int
	AssessedAt   time.Time
	Sources      []AssessmentSource
}

const assessmentColumns = `a.submission_id::text, a.investigation_id::text, a.series, a.attempt, a.causal,
	a.e_max, a.e_mean3, a.c_max, a.agree_dom, a.rel_avg, a.rec_max, a.num_ok, a.raw, a.score, a.verdict,
	a.gate4, a.gate4_sources, a.gate4_quality, a.gate4_agreement, a.registry_version, a.policy_version, a.publish_mode,
	a.published, a.reason, a.failed, a.dropped_count, a.assessed_at,
	COALESCE((SELECT jsonb_agg(jsonb_build_object('url', s.url, 'domain', s.domain, 'tier', s.tier, 'rule', s.rule,
		'origin', s.origin, 'entail', s.entail, 'contradict', s.contradict, 'neutral', s.neutral, 'num', s.num,
		'recency', s.recency) ORDER BY s.ord)
		FROM assessment_sources s WHERE s.submission_id = a.submission_id), '[]'::jsonb)`

// scanAssessment scans assessmentColumns after the leading columns in lead.
func scanAssessment(row pgx.Row, lead ...any) (Assessment, error) {
	var a Assessment
	var sources []byte
	f := &a.Features
	err := row.Scan(append(lead, &a.SubmissionID, &a.InvestigationID, &a.Series, &a.Attempt, &a.Causal,
		&f.EMax, &f.EMean3, &f.CMax, &f.AgreeDom, &f.RelAvg, &f.RecMax, &f.NumOK, &a.Raw, &a.Score, &a.Verdict,
		&a.Gate4, &a.Gate4Sources, &a.Gate4Quality, &a.Gate4Agreement, &a.RegistryVersion, &a.PolicyVersion, &a.PublishMode,
		&a.Published, &a.Reason, &a.Failed, &a.DroppedCount, &a.AssessedAt, &sources)...)
	if err != nil {
		return Assessment{}, err
	}
	if err := json.Unmarshal(sources, &a.Sources); err != nil {
		return Assessment{}, fmt.Errorf("sources of assessment %s: %w", a.SubmissionID, err)
	}
	return a, nil
}

// AssessmentsOfClaims loads, in one query, the assessments of many
// published claims by claim id: a claim of a COMPLETE investigation whose
// submission was assessed in that investigation. Claims without one
// (retained from a prior investigation, published before assessments,
// not complete, not a UUID) are absent from the map.
func (r *Reader) AssessmentsOfClaims(ctx context.Context, claimIDs []string) (map[string]Assessment, error) {
	out := make(map[string]Assessment, len(claimIDs))
	valid := make([]string, 0, len(claimIDs))
	for _, id := range claimIDs {
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT c.id::text, `+assessmentColumns+`
		FROM claims c
		JOIN investigations i ON i.id = c.investigation_id AND i.status = 'COMPLETE'
		JOIN claim_assessments a ON a.submission_id = c.submission_id AND a.investigation_id = c.investigation_id
		WHERE c.id = ANY($1::uuid[])`, valid)
	if err != nil {
		return nil, fmt.Errorf("assessments of %d claims: %w", len(valid), err)
	}
	defer rows.Close()
	for rows.Next() {
		var claimID string
		a, err := scanAssessment(rows, &claimID)
		if err != nil {
			return nil, err
		}
		out[claimID] = a
	}
	return out, rows.Err()
}

// AssessmentsOfInvestigation lists every assessment of an investigation,
// published and withheld, in any state, by attempt and then in the order
// they were made; empty when there is none or id is not a UUID.
func (r *Reader) AssessmentsOfInvestigation(ctx context.Context, investigationID string) ([]Assessment, error) {
	out := []Assessment{}
	if !isUUID(investigationID) {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT `+assessmentColumns+`
		FROM claim_assessments a WHERE a.investigation_id = $1
		ORDER BY a.series, a.attempt, a.assessed_at, a.submission_id`, investigationID)
	if err != nil {
		return nil, fmt.Errorf("assessments of %s: %w", investigationID, err)
	}
	defer rows.Close()
	for rows.Next() {
		a, err := scanAssessment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
