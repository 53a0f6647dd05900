package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/errata-dev/errata/events"
)

// The trail of a verdict analysis (topic analyses): who asked for what
// input, every attempt with its versions, every model exchange (exact
// bodies), every claim with Gate 1's triage, the queries and their
// results, the sources with tier and stance, the claim's verdict with the
// caps the rubric applied, the post verdict, and how each attempt ended.
// BuildAnalysis folds the events; ReadAnalysisLog reads them from Kafka,
// the audit projection (Reader.FullAnalysisTrail) from Postgres: both give
// the same trail.

// ErrAnalysisNotFound is returned when an analysis has no event.
var ErrAnalysisNotFound = errors.New("analysis not found")

// IsAnalysisType reports whether a (current) event type belongs to the
// trail of a verdict analysis.
func IsAnalysisType(t string) bool { return strings.HasPrefix(t, "analysis.") }

// AnalysisTrail is the whole trail of one analysis. Field order is the
// JSON order and stays stable.
type AnalysisTrail struct {
	AnalysisID string `json:"analysis_id"`
	// Status is PENDING, RUNNING, COMPLETE or FAILED, derived as the
	// serving projection does.
	Status   string             `json:"status"`
	Requests []AnalysisRequest  `json:"requests"`
	Attempts []*AnalysisAttempt `json:"attempts"`
	// Usage sums the tokens of every exchange.
	Usage Usage `json:"usage"`
	// Steps counts the analysis's events the trail was built from.
	Steps int `json:"steps"`
}

// AnalysisRequest is one analysis.requested event.
type AnalysisRequest struct {
	Step          Step   `json:"step"`
	AnalysisType  string `json:"analysis_type"`
	PromptVersion string `json:"prompt_version"`
	InputKind     string `json:"input_kind"`
	Platform      string `json:"platform,omitempty"`
	ExternalID    string `json:"external_id,omitempty"`
	PostID        string `json:"post_id,omitempty"`
	PostVersionID string `json:"post_version_id,omitempty"`
	URL           string `json:"url,omitempty"`
	Title         string `json:"title,omitempty"`
	Source        string `json:"source"`
	// RequesterKey is the keyed hash of the caller (left out of the public
	// trail).
	RequesterKey  string `json:"requester_key,omitempty"`
	ContentSHA256 string `json:"content_sha256"`
	// Text is the exact text analysed.
	Text string `json:"text"`
}

// AnalysisAttempt is one attempt: its versions, exchanges, claims, post
// verdict and end.
type AnalysisAttempt struct {
	Attempt         int                 `json:"attempt"`
	Started         *Step               `json:"started"`
	Worker          string              `json:"worker,omitempty"`
	Prompts         []Prompt            `json:"prompts"`
	Provider        string              `json:"provider"`
	Model           string              `json:"model"`
	Search          string              `json:"search,omitempty"`
	RegistryVersion string              `json:"registry_version"`
	PolicyVersion   string              `json:"policy_version"`
	RubricVersion   string              `json:"rubric_version"`
	Exchanges       []*AnalysisExchange `json:"exchanges"`
	Claims          []*AnalysisClaim    `json:"claims"`
	PostVerdict     *AnalysisVerdict    `json:"post_verdict"`
	End             *AnalysisEnd        `json:"end"`
	Usage           Usage               `json:"usage"`
}

// AnalysisExchange is one model exchange of an analysis.
type AnalysisExchange struct {
	Step       Step   `json:"step"`
	Stage      string `json:"stage"` // extract, stance or verdict
	Seq        int    `json:"seq"`
	Prompt     Prompt `json:"prompt"`
	Provider   string `json:"provider"`
	Model      string `json:"model"`
	HTTPStatus int    `json:"http_status"`
	DurationMS int64  `json:"duration_ms"`
	Usage      Usage  `json:"usage"`
	Error      string `json:"error,omitempty"`
	// RawRequest and RawResponse are the exact bodies (left out of the
	// public trail).
	RawRequest  string `json:"raw_request,omitempty"`
	RawResponse string `json:"raw_response,omitempty"`
}

// AnalysisClaim is one extracted claim and everything done with it.
type AnalysisClaim struct {
	Step    Step                  `json:"step"`
	ClaimID string                `json:"claim_id"`
	Index   int                   `json:"index"`
	Text    string                `json:"text"`
	Context string                `json:"context"`
	Triage  *AnalysisTriage       `json:"triage"`
	Queries []AnalysisQuery       `json:"queries"`
	Sources []AnalysisSource      `json:"sources"`
	Verdict *AnalysisClaimVerdict `json:"verdict"`
}

// AnalysisTriage is Gate 1's decision.
type AnalysisTriage struct {
	Step          Step    `json:"step"`
	Kind          string  `json:"kind"`
	Specificity   float64 `json:"specificity"`
	TimeSensitive bool    `json:"time_sensitive"`
	CurrentEvents bool    `json:"current_events"`
	Numeric       bool    `json:"numeric"`
	Researched    bool    `json:"researched"`
	Reason        string  `json:"reason"`
}

// AnalysisQuery is one search query and its top results.
type AnalysisQuery struct {
	Step    Step                    `json:"step"`
	Query   string                  `json:"query"`
	Kind    string                  `json:"kind"`
	Results []events.SearchResultV1 `json:"results"`
	Error   string                  `json:"error,omitempty"`
}

// AnalysisSource is one passage judged for a claim.
type AnalysisSource struct {
	Step   Step           `json:"step"`
	Source AssessedSource `json:"source"`
}

// AnalysisClaimVerdict is a claim's verdict: the evidence engine's
// features, score, verdict and Gate 4, and the truth percentage,
// confidence (with the caps applied), labels and summary.
type AnalysisClaimVerdict struct {
	Step         Step     `json:"step"`
	Features     Features `json:"features"`
	Score        int      `json:"score"`
	Verdict      string   `json:"verdict"`
	Gate4        string   `json:"gate4"`
	TruthPercent int      `json:"truth_percent"`
	Confidence   int      `json:"confidence"`
	Caps         []Cap    `json:"caps"`
	Label        string   `json:"label"`
	Band         string   `json:"band"`
	Summary      string   `json:"summary"`
}

// Cap is one confidence cap the rubric applied.
type Cap struct {
	Rule   string `json:"rule"`
	Cap    int    `json:"cap"`
	Before int    `json:"before"`
}

// AnalysisVerdict is the post (or submission) verdict.
type AnalysisVerdict struct {
	Step         Step                     `json:"step"`
	TruthPercent int                      `json:"truth_percent"`
	Confidence   int                      `json:"confidence"`
	Caps         []Cap                    `json:"caps"`
	Label        string                   `json:"label"`
	Band         string                   `json:"band"`
	Summary      string                   `json:"summary"`
	Caveats      []string                 `json:"caveats"`
	Sources      []events.VerdictSourceV1 `json:"sources"`
	Claims       int                      `json:"claims"`
}

// AnalysisEnd is how an attempt ended: COMPLETED (with its counts) or
// FAILED (with the reason, and whether another attempt follows).
type AnalysisEnd struct {
	Step       Step   `json:"step"`
	Outcome    string `json:"outcome"`
	Claims     int    `json:"claims,omitempty"`
	Researched int    `json:"researched,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Retryable  bool   `json:"retryable,omitempty"`
	RetryAt    string `json:"retry_at,omitempty"`
}

// BuildAnalysis folds the records of one analysis (log order) into its
// trail. Records of other subjects and repeated event ids are skipped; a
// step that names an attempt or claim not seen yet creates it, so no event
// is ever left out of the trail.
func BuildAnalysis(analysisID string, recs []Record) (*AnalysisTrail, error) {
	t := &AnalysisTrail{AnalysisID: analysisID, Requests: []AnalysisRequest{}, Attempts: []*AnalysisAttempt{}}
	attempts := map[int]*AnalysisAttempt{}
	claims := map[string]*AnalysisClaim{}
	attempt := func(n int) *AnalysisAttempt {
		a := attempts[n]
		if a == nil {
			a = &AnalysisAttempt{Attempt: n, Prompts: []Prompt{}, Exchanges: []*AnalysisExchange{}, Claims: []*AnalysisClaim{}}
			attempts[n] = a
			t.Attempts = append(t.Attempts, a)
		}
		return a
	}
	claim := func(ref events.AnalysisRef, id string) *AnalysisClaim {
		c := claims[id]
		if c == nil {
			c = &AnalysisClaim{ClaimID: id, Index: -1, Queries: []AnalysisQuery{}, Sources: []AnalysisSource{}}
			claims[id] = c
			a := attempt(ref.Attempt)
			a.Claims = append(a.Claims, c)
		}
		return c
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Event.Subject != analysisID || seen[r.Event.ID] {
			continue
		}
		seen[r.Event.ID] = true
		t.Steps++
		st := stepOf(r)
		switch p := r.Event.Payload.(type) {
		case *events.AnalysisRequestedV1:
			t.Requests = append(t.Requests, AnalysisRequest{Step: st, AnalysisType: p.AnalysisType, PromptVersion: p.PromptVersion,
				InputKind: p.InputKind, Platform: p.Platform, ExternalID: p.ExternalID, PostID: p.PostID, PostVersionID: p.PostVersionID,
				URL: p.URL, Title: p.Title, Source: p.Source, RequesterKey: p.RequesterKey, ContentSHA256: p.ContentSHA256, Text: p.Text})
		case *events.AnalysisAttemptStartedV1:
			a := attempt(p.Attempt)
			if a.Started != nil {
				continue // a second start of the attempt changes nothing
			}
			a.Started, a.Worker, a.Provider, a.Model, a.Search = &st, p.Worker, p.Provider, p.Model, p.Search
			a.RegistryVersion, a.PolicyVersion, a.RubricVersion = p.RegistryVersion, p.PolicyVersion, p.RubricVersion
			for _, pr := range p.Prompts {
				a.Prompts = append(a.Prompts, promptOf(pr))
			}
		case *events.AnalysisExchangeRecordedV1:
			a := attempt(p.Attempt)
			x := &AnalysisExchange{Step: st, Stage: p.Step, Seq: p.Seq, Prompt: promptOf(p.Prompt), Provider: p.Provider,
				Model: p.Model, HTTPStatus: p.HTTPStatus, DurationMS: p.DurationMS, Usage: usageOf(p.Usage), Error: p.Error,
				RawRequest: p.RawRequest, RawResponse: p.RawResponse}
			a.Exchanges = append(a.Exchanges, x)
			a.Usage.add(x.Usage)
			t.Usage.add(x.Usage)
		case *events.AnalysisClaimExtractedV1:
			c := claim(p.AnalysisRef, p.ClaimID)
			c.Step, c.Index, c.Text, c.Context = st, p.Index, p.Text, p.Context
		case *events.AnalysisClaimTriagedV1:
			claim(p.AnalysisRef, p.ClaimID).Triage = &AnalysisTriage{Step: st, Kind: p.Kind, Specificity: p.Specificity,
				TimeSensitive: p.TimeSensitive, CurrentEvents: p.CurrentEvents, Numeric: p.Numeric, Researched: p.Researched,
				Reason: p.Reason}
		case *events.AnalysisQueryIssuedV1:
			c := claim(p.AnalysisRef, p.ClaimID)
			c.Queries = append(c.Queries, AnalysisQuery{Step: st, Query: p.Query, Kind: p.Kind,
				Results: slices.Clip(append([]events.SearchResultV1{}, p.Results...)), Error: p.Error})
		case *events.AnalysisSourceAssessedV1:
			c := claim(p.AnalysisRef, p.ClaimID)
			s := p.Source
			c.Sources = append(c.Sources, AnalysisSource{Step: st, Source: AssessedSource{URL: s.URL, Domain: s.Domain,
				Tier: s.Tier, Rule: s.Rule, Origin: s.Origin, Title: s.Title, Snippet: s.Snippet, PublishedAt: s.PublishedAt,
				Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral, StanceNote: s.StanceNote, Num: s.Num,
				Recency: s.Recency}})
		case *events.AnalysisClaimVerdictV1:
			claim(p.AnalysisRef, p.ClaimID).Verdict = &AnalysisClaimVerdict{Step: st,
				Features: Features{EMax: p.EMax, EMean3: p.EMean3, CMax: p.CMax, AgreeDom: p.AgreeDom, RelAvg: p.RelAvg,
					RecMax: p.RecMax, NumOK: p.NumOK},
				Score: p.Score, Verdict: p.Verdict, Gate4: p.Gate4, TruthPercent: p.TruthPercent, Confidence: p.Confidence,
				Caps: capsOf(p.Caps), Label: p.Label, Band: p.Band, Summary: p.Summary}
		case *events.AnalysisPostVerdictV1:
			a := attempt(p.Attempt)
			if a.PostVerdict != nil {
				continue
			}
			a.PostVerdict = &AnalysisVerdict{Step: st, TruthPercent: p.TruthPercent, Confidence: p.Confidence,
				Caps: capsOf(p.Caps), Label: p.Label, Band: p.Band, Summary: p.Summary,
				Caveats: append([]string{}, p.Caveats...), Sources: append([]events.VerdictSourceV1{}, p.Sources...), Claims: p.Claims}
		case *events.AnalysisCompletedV1:
			a := attempt(p.Attempt)
			if a.End == nil || a.End.Outcome != "COMPLETED" {
				a.End = &AnalysisEnd{Step: st, Outcome: "COMPLETED", Claims: p.Claims, Researched: p.Researched}
			}
		case *events.AnalysisFailedV1:
			a := attempt(p.Attempt)
			if a.End == nil {
				a.End = &AnalysisEnd{Step: st, Outcome: "FAILED", Reason: p.Reason, Retryable: p.Retryable, RetryAt: p.RetryAt}
			}
		default:
			return nil, fmt.Errorf("%s %s at %s: not an analysis event", r.Event.Type(), r.Event.ID, r.Position)
		}
	}
	if t.Steps == 0 {
		return nil, fmt.Errorf("%w: %s", ErrAnalysisNotFound, analysisID)
	}
	slices.SortStableFunc(t.Attempts, func(a, b *AnalysisAttempt) int { return a.Attempt - b.Attempt })
	t.Status = analysisStatus(t)
	return t, nil
}

func capsOf(cs []events.CapV1) []Cap {
	out := make([]Cap, len(cs))
	for i, c := range cs {
		out[i] = Cap(c)
	}
	return out
}

func usageOf(u events.UsageV1) Usage {
	return Usage{InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens,
		ReasoningTokens: u.ReasoningTokens, TotalTokens: u.TotalTokens}
}

// analysisStatus applies the serving projection's rule: a completed
// attempt makes the analysis COMPLETE; otherwise the highest attempt
// decides: none is PENDING, no end RUNNING, a retryable failure PENDING,
// a final one FAILED.
func analysisStatus(t *AnalysisTrail) string {
	for _, a := range t.Attempts {
		if a.End != nil && a.End.Outcome == "COMPLETED" {
			return events.StatusComplete
		}
	}
	if len(t.Attempts) == 0 {
		return events.StatusPending
	}
	last := t.Attempts[len(t.Attempts)-1]
	switch {
	case last.End == nil:
		return events.StatusRunning
	case last.End.Retryable:
		return events.StatusPending
	default:
		return events.StatusFailed
	}
}

// Public is the trail as the public API publishes it: without the exact
// exchange bodies, the requesters' keyed hashes, worker names and
// correlation ids. Everything else (the input text, every step, failure
// reasons and query errors, which the job JSON shows too) stays.
func (t *AnalysisTrail) Public() (*AnalysisTrail, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	var p AnalysisTrail
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	pub := func(s *Step) {
		if s != nil {
			s.CorrelationID, s.CausationID = "", ""
		}
	}
	for i := range p.Requests {
		pub(&p.Requests[i].Step)
		p.Requests[i].RequesterKey = ""
	}
	for _, a := range p.Attempts {
		pub(a.Started)
		a.Worker = ""
		for _, x := range a.Exchanges {
			pub(&x.Step)
			x.RawRequest, x.RawResponse = "", ""
		}
		for _, c := range a.Claims {
			pub(&c.Step)
			if c.Triage != nil {
				pub(&c.Triage.Step)
			}
			for i := range c.Queries {
				pub(&c.Queries[i].Step)
			}
			for i := range c.Sources {
				pub(&c.Sources[i].Step)
			}
			if c.Verdict != nil {
				pub(&c.Verdict.Step)
			}
		}
		if a.PostVerdict != nil {
			pub(&a.PostVerdict.Step)
		}
		if a.End != nil {
			pub(&a.End.Step)
		}
	}
	return &p, nil
}

// AnalysisJSON renders the trail as indented JSON (field order as
// declared), with a trailing newline and without HTML escaping.
func AnalysisJSON(t *AnalysisTrail) ([]byte, error) {
	return renderJSON(t)
}
