// Package analyst is the worker stage of verdict analyses: it takes
// analysis requests from its run state (consumer group "analyst", a fold of
// the analyses topic), and runs each analysis as one attempt: claim
// extraction and triage (one model call), research of every claim triage
// keeps (query decomposition, the configured web search, the source
// registry, stance, the numeric and recency checks, the evidence engine),
// a verdict per claim (consumers/verdict's rubric), one summary call and
// the post verdict. Every step is an event, appended as it happens.
//
// Nothing here writes a read model, and nothing is decided from anything
// but events: model answers are recorded with their exact bytes
// (exchange_recorded) before anything derived from them, and a replay of
// the log never asks a provider again.
//
// # One analysis, one attempt at a time
//
// The first request of an analysis id creates its run; later requests,
// however many race, change nothing (Applier). An attempt runs only under
// the analysis's lease (runstate.Executor), after the state has caught up
// with the end of the log, and reads the run's status again: two workers
// never run one analysis, and a worker never starts an attempt the log
// already finished.
//
// # Crashes
//
// A worker killed at any point loses nothing and duplicates nothing:
//
//   - before attempt_started: the run is still PENDING; once the lease
//     lapses, the next worker starts the attempt;
//   - after attempt_started, before post_verdict: the run is RUNNING
//     without a live lease; the next worker appends failed (retryable,
//     "worker_lost") for that attempt and starts the next one from the
//     request, so the abandoned attempt's events stay in the log as its
//     history, and the analysis's verdict is the new attempt's;
//   - after post_verdict, before completed: the verdict is in the log; the
//     next worker appends only completed, with the counts the state folded;
//   - after completed or a final failed: the run is terminal; nothing runs.
//
// The fold takes an attempt's post verdict, completion or failure only
// while that attempt is the current one, so a worker that lost its lease
// and kept going cannot change the outcome.
package analyst

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/retry"
)

// ProjectorName is the analyst group's run-state projector and schema.
const ProjectorName = "analyst"

// Config tunes the analyst.
type Config struct {
	// Worker names this instance in events.
	Worker string
	// Model answers the extraction and the summary calls.
	Model string
	// BaseURL is the provider's API root; InstanceKey the instance's key
	// (empty: analyses fail, unless AllowNoKey for a local server that
	// needs none).
	BaseURL     string
	InstanceKey logging.Secret
	AllowNoKey  bool
	// MaxAttempts per analysis (default 4); after a transient failure,
	// attempt n+1 starts RetryBase*2^(n-1) later (default 10s), an hour at
	// most.
	MaxAttempts int
	RetryBase   time.Duration
	// ExchangeTimeout bounds one model call (default 5m).
	ExchangeTimeout time.Duration
	ReasoningEffort string
	// MaxClaims bounds the claims of one extraction answer (default and at
	// most verdict.MaxClaims, what the prompt asks for): a longer answer is
	// unusable.
	MaxClaims int
	// SearchResults is the results asked of each query, and recorded with
	// it (default and at most 5); SearchTimeout bounds one query (default
	// 20s).
	SearchResults int
	SearchTimeout time.Duration
	// MaxPassages bounds the passages judged for one claim (default 12).
	MaxPassages int
	// MaxPassageBytes bounds a passage's text (default 1500 bytes).
	MaxPassageBytes int
	// RecencyHalfLife is the age at which a source's recency weight halves
	// (default checks.DefaultHalfLife).
	RecencyHalfLife time.Duration
}

// maxRecordedResults is the most results a query_issued event records.
const maxRecordedResults = 5

func (c *Config) defaults() {
	if c.Model == "" {
		c.Model = "gpt-5"
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 10 * time.Second
	}
	if c.ExchangeTimeout <= 0 {
		c.ExchangeTimeout = 5 * time.Minute
	}
	if c.MaxClaims <= 0 || c.MaxClaims > verdict.MaxClaims {
		c.MaxClaims = verdict.MaxClaims
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

// Appender appends the events of one analysis in order, keyed by its id,
// and returns them (investigator.EventLog).
type Appender interface {
	AppendEvents(ctx context.Context, key string, payloads ...events.Payload) ([]events.Event, error)
}

// StanceJudge judges passages against a claim (stance.Provider) and
// reports every model exchange it makes.
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

// Deps are the analyst's collaborators.
type Deps struct {
	// Store is the run state (nil only in tests that run attempts alone).
	Store    *Store
	Appender Appender
	Provider llm.Provider
	Stance   StanceJudge
	// Search researches the claims; nil: no search is configured (recorded
	// in attempt_started, and no query is issued).
	Search   websearch.Searcher
	Registry SourceRegistry
	Policy   evidence.Policy
	Rubric   verdict.Rubric
	// Prompts holds verdict-extract and verdict-summary (default:
	// prompts.Default()).
	Prompts *prompts.Registry
	Log     *slog.Logger
	Now     func() time.Time
}

// Worker runs verdict analyses.
type Worker struct {
	cfg Config
	Deps
	// gather gathers a claim's evidence with Deps' search, registry,
	// stance and policy.
	gather gather.Gatherer
}

// New returns a worker.
func New(cfg Config, deps Deps) *Worker {
	cfg.defaults()
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Prompts == nil {
		deps.Prompts = prompts.Default()
	}
	if deps.Log == nil {
		deps.Log = logging.Discard()
	}
	deps.Log = deps.Log.With("worker", cfg.Worker, "stage", "analyst")
	return &Worker{cfg: cfg, Deps: deps, gather: gather.Gatherer{Search: deps.Search, Registry: deps.Registry, Stance: deps.Stance,
		Policy: deps.Policy, Limits: gather.Limits{SearchResults: cfg.SearchResults, SearchTimeout: cfg.SearchTimeout,
			MaxPassages: cfg.MaxPassages, MaxPassageBytes: cfg.MaxPassageBytes, MaxURLBytes: maxURLBytes,
			RecencyHalfLife: cfg.RecencyHalfLife}}}
}

// List lists due analyses (runstate.ListFunc).
func (w *Worker) List(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return w.Store.Work(ctx, now, limit)
}

// Do runs one analysis (runstate.DoFunc). It holds the analysis's lease and
// the state has caught up with the log: what to do follows from the run's
// status now, not from the listing.
func (w *Worker) Do(ctx context.Context, work runstate.Work) error {
	run, err := w.Store.Analysis(ctx, work.InvestigationID)
	if err != nil {
		return err
	}
	switch run.Status {
	case events.StatusPending, StatusRetryWait:
		if run.DueAt.After(w.Now()) {
			return nil
		}
		return w.attempt(ctx, run)
	case events.StatusRunning:
		if run.PostVerdict {
			return w.complete(ctx, run)
		}
		// We hold the lease and the state is current: the attempt that is
		// RUNNING lost its worker.
		return w.fail(ctx, run.Ref(), attemptError{transient: true, kind: "worker_lost",
			msg: "the worker running this attempt stopped before it finished"})
	}
	return nil
}

// complete appends the completion of an attempt whose post verdict is in
// the log (its worker stopped right after it).
func (w *Worker) complete(ctx context.Context, run Run) error {
	ref := run.Ref()
	claims, researched, err := w.Store.Counts(ctx, ref)
	if err != nil {
		return err
	}
	done := &events.AnalysisCompletedV1{AnalysisRef: ref, Claims: claims, Researched: researched}
	if _, err := w.Appender.AppendEvents(context.WithoutCancel(ctx), run.AnalysisID, done); err != nil {
		return err
	}
	w.Log.Info("analysis complete (its verdict was recorded by a worker that stopped)", "analysis", run.AnalysisID,
		"attempt", ref.Attempt, "claims", claims)
	return nil
}

// attemptError is why an attempt failed.
type attemptError struct {
	transient bool
	kind, msg string
}

func (e attemptError) Error() string { return e.kind + ": " + e.msg }

// classify maps an error of an attempt to its class: an LLM error keeps
// its own, a deadline is transient, and so is anything unexpected (a lost
// broker, a store that is briefly away).
func classify(err error) attemptError {
	var ae attemptError
	if errors.As(err, &ae) {
		return ae
	}
	if le, ok := llm.AsError(err); ok {
		return attemptError{transient: le.Retryable(), kind: string(le.Kind), msg: err.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return attemptError{transient: true, kind: "timeout", msg: err.Error()}
	}
	return attemptError{transient: true, kind: "internal", msg: err.Error()}
}

// maxRetryWait caps the wait between attempts: far above the defaults
// (10s, 20s, 40s), it only bounds a large configured RetryBase or
// MaxAttempts.
const maxRetryWait = time.Hour

// backoff is the delay before attempt n+1 after attempt n failed:
// base·2^(n-1), at most maxRetryWait. It is exact (no jitter): the worker
// records it as the failure's RetryAt.
func backoff(base time.Duration, n int) time.Duration {
	return retry.Exponential{Base: base, Max: maxRetryWait}.Delay(n)
}

// fail records that attempt ref failed: retryable, with the time the next
// attempt may start, while attempts are left and the failure is
// transient; otherwise for good.
func (w *Worker) fail(ctx context.Context, ref events.AnalysisRef, ae attemptError) error {
	ctx = context.WithoutCancel(ctx)
	retry := ae.transient && ref.Attempt < w.cfg.MaxAttempts
	reason := ae.kind + ": " + ae.msg
	if ae.transient && !retry {
		reason = fmt.Sprintf("gave up after %d attempts; last failure %s", ref.Attempt, reason)
	}
	failed := &events.AnalysisFailedV1{AnalysisRef: ref, Reason: events.Clip(events.Clean(reason), maxReasonBytes), Retryable: retry}
	if retry {
		failed.RetryAt = w.Now().Add(backoff(w.cfg.RetryBase, ref.Attempt)).UTC().Format(time.RFC3339Nano)
	}
	if _, err := w.Appender.AppendEvents(ctx, ref.AnalysisID, failed); err != nil {
		return err
	}
	w.Log.Warn("analysis attempt failed", "analysis", ref.AnalysisID, "attempt", ref.Attempt, "kind", ae.kind,
		"retry", retry)
	return nil
}

// credentials are the instance's: analyses carry no user keys.
func (w *Worker) credentials() (llm.Credentials, error) {
	if w.cfg.InstanceKey == "" && !w.cfg.AllowNoKey {
		return llm.Credentials{}, attemptError{kind: "no_credentials",
			msg: "no provider key: the instance has none configured (OPENAI_API_KEY)"}
	}
	return llm.Credentials{BaseURL: w.cfg.BaseURL, APIKey: w.cfg.InstanceKey}, nil
}
