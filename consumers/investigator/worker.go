// Package investigator is stage 1 of an investigation: the worker that
// takes investigation requests from the run state (consumer group
// "investigator"), snapshots the input once, runs attempts of the agentic
// fact-check through an llm.Provider, records every exchange and every
// claim submission as events, retries transient failures with backoff, and
// publishes the result once stage 2 (consumers/validator) has decided on
// every submitted claim.
//
// Nothing here writes a read model: the worker only appends events; the
// run state, the serving projection and the audit trail are folds of them.
package investigator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/retry"
	"github.com/errata-dev/errata/projections/serving"
)

// ProjectorName is the investigator group's run-state projector.
const ProjectorName = "investigator"

// Config tunes the investigator.
type Config struct {
	// Worker names this instance in events and leases.
	Worker string
	// Model is the stage-1 model.
	Model string
	// BaseURL is the provider's API root; InstanceKey the instance's key
	// (empty: only investigations with a user key can run, or a local
	// server that needs none when AllowNoKey).
	BaseURL     string
	InstanceKey logging.Secret
	AllowNoKey  bool
	// MaxAttempts per attempt series (default 4).
	MaxAttempts int
	// RetryBase is the first retry delay; attempt n waits RetryBase*2^(n-1)
	// (default 10s), an hour at most.
	RetryBase time.Duration
	// RoundCap bounds the model turns of one attempt; the last one is
	// forced to answer without tools (default 24).
	RoundCap int
	// ReasoningEffort for reasoning models ("" leaves the default).
	ReasoningEffort string
	// ExchangeTimeout bounds one model turn (default 10m).
	ExchangeTimeout time.Duration
}

func (c *Config) defaults() {
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 4
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 10 * time.Second
	}
	if c.RoundCap <= 0 {
		c.RoundCap = 24
	}
	if c.ExchangeTimeout <= 0 {
		c.ExchangeTimeout = 10 * time.Minute
	}
	if c.Model == "" {
		c.Model = "gpt-5"
	}
}

// maxRetryWait caps the wait between attempts and between a validation's
// tries: far above the defaults (10s, 20s, 40s), it only bounds a large
// configured RetryBase or MaxAttempts.
const maxRetryWait = time.Hour

// backoff is the delay before attempt n+1 after attempt n failed:
// base·2^(n-1), at most maxRetryWait. It is exact (no jitter): the worker
// records it as the failure's RetryAt.
func backoff(base time.Duration, n int) time.Duration {
	return retry.Exponential{Base: base, Max: maxRetryWait}.Delay(n)
}

// SourceReader reads what an investigation reads (serving.Reader).
type SourceReader interface {
	Source(ctx context.Context, versionID string) (serving.Source, error)
}

// KeyStore holds users' OpenAI keys (keystore.Store).
type KeyStore interface {
	Get(ctx context.Context, investigationID string, now time.Time) (logging.Secret, error)
	Delete(ctx context.Context, investigationID string) error
	Announce(ctx context.Context, investigationID string, now time.Time, announce func(context.Context, keystore.Attachment) error) (bool, error)
}

// Deps are the investigator's collaborators.
type Deps struct {
	Store    *runstate.Store
	Appender *EventLog
	Sources  SourceReader
	Keys     KeyStore // nil: no user keys
	Provider llm.Provider
	Prompts  *prompts.Registry
	Tools    *Toolbox
	Images   ImageStore // nil: images are not sent
	Log      *slog.Logger
	Now      func() time.Time
}

// Worker runs stage 1 and publishes results.
type Worker struct {
	cfg Config
	Deps
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
	if deps.Tools == nil {
		deps.Tools = &Toolbox{}
	}
	deps.Log = deps.Log.With("worker", cfg.Worker)
	return &Worker{cfg: cfg, Deps: deps}
}

// List lists the worker's due work (runstate.ListFunc).
func (w *Worker) List(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return w.Store.InvestigatorWork(ctx, now, limit)
}

// Do runs one unit of work (runstate.DoFunc). The state has caught up with
// the log; what to do follows from the run's status now, not from the
// listing.
func (w *Worker) Do(ctx context.Context, work runstate.Work) error {
	run, err := w.Store.Run(ctx, work.InvestigationID)
	if err != nil {
		return err
	}
	switch run.Status {
	case events.StatusPending, runstate.StatusRetryWait:
		if run.DueAt.After(w.Now()) {
			return nil
		}
		return w.attempt(ctx, run)
	case events.StatusRunning:
		// We hold the run's lease and the state is current: the attempt
		// that is RUNNING lost its worker.
		return w.failAttempt(ctx, run, run.Ref(), attemptError{class: events.FailureTransient, kind: "worker_lost",
			msg: "the worker running this attempt stopped before it finished"})
	case runstate.StatusFinishing:
		return w.finish(ctx, run)
	}
	return nil
}

// attemptError is why an attempt failed.
type attemptError struct {
	class, kind, msg string
}

func (e attemptError) Error() string { return e.kind + ": " + e.msg }

// classify maps an error of an attempt to its class.
func classify(err error) attemptError {
	var ae attemptError
	if errors.As(err, &ae) {
		return ae
	}
	if le, ok := llm.AsError(err); ok {
		class := events.FailureNonRetryable
		if le.Retryable() {
			class = events.FailureTransient
		}
		return attemptError{class: class, kind: string(le.Kind), msg: le.Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return attemptError{class: events.FailureTransient, kind: "timeout", msg: err.Error()}
	}
	return attemptError{class: events.FailureTransient, kind: "internal", msg: err.Error()}
}

// failAttempt records that attempt ref failed and either schedules the
// next attempt or, when the failure is not retryable or the series has no
// attempts left, fails the investigation.
func (w *Worker) failAttempt(ctx context.Context, run runstate.Run, ref events.AttemptRef, ae attemptError) error {
	ctx = context.WithoutCancel(ctx)
	failed := &events.InvestigationAttemptFailedV1{AttemptRef: ref, Class: ae.class, Kind: ae.kind, Message: truncate(ae.msg, 2000)}
	retry := ae.class == events.FailureTransient && ref.Attempt < w.cfg.MaxAttempts
	if retry {
		failed.RetryAt = w.Now().Add(backoff(w.cfg.RetryBase, ref.Attempt)).UTC().Format(time.RFC3339Nano)
	}
	payloads := []events.Payload{failed}
	if !retry {
		reason := ae.kind + ": " + truncate(ae.msg, 500)
		if ae.class == events.FailureTransient {
			reason = fmt.Sprintf("gave up after %d attempts; last failure %s", ref.Attempt, reason)
		}
		payloads = append(payloads, w.failedEvent(ctx, run, ref, reason))
	}
	if err := w.Appender.Append(ctx, run.InvestigationID, payloads...); err != nil {
		return err
	}
	w.Log.Warn("attempt failed", "investigation", run.InvestigationID, "series", ref.Series, "attempt", ref.Attempt,
		"class", ae.class, "kind", ae.kind, "retry", retry)
	if !retry {
		w.forgetKey(ctx, run.InvestigationID)
	}
	return nil
}

func (w *Worker) failedEvent(ctx context.Context, run runstate.Run, ref events.AttemptRef, reason string) *events.InvestigationFailedV1 {
	provenance := events.ProvenanceClientFallback
	if in, _, err := w.Store.Input(ctx, run.InvestigationID); err == nil {
		provenance = in.Provenance
	} else if src, err := w.Sources.Source(ctx, run.PostVersionID); err == nil {
		provenance = src.Provenance()
	}
	return &events.InvestigationFailedV1{InvestigationID: run.InvestigationID, PostID: run.PostID,
		PostVersionID: run.PostVersionID, Provenance: provenance, Reason: truncate(reason, 1000),
		Attempts: ref.Attempt, Series: ref.Series, ConfigurationID: run.ConfigurationID}
}

// announceKey makes sure a user's key stored for run's investigation is
// in the run state before the run's first attempt: the user asked for the
// run with that key, so it must not start on the instance's key. The
// request that stored the key appends its record, but that append may have
// failed (a lost broker, a crash between the two) and the request may never
// be retried; then the investigator appends the record itself. It reports
// whether the attempt must wait (for the record to be appended or folded):
// the executor comes back to the run with the state caught up.
func (w *Worker) announceKey(ctx context.Context, run runstate.Run) (wait bool, err error) {
	announced, err := w.Keys.Announce(ctx, run.InvestigationID, w.Now(), w.Appender.AppendKeyAttached)
	switch {
	case errors.Is(err, keystore.ErrNotFound):
		return false, nil // no user key: the instance pays
	case errors.Is(err, keystore.ErrAnnouncing):
		return true, nil // a request is appending the record right now
	case errors.Is(err, keystore.ErrAnnouncementNotRecorded):
		w.Log.Warn("recorded a user key in the log, but not that it is recorded", "investigation", run.InvestigationID, "err", err)
		return true, nil
	case err != nil:
		return false, err
	case announced:
		w.Log.Info("recorded a user key its request left out of the log", "investigation", run.InvestigationID)
		return true, nil
	}
	// The record is in the log, perhaps appended after the state was read:
	// look again once the state has caught up. A record the state still
	// lacks was folded before this series began (the key outlived an
	// earlier series); it does not pay for this one.
	if err := w.Store.CatchUp(ctx, keyCatchUpTimeout); err != nil {
		return false, err
	}
	now, err := w.Store.Run(ctx, run.InvestigationID)
	if err != nil {
		return false, err
	}
	return now.UserKey || now.Status != run.Status || now.Series != run.Series, nil
}

// keyCatchUpTimeout bounds announceKey's wait for the run state.
const keyCatchUpTimeout = 30 * time.Second

// forgetKey deletes a user's key once the investigation is terminal.
func (w *Worker) forgetKey(ctx context.Context, investigationID string) {
	if w.Keys == nil {
		return
	}
	if err := w.Keys.Delete(ctx, investigationID); err != nil {
		w.Log.Warn("deleting the user key failed", "investigation", investigationID, "err", err)
	}
}

// Credentials resolves whose key pays for a run: the user's key when one
// was attached (an expired one fails the run: it was asked for with that
// key), else the instance key.
func Credentials(ctx context.Context, keys KeyStore, run runstate.Run, baseURL string, instance logging.Secret, allowNoKey bool, now time.Time) (llm.Credentials, string, error) {
	cred := llm.Credentials{BaseURL: baseURL}
	if run.UserKey {
		if keys == nil {
			return cred, "", attemptError{class: events.FailureNonRetryable, kind: "user_key_unavailable",
				msg: "the investigation was requested with the user's OpenAI key, but this worker has no key store"}
		}
		key, err := keys.Get(ctx, run.InvestigationID, now)
		switch {
		case errors.Is(err, keystore.ErrExpired), errors.Is(err, keystore.ErrNotFound):
			return cred, "", attemptError{class: events.FailureNonRetryable, kind: "user_key_expired",
				msg: "the user's OpenAI key for this investigation expired before it could run; ask for the investigation again"}
		case err != nil:
			return cred, "", attemptError{class: events.FailureTransient, kind: "key_store", msg: err.Error()}
		}
		cred.APIKey = key
		return cred, events.CredentialUser, nil
	}
	if instance == "" && !allowNoKey {
		return cred, "", attemptError{class: events.FailureNonRetryable, kind: "no_credentials",
			msg: "no OpenAI key: the instance has none configured and the request carried no user key"}
	}
	cred.APIKey = instance
	return cred, events.CredentialInstance, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
