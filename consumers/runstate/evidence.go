package runstate

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
)

// Bounds of what the fold keeps for the assessor. They only cut what a
// hostile or runaway attempt could pile up: fetch_url answers at most
// 20,000 characters, a validator cites a handful of pages.
const (
	// MaxFetches is the most fetch_url results kept per attempt (the
	// first ones).
	MaxFetches = 64
	// maxFetchOutputBytes: a larger tool output is not kept.
	maxFetchOutputBytes = 1 << 20
	// maxCitations is the most validator citations kept per submission.
	maxCitations = 32
	maxURLBytes  = 4096
	// maxCitedBytes bounds a citation's title and snippet.
	maxCitedBytes = 2000
)

// applyExchange folds what the assessor reads from a model exchange: the
// fetch_url results of a stage-1 round, the citations of a validator's
// answer, and the provider failures of the assessor's own calls.
func applyExchange(ctx context.Context, tx pgx.Tx, p *events.InvestigationExchangeRecordedV1, t time.Time) error {
	switch p.Stage {
	case events.StageInvestigator:
		for _, r := range p.ToolResults {
			output := events.Clean(r.Output)
			if r.Name != prompts.ToolFetchURL || len(output) > maxFetchOutputBytes {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO fetches (investigation_id, series, attempt, ord, call_id, output)
				SELECT $1, $2, $3, f.n, $4, $5
				FROM runs, (SELECT count(*) AS n FROM fetches WHERE investigation_id = $1 AND series = $2 AND attempt = $3) f
				WHERE runs.investigation_id = $1 AND runs.series = $2 AND runs.attempt = $3 AND runs.status = 'RUNNING'
					AND f.n < $6
				ON CONFLICT DO NOTHING`, p.InvestigationID, p.Series, p.Attempt, events.Clip(events.Clean(r.CallID), 256), output, MaxFetches); err != nil {
				return err
			}
		}
	case events.StageValidator:
		if p.Error != nil || p.SubmissionID == "" {
			return nil
		}
		cited, err := json.Marshal(citedSources(p.Response))
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE submissions SET validator_citations = $2
			WHERE submission_id = $1 AND outcome IS NULL`, p.SubmissionID, cited)
		return err
	case events.StageAssessor:
		if p.Error == nil || p.SubmissionID == "" || !providerFailure(p.Error.Kind) {
			return nil
		}
		_, err := tx.Exec(ctx, `UPDATE submissions SET assess_failures = assess_failures + 1, assess_failed_at = $2
			WHERE submission_id = $1 AND NOT assessed`, p.SubmissionID, t)
		return err
	}
	return nil
}

// providerFailure reports whether an exchange error is a failure of the
// provider (no usable answer came back) rather than an answer the stance
// step could not use, which it handles itself.
func providerFailure(kind string) bool {
	switch llm.Kind(kind) {
	case llm.KindInvalidOutput, llm.KindRefusal:
		return false
	}
	return true
}

// citedSources lists the url_citation sources of a validator's answer (the
// normalized llm.Response of its exchange), each with the span of the
// answer it supports as its snippet: what the validator read there.
func citedSources(raw json.RawMessage) []events.SourceV1 {
	out := []events.SourceV1{}
	var res llm.Response
	if json.Unmarshal(raw, &res) != nil {
		return out
	}
	for _, it := range res.Output {
		for _, part := range it.Content {
			if len(part.Citations) == 0 {
				continue
			}
			text := []rune(part.Text)
			for _, c := range part.Citations {
				if len(out) == maxCitations {
					return out
				}
				start, end := max(c.StartIndex, 0), min(c.EndIndex, len(text))
				snippet := ""
				if start < end {
					snippet = strings.TrimSpace(string(text[start:end]))
				}
				out = append(out, events.SourceV1{URL: events.Clip(events.Clean(c.URL), maxURLBytes),
					Title: events.Clip(events.Clean(strings.TrimSpace(c.Title)), maxCitedBytes), Snippet: events.Clip(events.Clean(snippet), maxCitedBytes)})
			}
		}
	}
	return out
}
