package investigator

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
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
	// RetryBase*2^(n-1) between tries (default 10s).
	MaxTries  int
	RetryBase time.Duration
	// ExchangeTimeout bounds one model turn (default 5m).
	ExchangeTimeout time.Duration
	ReasoningEffort string
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
}

// Validator is stage 2: it judges every accepted submission of a running
// attempt in a separate model call, as soon as the submission is in the
// log, so validation overlaps stage 1. Its run state is its own consumer
// group's fold of the investigations topic.
type Validator struct {
	cfg      ValidatorConfig
	store    *runstate.Store
	log      *EventLog
	keys     KeyStore
	provider llm.Provider
	prompts  *prompts.Registry
	images   ImageStore
	logger   *slog.Logger
	now      func() time.Time
}

// NewValidator returns a validator. keys and images may be nil.
func NewValidator(cfg ValidatorConfig, store *runstate.Store, log *EventLog, keys KeyStore, provider llm.Provider,
	images ImageStore, logger *slog.Logger, now func() time.Time) *Validator {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Validator{cfg: cfg, store: store, log: log, keys: keys, provider: provider, prompts: prompts.Default(),
		images: images, logger: logger.With("worker", cfg.Worker, "stage", "validator"), now: now}
}

// List lists due validations (runstate.ListFunc).
func (v *Validator) List(ctx context.Context, now time.Time, limit int) ([]runstate.Work, error) {
	return v.store.ValidatorWork(ctx, now, v.cfg.PerInvestigation, limit)
}

// Do validates one submission (runstate.DoFunc).
func (v *Validator) Do(ctx context.Context, work runstate.Work) error {
	sub, err := v.store.Submission(ctx, work.SubmissionID)
	if err != nil {
		return err
	}
	run, err := v.store.Run(ctx, work.InvestigationID)
	if err != nil {
		return err
	}
	if sub.Outcome != "" || run.Ref() != sub.Ref ||
		(run.Status != runstate.StatusRunning && run.Status != runstate.StatusFinishing) {
		return nil // decided, or its attempt is over
	}
	prompt, err := v.prompts.Get(PromptValidator)
	if err != nil {
		return err
	}
	promptRef := events.PromptRefV1{Name: prompt.Name, Version: prompt.Version, SHA256: prompt.SHA256}
	verdict := &events.InvestigationClaimValidatedV1{AttemptRef: sub.Ref, SubmissionID: sub.ID, Prompt: promptRef,
		Provider: v.provider.Name(), Model: v.cfg.Model}

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
	req := llm.Request{Model: v.cfg.Model, Instructions: instructions, Input: []llm.Message{msg},
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
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(Backoff(v.cfg.RetryBase, try)):
		}
	}
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
