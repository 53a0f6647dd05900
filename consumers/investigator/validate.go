package investigator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/retry"
)

// PromptValidator is the stage-2 prompt.
const PromptValidator = "validator"

// ValidatorProjectorName is the validator group's run-state projector.
const ValidatorProjectorName = "validator"

// ValidatorConfig tunes stage 2.
type ValidatorConfig struct {
	Worker      string
	Model       string
	BaseURL     string
	InstanceKey logging.Secret
	AllowNoKey  bool
	// PerInvestigation bounds the validations of one investigation that
	// run at once (default 4).
	PerInvestigation int
	// MaxTries per validation for transient failures (default 4), waiting
	// RetryBase*2^(n-1) between tries (default 10s), an hour at most.
	MaxTries  int
	RetryBase time.Duration
	// ExchangeTimeout bounds one model turn (default 5m).
	ExchangeTimeout time.Duration
	ReasoningEffort string
	// AssessMaxWait caps the wait before an assessment whose stance
	// provider failed is tried again (RetryBase·2^(n-1) after the n-th
	// failed exchange; default 10m); after AssessMaxFailures failed
	// exchanges (default 12) the claim is assessed without stance, every
	// passage neutral, and so is not published under the strict policy.
	AssessMaxWait     time.Duration
	AssessMaxFailures int
}

func (c *ValidatorConfig) defaults() {
	if c.PerInvestigation <= 0 {
		c.PerInvestigation = 4
	}
	if c.MaxTries <= 0 {
		c.MaxTries = 4
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 10 * time.Second
	}
	if c.ExchangeTimeout <= 0 {
		c.ExchangeTimeout = 5 * time.Minute
	}
	if c.Model == "" {
		c.Model = "gpt-5"
	}
	if c.AssessMaxWait <= 0 {
		c.AssessMaxWait = 10 * time.Minute
	}
	if c.AssessMaxFailures <= 0 {
		c.AssessMaxFailures = 12
	}
}

// Validator is stage 2: it judges every accepted submission of a running
// attempt in a separate model call, as soon as the submission is in the
// log, so validation overlaps stage 1; then the evidence engine assesses
// every claim it approved (Assessor), which decides whether the claim is
// published. Its run state is its own consumer group's fold of the
// investigations topic.
type Validator struct {
	cfg      ValidatorConfig
	store    *runstate.Store
	log      *EventLog
	keys     KeyStore
	provider llm.Provider
	prompts  *prompts.Registry
	images   ImageStore
	assessor *Assessor
	logger   *slog.Logger
	now      func() time.Time
}

// NewValidator returns a validator. keys and images may be nil; assessor
// may not: no approved claim is published without its assessment.
func NewValidator(cfg ValidatorConfig, store *runstate.Store, log *EventLog, keys KeyStore, provider llm.Provider,
	images ImageStore, assessor *Assessor, logger *slog.Logger, now func() time.Time) *Validator {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Validator{cfg: cfg, store: store, log: log, keys: keys, provider: provider, prompts: prompts.Default(),
		images: images, assessor: assessor, logger: logger.With("worker", cfg.Worker, "stage", "validator"), now: now}
}

// List lists due validations and assessments (runstate.ListFunc).
func (v *Validator) List(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return v.store.ValidatorWork(ctx, now, v.cfg.PerInvestigation, limit, v.cfg.RetryBase, v.cfg.AssessMaxWait)
}

// Do validates one submission, or assesses one it approved
// (runstate.DoFunc).
func (v *Validator) Do(ctx context.Context, work runstate.Work) error {
	sub, err := v.store.Submission(ctx, work.SubmissionID)
	if err != nil {
		return err
	}
	run, err := v.store.Run(ctx, work.InvestigationID)
	if err != nil {
		return err
	}
	if run.Ref() != sub.Ref || (run.Status != events.StatusRunning && run.Status != runstate.StatusFinishing) {
		return nil // its attempt is over
	}
	switch {
	case sub.Outcome == "":
		return v.validate(ctx, run, sub)
	case sub.Outcome == events.ValidationApproved && !sub.Assessed:
		return v.assess(ctx, run, sub)
	}
	return nil // decided and assessed
}

// validate asks the validator model for its verdict on sub.
func (v *Validator) validate(ctx context.Context, run runstate.Run, sub runstate.Submission) error {
	prompt, model, err := validatorSettings(run.Configuration, v.prompts, v.provider.Name(), v.cfg.Model)
	if err != nil {
		var ae attemptError
		if !errors.As(err, &ae) {
			return err
		}
		// Stage 1 refuses such a configuration before any claim; a worker
		// of another build may not have. No claim of the run can be
		// validated as it asked: the run fails.
		return v.failRun(ctx, run, ae.Error())
	}
	promptRef := events.PromptRefV1{Name: prompt.Name, Version: prompt.Version, SHA256: prompt.SHA256}
	verdict := &events.InvestigationClaimValidatedV1{AttemptRef: sub.Ref, SubmissionID: sub.ID, Prompt: promptRef,
		Provider: v.provider.Name(), Model: model}

	cred, _, err := Credentials(ctx, v.keys, run, v.cfg.BaseURL, v.cfg.InstanceKey, v.cfg.AllowNoKey, v.now())
	if err != nil {
		verdict.Outcome, verdict.Reason, verdict.Tries = events.ValidationError, "no usable credentials: "+err.Error(), 1
		return v.log.Append(context.WithoutCancel(ctx), run.InvestigationID, verdict)
	}
	in, _, err := v.store.Input(ctx, run.InvestigationID)
	if err != nil {
		return err
	}
	images, err := loadImages(ctx, v.images, in)
	if err != nil {
		return err
	}
	msg, open, closeLine, err := validatorMessage(in, images, sub.Correction)
	if err != nil {
		return err
	}
	instructions, err := prompt.Render(prompts.StandardVars(open, closeLine, v.now()))
	if err != nil {
		return err
	}
	req := llm.Request{Model: model, Instructions: instructions, Input: []llm.Message{msg},
		ReasoningEffort: v.cfg.ReasoningEffort,
		OutputSchema:    &llm.OutputSchema{Name: prompts.VerdictSchemaName, Schema: tools.VerdictSchema()},
		Metadata:        map[string]string{"investigation_id": run.InvestigationID, "submission_id": sub.ID}}
	if v.provider.Name() == llm.ProviderOpenAIResponses {
		req.WebSearch = &llm.WebSearch{}
	}

	for try := 1; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, v.cfg.ExchangeTimeout)
		res, callErr := v.provider.Create(tctx, cred, req)
		cancel()
		if callErr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		var payloads []events.Payload
		if res != nil {
			payloads = append(payloads, exchangeEvent(sub.Ref, events.StageValidator, sub.ID, try, promptRef, res, callErr, images))
		}
		verdict.Tries = try
		switch {
		case callErr == nil:
			answer, err := tools.DecodeVerdict(res.OutputJSON)
			if err != nil {
				verdict.Outcome, verdict.Reason = events.ValidationError, "the verdict could not be read: "+err.Error()
			} else if answer.Approved {
				verdict.Outcome, verdict.Reason = events.ValidationApproved, nonEmpty(answer.Reason, "approved")
			} else {
				verdict.Outcome, verdict.Reason = events.ValidationRejected, nonEmpty(answer.Reason, "rejected")
			}
		case !llm.IsRetryable(callErr) || try >= v.cfg.MaxTries:
			verdict.Outcome = events.ValidationError
			verdict.Reason = truncate(fmt.Sprintf("no verdict after %d tries: %v", try, callErr), 1000)
		}
		if verdict.Outcome != "" {
			payloads = append(payloads, verdict)
		}
		if len(payloads) > 0 {
			if err := v.log.Append(context.WithoutCancel(ctx), run.InvestigationID, payloads...); err != nil {
				return err
			}
		}
		if verdict.Outcome != "" {
			v.logger.Info("claim validated", "investigation", run.InvestigationID, "submission", sub.ID,
				"outcome", verdict.Outcome, "tries", try)
			return nil
		}
		if err := retry.Sleep(ctx, backoff(v.cfg.RetryBase, try)); err != nil {
			return err
		}
	}
}

// assess judges the evidence of an approved submission and appends the
// assessment with the stance exchanges before it. A stance provider
// failure appends the exchanges only and returns the error: the assessment
// is listed again once its wait is over (runstate.Store.ValidatorWork).
func (v *Validator) assess(ctx context.Context, run runstate.Run, sub runstate.Submission) error {
	if v.assessor == nil {
		return errors.New("validator: no assessor, so approved claims cannot be assessed")
	}
	assessor := v.assessor
	if run.Configuration != nil {
		policy, err := policyOf(run.Configuration)
		if err != nil {
			// Stage 1 refuses an unknown policy before any claim; a worker
			// of another build may not have. No claim of the run can be
			// judged under the policy it asked for: the run fails.
			return v.failRun(ctx, run, err.Error())
		}
		assessor = assessor.WithPolicy(policy)
	}
	fetched, err := v.store.Fetches(ctx, sub.Ref, sub.FetchesBefore)
	if err != nil {
		return err
	}
	in := AssessInput{Ref: sub.Ref, SubmissionID: sub.ID, Claim: sub.Correction,
		ValidatorCitations: sub.ValidatorCitations, Fetched: fetched}
	cred, _, err := Credentials(ctx, v.keys, run, v.cfg.BaseURL, v.cfg.InstanceKey, v.cfg.AllowNoKey, v.now())
	if err != nil {
		ae := classify(err)
		if ae.class == events.FailureTransient {
			return err
		}
		in.NoStance = "no stance: no usable credentials: " + ae.Error()
	}
	in.Cred = cred
	if sub.AssessFailures >= v.cfg.AssessMaxFailures {
		in.NoStance = fmt.Sprintf("no stance: the stance provider failed %d times", sub.AssessFailures)
	}
	out, err := assessor.Assess(ctx, in)
	payloads := out.Exchanges
	if out.Event != nil {
		payloads = append(payloads, out.Event)
	}
	if len(payloads) > 0 {
		if aerr := v.log.Append(context.WithoutCancel(ctx), run.InvestigationID, payloads...); aerr != nil {
			return aerr
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		v.logger.Warn("claim assessment failed; it will be tried again", "investigation", run.InvestigationID,
			"submission", sub.ID, "failed_exchanges", sub.AssessFailures, "err", err)
		return err
	}
	ev := out.Event
	v.logger.Info("claim assessed", "investigation", run.InvestigationID, "submission", sub.ID, "verdict", ev.Verdict,
		"score", ev.Score, "gate4", ev.Gate4, "published", ev.Published, "reason", ev.Reason, "sources", len(ev.Sources),
		"policy", ev.PolicyVersion)
	return nil
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// failRun ends run's current series with reason.
func (v *Validator) failRun(ctx context.Context, run runstate.Run, reason string) error {
	in, _, err := v.store.Input(ctx, run.InvestigationID)
	if err != nil {
		return err
	}
	failed := &events.InvestigationFailedV1{InvestigationID: run.InvestigationID, PostID: run.PostID,
		PostVersionID: run.PostVersionID, Provenance: in.Provenance, Reason: truncate(reason, 1000),
		Attempts: run.Attempt, Series: run.Series, ConfigurationID: run.ConfigurationID}
	v.logger.Warn("investigation failed", "investigation", run.InvestigationID, "reason", failed.Reason)
	return v.log.Append(context.WithoutCancel(ctx), run.InvestigationID, failed)
}
