package serving

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// analysisFold assembles analyses from their rows: load reads every row
// of the given analyses (every attempt), analyses keeps the current
// attempt's.
type analysisFold struct {
	order    []string
	byID     map[string]*Analysis
	attempts map[string]map[int]analysisAttempt
	ends     map[string]map[int]attemptEnd
	claims   map[string][]claimRow // by analysis, in (attempt, index) order
	triage   map[string]ClaimTriage
	queries  map[string][]ClaimQuery
	sources  map[string][]ClaimSource
	verdicts map[string]ClaimVerdict
	posts    map[string]map[int]PostVerdict
}

type analysisAttempt struct {
	versions AnalysisVersions
}

type attemptEnd struct {
	outcome   string
	reason    string
	retryable bool
	at        time.Time
}

type claimRow struct {
	attempt int
	claim   AnalysisClaim
}

func newAnalysisFold() *analysisFold {
	return &analysisFold{byID: map[string]*Analysis{}, attempts: map[string]map[int]analysisAttempt{},
		ends: map[string]map[int]attemptEnd{}, claims: map[string][]claimRow{}, triage: map[string]ClaimTriage{},
		queries: map[string][]ClaimQuery{}, sources: map[string][]ClaimSource{}, verdicts: map[string]ClaimVerdict{},
		posts: map[string]map[int]PostVerdict{}}
}

// load reads the rows of ids with one batch of queries.
func (f *analysisFold) load(ctx context.Context, tx pgx.Tx, ids []string) error {
	b := &pgx.Batch{}
	b.Queue(`SELECT id::text, prompt_version, input_kind, platform, external_id, COALESCE(post_id::text, ''),
			COALESCE(post_version_id::text, ''), url, title, text_length, request_count, created_at
		FROM analyses WHERE id = ANY($1::uuid[]) ORDER BY created_at, id`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			a := &Analysis{Claims: []AnalysisClaim{}, Versions: AnalysisVersions{Prompts: []AnalysisPrompt{}}}
			if err := rows.Scan(&a.ID, &a.PromptVersion, &a.Input.Kind, &a.Input.Platform, &a.Input.ExternalID,
				&a.PostID, &a.PostVersionID, &a.Input.URL, &a.Input.Title, &a.Input.TextLength, &a.RequestCount,
				&a.CreatedAt); err != nil {
				return err
			}
			a.CreatedAt = a.CreatedAt.UTC()
			f.order = append(f.order, a.ID)
			f.byID[a.ID] = a
			return nil
		})
	})
	b.Queue(`SELECT analysis_id::text, attempt, prompts, provider, model, registry_version, policy_version, rubric_version
		FROM analysis_attempts WHERE analysis_id = ANY($1::uuid[])`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var id string
			var n int
			var prompts []byte
			var v AnalysisVersions
			if err := rows.Scan(&id, &n, &prompts, &v.Provider, &v.Model, &v.Registry, &v.Policy, &v.Rubric); err != nil {
				return err
			}
			if err := json.Unmarshal(prompts, &v.Prompts); err != nil {
				return fmt.Errorf("prompts of %s attempt %d: %w", id, n, err)
			}
			if v.Prompts == nil {
				v.Prompts = []AnalysisPrompt{}
			}
			put(f.attempts, id, n, analysisAttempt{versions: v})
			return nil
		})
	})
	b.Queue(`SELECT analysis_id::text, attempt, outcome, reason, retryable, ended_at
		FROM analysis_attempt_ends WHERE analysis_id = ANY($1::uuid[])`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var id string
			var n int
			var e attemptEnd
			if err := rows.Scan(&id, &n, &e.outcome, &e.reason, &e.retryable, &e.at); err != nil {
				return err
			}
			e.at = e.at.UTC()
			put(f.ends, id, n, e)
			return nil
		})
	})
	b.Queue(`SELECT analysis_id::text, attempt, claim_id::text, idx, text, context
		FROM analysis_claims WHERE analysis_id = ANY($1::uuid[]) ORDER BY analysis_id, attempt, idx, claim_id`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var id string
			r := claimRow{claim: AnalysisClaim{Queries: []ClaimQuery{}, Sources: []ClaimSource{}}}
			if err := rows.Scan(&id, &r.attempt, &r.claim.ID, &r.claim.Index, &r.claim.Text, &r.claim.Context); err != nil {
				return err
			}
			f.claims[id] = append(f.claims[id], r)
			return nil
		})
	})
	b.Queue(`SELECT claim_id::text, kind, specificity, time_sensitive, current_events, numeric, researched, reason
		FROM analysis_triage WHERE analysis_id = ANY($1::uuid[])`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var claim string
			var t ClaimTriage
			if err := rows.Scan(&claim, &t.Kind, &t.Specificity, &t.TimeSensitive, &t.CurrentEvents, &t.Numeric,
				&t.Researched, &t.Reason); err != nil {
				return err
			}
			f.triage[claim] = t
			return nil
		})
	})
	b.Queue(`SELECT claim_id::text, query, kind, results, error
		FROM analysis_queries WHERE analysis_id = ANY($1::uuid[]) ORDER BY at, event_id`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var claim, errText string
			var results []byte
			var q ClaimQuery
			if err := rows.Scan(&claim, &q.Query, &q.Kind, &results, &errText); err != nil {
				return err
			}
			var rs []struct {
				URL         string `json:"url"`
				Title       string `json:"title"`
				Snippet     string `json:"snippet"`
				PublishedAt string `json:"published_at"`
			}
			if err := json.Unmarshal(results, &rs); err != nil {
				return fmt.Errorf("results of a query of claim %s: %w", claim, err)
			}
			q.Results = make([]QueryResult, len(rs))
			for i, x := range rs {
				q.Results[i] = QueryResult{URL: x.URL, Title: x.Title, Snippet: x.Snippet, PublishedAt: nilIfEmpty(x.PublishedAt)}
			}
			q.Error = nilIfEmpty(errText)
			f.queries[claim] = append(f.queries[claim], q)
			return nil
		})
	})
	b.Queue(`SELECT claim_id::text, url, domain, tier, rule, origin, entail, contradict, neutral
		FROM analysis_sources WHERE analysis_id = ANY($1::uuid[]) ORDER BY at, event_id`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var claim string
			var s ClaimSource
			if err := rows.Scan(&claim, &s.URL, &s.Domain, &s.Tier, &s.Rule, &s.Origin, &s.Entail, &s.Contradict, &s.Neutral); err != nil {
				return err
			}
			f.sources[claim] = append(f.sources[claim], s)
			return nil
		})
	})
	b.Queue(`SELECT claim_id::text, verdict, score, gate4, truth_percent, confidence, caps, label, band, summary
		FROM analysis_claim_verdicts WHERE analysis_id = ANY($1::uuid[])`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var claim, engine, gate4 string
			var caps []byte
			var v ClaimVerdict
			if err := rows.Scan(&claim, &engine, &v.Score, &gate4, &v.TruthPercent, &v.Confidence, &caps, &v.Label,
				&v.Band, &v.Summary); err != nil {
				return err
			}
			if err := json.Unmarshal(caps, &v.Caps); err != nil {
				return fmt.Errorf("caps of claim %s: %w", claim, err)
			}
			v.Caps = emptyIfNilSlice(v.Caps)
			v.Engine, v.Gate4 = nilIfEmpty(engine), nilIfEmpty(gate4)
			f.verdicts[claim] = v
			return nil
		})
	})
	b.Queue(`SELECT analysis_id::text, attempt, truth_percent, confidence, caps, label, band, summary, caveats, sources
		FROM analysis_post_verdicts WHERE analysis_id = ANY($1::uuid[])`, ids).Query(func(rows pgx.Rows) error {
		return eachRow(rows, func() error {
			var id string
			var n int
			var caps, caveats, sources []byte
			var v PostVerdict
			if err := rows.Scan(&id, &n, &v.TruthPercent, &v.Confidence, &caps, &v.Label, &v.Band, &v.Summary,
				&caveats, &sources); err != nil {
				return err
			}
			var srcs []struct {
				URL        string `json:"url"`
				Title      string `json:"title"`
				Domain     string `json:"domain"`
				Tier       int    `json:"tier"`
				FromSearch bool   `json:"from_search"`
			}
			for _, x := range []struct {
				raw []byte
				dst any
			}{{caps, &v.Caps}, {caveats, &v.Caveats}, {sources, &srcs}} {
				if err := json.Unmarshal(x.raw, x.dst); err != nil {
					return fmt.Errorf("post verdict of %s attempt %d: %w", id, n, err)
				}
			}
			v.Caps, v.Caveats = emptyIfNilSlice(v.Caps), emptyIfNil(v.Caveats)
			v.Sources = make([]VerdictSource, len(srcs))
			for i, s := range srcs {
				v.Sources[i] = VerdictSource(s)
			}
			put(f.posts, id, n, v)
			return nil
		})
	})
	return tx.SendBatch(ctx, b).Close()
}

// eachRow calls fn for every row and closes rows.
func eachRow(rows pgx.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

func put[V any](m map[string]map[int]V, id string, n int, v V) {
	if m[id] == nil {
		m[id] = map[int]V{}
	}
	m[id][n] = v
}

// analyses assembles the loaded analyses, in created order.
func (f *analysisFold) analyses() []Analysis {
	out := make([]Analysis, 0, len(f.order))
	for _, id := range f.order {
		a := *f.byID[id]
		st := stateOf(f.attempts[id], f.ends[id])
		a.Status, a.Attempt, a.Failure, a.CompletedAt = st.status, st.attempt, st.failure, st.completedAt
		if at, ok := f.attempts[id][a.Attempt]; ok {
			a.Versions = at.versions
		}
		for _, r := range f.claims[id] {
			if r.attempt != a.Attempt {
				continue
			}
			c := r.claim
			if t, ok := f.triage[c.ID]; ok {
				c.Triage = &t
			}
			if q := f.queries[c.ID]; q != nil {
				c.Queries = q
			}
			if s := f.sources[c.ID]; s != nil {
				c.Sources = s
			}
			if v, ok := f.verdicts[c.ID]; ok {
				c.Verdict = &v
			}
			a.Claims = append(a.Claims, c)
		}
		if v, ok := f.posts[id][a.Attempt]; ok {
			a.Verdict = &v
		}
		out = append(out, a)
	}
	return out
}

// analysisState is where an analysis stands.
type analysisState struct {
	status      string
	attempt     int
	failure     *string
	completedAt *time.Time
}

// stateOf derives an analysis's state from its attempts (started) and how
// they ended. A completed attempt makes it COMPLETE (the highest completed
// attempt is current). Otherwise the current attempt is the highest one
// started or ended: none yet is PENDING, one without an end is RUNNING, a
// retryable failure is PENDING (the next attempt follows) and a final one
// is FAILED.
func stateOf(started map[int]analysisAttempt, ended map[int]attemptEnd) analysisState {
	completed, cur := 0, 0
	for n, e := range ended {
		if e.outcome == AnalysisOutcomeCompleted && n > completed {
			completed = n
		}
		cur = max(cur, n)
	}
	if completed > 0 {
		at := ended[completed].at
		return analysisState{status: events.StatusComplete, attempt: completed, completedAt: &at}
	}
	for n := range started {
		cur = max(cur, n)
	}
	if cur == 0 {
		return analysisState{status: events.StatusPending}
	}
	e, ok := ended[cur]
	switch {
	case !ok:
		return analysisState{status: events.StatusRunning, attempt: cur}
	case e.retryable:
		return analysisState{status: events.StatusPending, attempt: cur}
	default:
		reason := e.reason
		return analysisState{status: events.StatusFailed, attempt: cur, failure: &reason}
	}
}
