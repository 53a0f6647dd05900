// Package appeals is the worker stage that reviews appeals (stage
// "appeals"): it takes filed appeals from its run state (consumer group
// "appeals", a fold of the investigations topic) and re-examines the one
// claim each disputes. The review gathers the evidence again with the one
// evidence gathering (consumers/evidence/gather): the sources the claim's
// assessment read, the appellant's URLs (fetched only through the
// SSRF-safe client, bounded) and, when a web search is configured, the
// claim's queries; the existing stance judge judges them, and the evidence
// policy the claim was published under decides: the claim stands (UPHELD)
// only if that policy still publishes it as refuted, that is, still
// accepts a source that shows it false; otherwise it is withdrawn
// (RETRACTED): precision first.
//
// The appeal's reason is untrusted text and no model reads it: it is in
// the public trail and nothing else. The appellant's pages are sources
// like any other, judged for their stance and weighed by their tier.
//
// Every search, fetch and model exchange is an event appended before
// anything derived from it, so a replay never asks again. One review at a
// time per appeal, under its lease after the state has caught up with the
// log; a worker killed mid-review loses nothing and duplicates nothing:
//
//   - before review_started: the appeal is still PENDING; the next worker
//     starts the attempt;
//   - after review_started, before evidence_assessed: the next worker
//     appends review_failed ("worker_lost", retryable) and starts the next
//     attempt;
//   - after evidence_assessed, before decided: the next worker appends only
//     the decision, from the assessment in the log;
//   - after decided: nothing runs.
package appeals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/retry"
)

// ProjectorName is the appeals group's run-state projector and schema.
const ProjectorName = "appeals"

// OriginAppellant is the origin of a source the appellant named.
const OriginAppellant = "appellant"

// SearchNone is review_started's search when no web search is configured.
const SearchNone = "none"

// Bounds of recorded texts (bytes).
const (
	maxFetchedTextBytes = 4000
	maxReasonBytes      = 2000
	maxURLBytes         = 2048
	maxRecordedResults  = 5
)

// Config tunes the stage.
type Config struct {
	// Worker names this instance in events.
	Worker string
	// Provider names the stance judge's provider in exchanges that carry
	// no answer.
	Provider string
	// BaseURL is the provider's API root; InstanceKey the instance's key
	// (empty: reviews fail, unless AllowNoKey for a local server that
	// needs none).
	BaseURL     string
	InstanceKey logging.Secret
	AllowNoKey  bool
	// MaxAttempts per appeal (default 4); attempt n+1 starts
	// RetryBase*2^(n-1) after a transient failure (default 10s).
	MaxAttempts int
	RetryBase   time.Duration
	// SearchResults per query (default and at most 5); SearchTimeout
	// bounds one query (default 20s).
	SearchResults int
	SearchTimeout time.Duration
	// MaxPassages bounds the passages judged (default 12); MaxPassageBytes
	// a passage's text (default 1500).
	MaxPassages     int
	MaxPassageBytes int
	RecencyHalfLife time.Duration
}

func (c *Config) defaults() {
	if c.Provider == "" {
		c.Provider = "openai"
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 10 * time.Second
	}
	if c.SearchResults <= 0 || c.SearchResults > maxRecordedResults {
		c.SearchResults = maxRecordedResults
	}
	if c.SearchTimeout <= 0 {
		c.SearchTimeout = 20 * time.Second
	}
	if c.MaxPassages <= 0 {
		c.MaxPassages = 12
	}
	if c.MaxPassageBytes <= 0 {
		c.MaxPassageBytes = 1500
	}
	if c.RecencyHalfLife <= 0 {
		c.RecencyHalfLife = checks.DefaultHalfLife
	}
}

// Appender appends the events of one appeal in order, keyed by its id,
// and returns them.
type Appender interface {
	AppendEvents(ctx context.Context, key string, payloads ...events.Payload) ([]events.Event, error)
}

// StanceJudge judges passages against a claim (stance.Provider).
type StanceJudge interface {
	Judge(ctx context.Context, call stance.Call, observe func(stance.Turn)) ([]evidence.StanceResult, error)
	PromptRef() events.PromptRefV1
	Model() string
}

// SourceRegistry maps a source URL to its tier (sources.Registry).
type SourceRegistry interface {
	Lookup(raw string) (sources.Match, error)
	Version() string
}

// Fetcher fetches an appellant's page through the SSRF-safe client
// (fetchurl.Fetcher).
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string) fetchurl.Result
}

// State is the run state the worker reads (Store).
type State interface {
	Appeal(ctx context.Context, id string) (Run, error)
	Claim(ctx context.Context, id string) (Claim, error)
	Work(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error)
}

// Deps are the stage's collaborators.
type Deps struct {
	State    State
	Appender Appender
	Stance   StanceJudge
	// Search is nil when no web search is configured.
	Search   websearch.Searcher
	Registry SourceRegistry
	Fetcher  Fetcher
	// Policy is the default policy: a claim whose policy is unknown is
	// judged by it. Policies are the ones a recorded version may name
	// (default: evidence.Policies()).
	Policy   evidence.Policy
	Policies []evidence.Policy
	Log      *slog.Logger
	Now      func() time.Time
}

// Worker reviews appeals.
type Worker struct {
	cfg Config
	Deps
	gather gather.Gatherer
	// byVersion are the known policies by version.
	byVersion map[string]evidence.Policy
}

// New returns a worker.
func New(cfg Config, deps Deps) *Worker {
	cfg.defaults()
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Log == nil {
		deps.Log = logging.Discard()
	}
	deps.Log = deps.Log.With("worker", cfg.Worker, "stage", "appeals")
	if deps.Policies == nil {
		for _, p := range evidence.Policies() {
			deps.Policies = append(deps.Policies, p)
		}
	}
	byVersion := map[string]evidence.Policy{deps.Policy.Version(): deps.Policy}
	for _, p := range deps.Policies {
		byVersion[p.Version()] = p
	}
	return &Worker{cfg: cfg, Deps: deps, byVersion: byVersion,
		gather: gather.Gatherer{Search: deps.Search, Registry: deps.Registry, Stance: deps.Stance,
			Limits: gather.Limits{SearchResults: cfg.SearchResults, SearchTimeout: cfg.SearchTimeout,
				MaxPassages: cfg.MaxPassages, MaxPassageBytes: cfg.MaxPassageBytes, MaxURLBytes: maxURLBytes,
				RecencyHalfLife: cfg.RecencyHalfLife}}}
}

// List lists due appeals (runstate.ListFunc).
func (w *Worker) List(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return w.State.Work(ctx, now, limit)
}

// Do reviews one appeal (runstate.DoFunc) under its lease, the state
// caught up with the log: what to do follows from the appeal's status now.
func (w *Worker) Do(ctx context.Context, work runstate.Work) error {
	run, err := w.State.Appeal(ctx, work.InvestigationID)
	if err != nil {
		return err
	}
	switch run.Status {
	case StatusPending, StatusRetryWait:
		if run.DueAt.After(w.Now()) {
			return nil
		}
		return w.review(ctx, run)
	case StatusRunning:
		if run.Assessed != nil {
			// The assessment is in the log; only the decision is missing.
			return w.decide(ctx, run.Filed, *run.Assessed)
		}
		return w.fail(ctx, run.Ref(), reviewError{transient: true, kind: "worker_lost",
			msg: "the worker running this review stopped before it finished"})
	}
	return nil
}

// policyOf is the policy a claim was published under, or the default.
func (w *Worker) policyOf(version string) evidence.Policy {
	if p, ok := w.byVersion[version]; ok && version != "" {
		return p
	}
	return w.Policy
}

// review runs the next attempt of an appeal.
func (w *Worker) review(ctx context.Context, r Run) error {
	ref := events.AppealRef{AppealID: r.AppealID, Attempt: r.Attempt + 1}
	if w.cfg.InstanceKey == "" && !w.cfg.AllowNoKey {
		return w.fail(ctx, ref, reviewError{kind: "no_credentials",
			msg: "no provider key: the instance has none configured (OPENAI_API_KEY)"})
	}
	claim, err := w.State.Claim(ctx, r.Filed.ClaimID)
	if errors.Is(err, ErrNotFound) {
		return w.fail(ctx, ref, reviewError{transient: true, kind: "claim_unknown",
			msg: "the run state has no published claim " + r.Filed.ClaimID})
	}
	if err != nil {
		return err
	}
	policy := w.policyOf(claim.PolicyVersion)
	searchName := SearchNone
	if w.Search != nil {
		searchName = w.Search.Provider()
	}
	started := &events.AppealReviewStartedV1{AppealRef: ref, Worker: w.cfg.Worker, ClaimID: claim.ID,
		ClaimText: claim.Text, PolicyVersion: policy.Version(), RegistryVersion: w.Registry.Version(), Search: searchName,
		StancePrompt: w.Stance.PromptRef(), StanceModel: w.Stance.Model()}
	evs, err := w.Appender.AppendEvents(context.WithoutCancel(ctx), r.AppealID, started)
	if err != nil {
		return err
	}
	a := &attempt{w: w, ref: ref, filed: r.Filed, claim: claim, policy: policy, now: evs[0].Time,
		cred: llm.Credentials{BaseURL: w.cfg.BaseURL, APIKey: w.cfg.InstanceKey}}
	w.Log.Info("appeal review started", "appeal", r.AppealID, "attempt", ref.Attempt, "claim", claim.ID,
		"policy", policy.Version())
	assessed, err := a.run(ctx)
	if err == nil {
		return w.decide(ctx, r.Filed, assessed)
	}
	if ctx.Err() != nil {
		// Shutting down or the lease was lost: the next worker records
		// this attempt as lost.
		return ctx.Err()
	}
	return w.fail(ctx, ref, classify(err))
}

// attempt is one review in progress.
type attempt struct {
	w      *Worker
	ref    events.AppealRef
	filed  events.AppealFiledV1
	claim  Claim
	policy evidence.Policy
	cred   llm.Credentials
	now    time.Time
	seq    int
}

// run gathers, judges and assesses, appending each step, and returns the
// assessment as appended.
func (a *attempt) run(ctx context.Context) (events.AppealEvidenceAssessedV1, error) {
	var cands []gather.Candidate
	// The sources the claim was published on, read again.
	for _, s := range a.claim.Sources {
		c := gather.Candidate{URL: s.URL, Title: s.Title, Text: s.Snippet, Origin: s.Origin}
		if t, err := time.Parse(time.RFC3339, s.PublishedAt); err == nil {
			c.PublishedAt = t
		}
		cands = append(cands, c)
	}
	fetched, err := a.fetchAppellant(ctx)
	if err != nil {
		return events.AppealEvidenceAssessedV1{}, err
	}
	cands = append(cands, fetched...)
	found, err := a.search(ctx)
	if err != nil {
		return events.AppealEvidenceAssessedV1{}, err
	}
	cands = append(cands, found...)
	passages, dropped := keepReliableAppellant(a.w.gather.Resolve(cands))

	var payloads []events.Payload
	var results []evidence.StanceResult
	if len(passages) > 0 {
		prompt := a.w.Stance.PromptRef()
		observe := func(t stance.Turn) { payloads = append(payloads, a.exchange(prompt, t)) }
		results, err = a.w.gather.Stances(ctx, stance.Call{Claim: a.claim.Text, Cred: a.cred,
			Metadata: map[string]string{"appeal_id": a.ref.AppealID, "claim_id": a.claim.ID}}, passages, observe)
		if err != nil {
			if len(payloads) > 0 && ctx.Err() == nil {
				if aerr := a.append(ctx, payloads...); aerr != nil {
					return events.AppealEvidenceAssessedV1{}, aerr
				}
			}
			if ctx.Err() != nil {
				return events.AppealEvidenceAssessedV1{}, ctx.Err()
			}
			return events.AppealEvidenceAssessedV1{}, fmt.Errorf("stance: %w", err)
		}
	}
	g := a.w.gather
	g.Policy = a.policy
	srcs := g.Finish(a.claim.Text, passages, results, a.now)
	as := a.policy.Assess(true, passages)
	assessed := events.AppealEvidenceAssessedV1{AppealRef: a.ref, Sources: srcs, Dropped: dropped, Score: as.Score,
		Verdict: as.Verdict, Gate4: as.Gate.Level, PolicyVersion: a.policy.Version()}
	assessed.Published, assessed.Reason = Stands(as)
	if assessed.Sources == nil {
		assessed.Sources = []events.AssessedSourceV1{}
	}
	payloads = append(payloads, &assessed)
	return assessed, a.append(ctx, payloads...)
}

// ReasonNotRefuted is an assessment's reason when the policy would publish
// the claim but the evidence no longer shows it false (a policy that
// publishes whatever the validator approved).
const ReasonNotRefuted = "not_refuted"

// Stands says whether a claim stands on an assessment: the policy
// publishes it, as refuted. reason is "published" or why not.
func Stands(as evidence.Assessment) (bool, string) {
	switch {
	case !as.Decision.Publish:
		return false, as.Decision.Reason
	case as.Verdict != events.EvidenceRefuted:
		return false, ReasonNotRefuted
	}
	return true, evidence.ReasonPublished
}

// MaxAppellantTier is the least reliable tier an appellant's source may
// have to be read: the appellant chooses the page and can write it, so a
// page of their own (an unknown or unreliable domain) could contest any
// claim. Only sources the registry rates reliable (tier 1 or 2) enter the
// review; the rest are recorded as dropped with DropAppellantTier.
const MaxAppellantTier = 2

// DropAppellantTier is the reason an appellant's source is not read.
const DropAppellantTier = "appellant_source_not_reliable"

// keepReliableAppellant drops the appellant's sources above
// MaxAppellantTier.
func keepReliableAppellant(passages []evidence.Passage, dropped []events.DroppedSourceV1) ([]evidence.Passage, []events.DroppedSourceV1) {
	kept := passages[:0:0]
	for _, p := range passages {
		if p.Origin == OriginAppellant && p.Tier > MaxAppellantTier {
			dropped = append(dropped, events.DroppedSourceV1{URL: p.URL, Origin: p.Origin, Reason: DropAppellantTier})
			continue
		}
		kept = append(kept, p)
	}
	return kept, dropped
}

// fetchAppellant fetches each of the appellant's URLs and appends what it
// read, one event each as it happens.
func (a *attempt) fetchAppellant(ctx context.Context) ([]gather.Candidate, error) {
	var out []gather.Candidate
	for _, u := range a.filed.URLs {
		res := a.w.Fetcher.Fetch(ctx, u)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ev := &events.AppealURLFetchedV1{AppealRef: a.ref, URL: u,
			Title: events.Clip(events.Clean(res.Title), gather.MaxTitleBytes),
			Text:  events.Clip(events.Clean(res.Text), maxFetchedTextBytes)}
		if res.Error != "" || (ev.Title == "" && ev.Text == "") {
			ev.Title, ev.Text = "", ""
			ev.Error = events.Clip(events.Clean(nonEmpty(res.Error, "the page has no readable text")), gather.MaxNoteBytes)
		}
		if err := a.append(ctx, ev); err != nil {
			return nil, err
		}
		if ev.Error == "" {
			// The URL the appellant gave is the one the registry judges:
			// a redirect does not lend another domain's tier.
			out = append(out, gather.Candidate{URL: u, Title: ev.Title, Text: nonEmpty(ev.Text, ev.Title),
				Origin: OriginAppellant})
		}
	}
	return out, nil
}

// search runs the claim's queries, appending each with its top results.
func (a *attempt) search(ctx context.Context) ([]gather.Candidate, error) {
	if a.w.Search == nil {
		return nil, nil
	}
	plan := queries.Decompose(a.claim.Text, a.claim.Context)
	var out []gather.Candidate
	err := a.w.gather.Searched(ctx, plan, func(ans gather.Answer) error {
		ev := &events.AppealQueryIssuedV1{AppealRef: a.ref, Query: ans.Text, Kind: ans.Query.Kind, Error: ans.Error,
			Results: []events.SearchResultV1{}}
		for _, r := range ans.Results {
			if len(ev.Results) == maxRecordedResults {
				break
			}
			rec := events.SearchResultV1{URL: events.Clip(events.Clean(r.URL), maxURLBytes),
				Title:   events.Clip(events.Clean(r.Title), gather.MaxTitleBytes),
				Snippet: events.Clip(events.Clean(r.Snippet), a.w.cfg.MaxPassageBytes)}
			if !r.PublishedAt.IsZero() {
				rec.PublishedAt = r.PublishedAt.UTC().Format(time.RFC3339)
			}
			ev.Results = append(ev.Results, rec)
			out = append(out, gather.Candidate{URL: rec.URL, Title: rec.Title, Text: nonEmpty(rec.Snippet, rec.Title),
				PublishedAt: r.PublishedAt, Origin: evidence.OriginSearch})
		}
		return a.append(ctx, ev)
	})
	return out, err
}

// exchange is the event of one stance exchange.
func (a *attempt) exchange(prompt events.PromptRefV1, t stance.Turn) *events.AppealExchangeRecordedV1 {
	ex := &events.AppealExchangeRecordedV1{AppealRef: a.ref, Step: "stance", Seq: a.seq, Prompt: prompt,
		Provider: a.w.cfg.Provider, Model: a.w.Stance.Model(), RawRequest: "null"}
	a.seq++
	if res := t.Response; res != nil {
		ex.HTTPStatus, ex.DurationMS = res.HTTPStatus, res.Duration.Milliseconds()
		ex.Provider = nonEmpty(res.Provider, ex.Provider)
		ex.Model = nonEmpty(res.Model, ex.Model)
		if len(res.RawRequest) > 0 {
			ex.RawRequest = string(res.RawRequest)
		}
		ex.RawResponse = string(res.RawResponse)
		ex.Usage = events.UsageV1{InputTokens: res.Usage.InputTokens, CachedInputTokens: res.Usage.CachedInputTokens,
			OutputTokens: res.Usage.OutputTokens, ReasoningTokens: res.Usage.ReasoningTokens, TotalTokens: res.Usage.TotalTokens}
	}
	if t.Err != nil {
		ex.Error = events.Clip(events.Clean(t.Err.Error()), maxReasonBytes)
	}
	return ex
}

func (a *attempt) append(ctx context.Context, payloads ...events.Payload) error {
	_, err := a.w.Appender.AppendEvents(context.WithoutCancel(ctx), a.ref.AppealID, payloads...)
	return err
}

// decide appends the appeal's decision from its assessment.
func (w *Worker) decide(ctx context.Context, filed events.AppealFiledV1, as events.AppealEvidenceAssessedV1) error {
	d := Decision(filed, as)
	if _, err := w.Appender.AppendEvents(context.WithoutCancel(ctx), filed.AppealID, &d); err != nil {
		return err
	}
	w.Log.Info("appeal decided", "appeal", filed.AppealID, "claim", filed.ClaimID, "outcome", d.Outcome,
		"policy", d.PolicyVersion)
	return nil
}

// Decision is the decision an assessment makes: UPHELD when the policy
// still publishes the claim as refuted, else RETRACTED. Nothing of the
// appellant's reason enters it.
func Decision(filed events.AppealFiledV1, as events.AppealEvidenceAssessedV1) events.AppealDecidedV1 {
	d := events.AppealDecidedV1{AppealID: filed.AppealID, ClaimID: filed.ClaimID, InvestigationID: filed.InvestigationID,
		PolicyVersion: as.PolicyVersion}
	contradicting := 0
	for _, s := range as.Sources {
		if s.Contradict > s.Entail && s.Contradict > s.Neutral {
			contradicting++
		}
	}
	if as.Published {
		d.Outcome = events.AppealUpheld
		d.Reason = fmt.Sprintf("Upheld: the evidence policy %s still finds the claim refuted (score %d, Gate 4 %s); "+
			"%d of the %d sources read contradict it.", as.PolicyVersion, as.Score, as.Gate4, contradicting, len(as.Sources))
	} else {
		d.Outcome = events.AppealRetracted
		d.Reason = fmt.Sprintf("Retracted: no source the evidence policy %s accepts still shows the claim false "+
			"(engine verdict %s, Gate 4 %s, rule %s); %d sources read.", as.PolicyVersion, as.Verdict, as.Gate4,
			events.Clip(events.Clean(as.Reason), 200), len(as.Sources))
	}
	return d
}

// reviewError is why a review attempt failed.
type reviewError struct {
	transient bool
	kind, msg string
}

func (e reviewError) Error() string { return e.kind + ": " + e.msg }

func classify(err error) reviewError {
	var re reviewError
	if errors.As(err, &re) {
		return re
	}
	if le, ok := llm.AsError(err); ok {
		return reviewError{transient: le.Retryable(), kind: string(le.Kind), msg: err.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return reviewError{transient: true, kind: "timeout", msg: err.Error()}
	}
	return reviewError{transient: true, kind: "internal", msg: err.Error()}
}

// fail records that attempt ref failed: retryable while attempts are left
// and the failure is transient, else for good.
func (w *Worker) fail(ctx context.Context, ref events.AppealRef, re reviewError) error {
	again := re.transient && ref.Attempt < w.cfg.MaxAttempts
	reason := re.kind + ": " + re.msg
	if re.transient && !again {
		reason = fmt.Sprintf("gave up after %d attempts; last failure %s", ref.Attempt, reason)
	}
	failed := &events.AppealReviewFailedV1{AppealRef: ref, Reason: events.Clip(events.Clean(reason), maxReasonBytes),
		Retryable: again}
	if again {
		wait := retry.Exponential{Base: w.cfg.RetryBase, Max: time.Hour}.Delay(ref.Attempt)
		failed.RetryAt = w.Now().Add(wait).UTC().Format(time.RFC3339Nano)
	}
	if _, err := w.Appender.AppendEvents(context.WithoutCancel(ctx), ref.AppealID, failed); err != nil {
		return err
	}
	w.Log.Warn("appeal review failed", "appeal", ref.AppealID, "attempt", ref.Attempt, "kind", re.kind, "retry", again)
	return nil
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
