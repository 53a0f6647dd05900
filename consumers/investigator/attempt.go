package investigator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
)

// Prompt names of stage 1.
const (
	PromptFresh  = "investigator-fresh"
	PromptUpdate = "investigator-update"
)

// attempt runs the next attempt of run's series.
func (w *Worker) attempt(ctx context.Context, run runstate.Run) error {
	ref := events.AttemptRef{InvestigationID: run.InvestigationID, Series: run.Series, Attempt: run.Attempt + 1}
	log := w.Log.With("investigation", run.InvestigationID, "series", ref.Series, "attempt", ref.Attempt)
	// Before a series' first attempt: a user key stored without its record
	// in the log is recorded first, so that it pays (the fold takes a key
	// only while the run is PENDING).
	if w.Keys != nil && !run.UserKey && run.Status == events.StatusPending && run.Attempt == 0 {
		wait, err := w.announceKey(ctx, run)
		if err != nil || wait {
			return err
		}
	}
	// A configuration this worker cannot honour fails the run before
	// anything is spent on it.
	if _, err := stageOneSettings(run.Configuration, w.Prompts, w.Provider.Name(), w.cfg.Model, false); err != nil {
		return w.failAttempt(ctx, run, ref, classify(err))
	}
	cred, credKind, err := Credentials(ctx, w.Keys, run, w.cfg.BaseURL, w.cfg.InstanceKey, w.cfg.AllowNoKey, w.Now())
	if err != nil {
		return w.failAttempt(ctx, run, ref, classify(err))
	}
	in, inputID, err := w.input(ctx, run)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return w.failAttempt(ctx, run, ref, classify(err))
	}
	images, err := loadImages(ctx, w.Images, in)
	if err != nil {
		return w.failAttempt(ctx, run, ref, attemptError{class: events.FailureTransient, kind: "image_store", msg: err.Error()})
	}

	set, err := stageOneSettings(run.Configuration, w.Prompts, w.Provider.Name(), w.cfg.Model, in.Update != nil)
	if err != nil {
		return w.failAttempt(ctx, run, ref, classify(err))
	}
	prompt := set.investigator
	msg, open, closeLine, err := investigatorMessage(in, images)
	if err != nil {
		return w.failAttempt(ctx, run, ref, attemptError{class: events.FailureNonRetryable, kind: "input", msg: err.Error()})
	}
	instructions, err := prompt.Render(prompts.StandardVars(open, closeLine, w.Now()))
	if err != nil {
		return w.failAttempt(ctx, run, ref, attemptError{class: events.FailureNonRetryable, kind: "prompt", msg: err.Error()})
	}
	req := llm.Request{
		Model: set.model, Instructions: instructions, Input: []llm.Message{msg},
		ReasoningEffort: w.cfg.ReasoningEffort,
		Metadata:        map[string]string{"investigation_id": run.InvestigationID, "attempt": fmt.Sprint(ref.Attempt)},
	}
	req.Tools = append(req.Tools, tools.SubmitCorrection())
	if in.Update != nil {
		req.Tools = append(req.Tools, tools.RetainCorrection())
	}
	if w.Tools.Fetcher != nil {
		req.Tools = append(req.Tools, w.Tools.Fetcher.Tool())
	}
	if set.authorContext {
		if w.Tools.Authors == nil {
			return w.failAttempt(ctx, run, ref, attemptError{class: events.FailureNonRetryable, kind: FailureKindConfigurationAuthorContext,
				msg: "the configuration offers the author_context tool, but this worker has no serving reader for it"})
		}
		req.Tools = append(req.Tools, authorContextTool())
	}
	webSearch := "NONE"
	if w.Provider.Name() == llm.ProviderOpenAIResponses {
		req.WebSearch = &llm.WebSearch{}
		req.ReasoningSummary = "auto"
		webSearch = "NATIVE"
	} else if w.Tools.Search != nil {
		req.Tools = append(req.Tools, webSearchTool())
		webSearch = "FUNCTION"
	}
	promptRef := events.PromptRefV1{Name: prompt.Name, Version: prompt.Version, SHA256: prompt.SHA256}
	started := &events.InvestigationAttemptStartedV1{AttemptRef: ref, Worker: w.cfg.Worker, Prompt: promptRef,
		Provider: w.Provider.Name(), Model: set.model, Instructions: instructions, Tools: toolDefinitions(req.Tools),
		WebSearch: webSearch, RoundCap: w.cfg.RoundCap, Credential: credKind, InputEventID: inputID}
	if err := w.Appender.Append(ctx, run.InvestigationID, started); err != nil {
		return err
	}
	log.Info("attempt started", "prompt", prompt.ID(), "model", set.model, "configuration", run.ConfigurationID,
		"update", in.Update != nil, "images", len(images))

	s := &stageOne{w: w, run: run, ref: ref, in: in, prompt: promptRef, images: images, seen: map[string]bool{}, retained: map[string]bool{},
		authorContext: set.authorContext}
	err = s.loop(ctx, cred, req)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Shutting down (or the lease was lost): the next worker records
		// this attempt as lost and starts another.
		return ctx.Err()
	}
	return w.failAttempt(ctx, run, ref, classify(err))
}

// stageOne is one attempt's conversation.
type stageOne struct {
	w        *Worker
	run      runstate.Run
	ref      events.AttemptRef
	in       events.InvestigationInputSnapshottedV1
	prompt   events.PromptRefV1
	images   []loadedImage
	seq      int
	accepted int
	seen     map[string]bool
	retained map[string]bool
	// authorContext: the author_context tool is offered in this attempt.
	authorContext bool
}

// loop runs model turns until the model answers without tool calls.
func (s *stageOne) loop(ctx context.Context, cred llm.Credentials, req llm.Request) error {
	var prev *llm.Response
	var outputs []llm.ToolOutput
	for round := 1; ; round++ {
		turn := req
		if prev != nil {
			turn.Input = nil
		}
		forced := round >= s.w.cfg.RoundCap
		if forced {
			turn.ForceFinalAnswer = true
			turn.Input = append(turn.Input, llm.UserText("You have reached the limit of tool use for this investigation. "+
				"Do not call any more tools; end with your short closing sentence now."))
		}
		tctx, cancel := context.WithTimeout(ctx, s.w.cfg.ExchangeTimeout)
		var res *llm.Response
		var err error
		if prev == nil {
			res, err = s.w.Provider.Create(tctx, cred, turn)
		} else {
			res, err = s.w.Provider.Continue(tctx, cred, turn, prev, outputs)
		}
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if res != nil {
				if rerr := s.record(ctx, round, res, err, nil, nil); rerr != nil {
					return rerr
				}
			}
			return err
		}
		calls := res.ToolCalls()
		if len(calls) > 0 && forced {
			err := attemptError{class: events.FailureNonRetryable, kind: "round_cap",
				msg: fmt.Sprintf("the model kept calling tools after the round cap of %d", s.w.cfg.RoundCap)}
			if rerr := s.record(ctx, round, res, err, nil, nil); rerr != nil {
				return rerr
			}
			return err
		}
		outputs = outputs[:0]
		results := make([]events.ToolResultV1, 0, len(calls))
		var claimEvents []events.Payload
		for _, call := range calls {
			out, ev := s.execute(ctx, call)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			outputs = append(outputs, llm.ToolOutput{CallID: call.CallID, Output: out})
			results = append(results, events.ToolResultV1{CallID: call.CallID, Name: call.Name, Output: out})
			if ev != nil {
				claimEvents = append(claimEvents, ev)
			}
		}
		if len(calls) == 0 {
			finished := &events.InvestigationStageOneFinishedV1{AttemptRef: s.ref, Rounds: round, Submissions: s.seq,
				Accepted: s.accepted, Retained: len(s.retained), FinalText: truncate(res.Text(), 4000), ForcedFinal: forced}
			return s.record(ctx, round, res, nil, results, []events.Payload{finished})
		}
		if err := s.record(ctx, round, res, nil, results, claimEvents); err != nil {
			return err
		}
		prev = res
	}
}

// record appends the exchange of a round, then the events its tool calls
// produced, in one append.
func (s *stageOne) record(ctx context.Context, round int, res *llm.Response, callErr error, results []events.ToolResultV1, then []events.Payload) error {
	ex := exchangeEvent(s.ref, events.StageInvestigator, "", round, s.prompt, res, callErr, s.images)
	if results != nil {
		ex.ToolResults = results
	}
	return s.w.Appender.Append(context.WithoutCancel(ctx), s.run.InvestigationID, append([]events.Payload{ex}, then...)...)
}

// execute runs one tool call and returns its output and, for claim tools,
// the event that records it.
func (s *stageOne) execute(ctx context.Context, call llm.ToolCall) (string, events.Payload) {
	switch call.Name {
	case tools.SubmitCorrectionName:
		return s.submit(call)
	case tools.RetainCorrectionName:
		return s.retain(call)
	case prompts.ToolFetchURL:
		if s.w.Tools.Fetcher == nil {
			break
		}
		var in struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(call.JSON, &in); err != nil {
			return toolError("the url argument is missing"), nil
		}
		return s.w.Tools.Fetcher.Output(ctx, in.URL), nil
	case WebSearchToolName:
		if s.w.Tools.Search == nil {
			break
		}
		return s.w.Tools.runSearch(ctx, call.JSON), nil
	case AuthorContextToolName:
		if !s.authorContext || s.w.Tools.Authors == nil {
			break // not offered in this attempt: the model may not call it
		}
		return authorContextOutput(ctx, s.w.Tools.Authors, s.run.PostVersionID), nil
	}
	return toolError("there is no tool named " + call.Name), nil
}

func toolError(msg string) string {
	out, _ := json.Marshal(map[string]string{"status": "error", "error": msg})
	return string(out)
}

func toolStatus(status, msg string) string {
	out, _ := json.Marshal(map[string]string{"status": status, "message": msg})
	return string(out)
}

// submit checks a submitted correction: it must quote the post text
// verbatim (Markdown emphasis aside) and not repeat an earlier one.
func (s *stageOne) submit(call llm.ToolCall) (string, events.Payload) {
	c, err := tools.DecodeCorrection(call.JSON)
	seq := s.seq
	s.seq++
	ev := &events.InvestigationClaimSubmittedV1{AttemptRef: s.ref, SubmissionID: events.SubmissionID(s.ref, seq), Seq: seq, CallID: call.CallID}
	if err != nil {
		// The provider checks arguments against the schema; this cannot
		// pass it and fail here, but never publish what we cannot read.
		ev.Disposition = events.DispositionNotVerbatim
		return toolError("the correction could not be read: " + err.Error()), ev
	}
	ev.Correction = events.CorrectionV1{Text: c.Text, Context: c.Context, Summary: strings.TrimSpace(c.Summary),
		Reasoning: strings.TrimSpace(c.Reasoning)}
	for _, src := range c.Sources {
		ev.Correction.Sources = append(ev.Correction.Sources, events.SourceV1{URL: src.URL, Title: strings.TrimSpace(src.Title), Snippet: strings.TrimSpace(src.Snippet)})
	}
	text, ctx, ok := verbatimClaim(s.in.Text, c.Text, c.Context)
	switch {
	case !ok:
		ev.Disposition = events.DispositionNotVerbatim
		return toolStatus("rejected", "The quoted text does not appear word for word in the post, so it was not recorded. "+
			"Copy the claim exactly as the post writes it, or drop it."), ev
	case s.seen[text]:
		ev.Disposition = events.DispositionDuplicate
		return toolStatus("rejected", "This claim was already submitted; it was not recorded twice."), ev
	}
	s.seen[text] = true
	ev.Correction.Text, ev.Correction.Context = text, ctx
	ev.Disposition = events.DispositionAccepted
	if err := ev.Validate(); err != nil {
		ev.Disposition = events.DispositionNotVerbatim
		ev.Correction = events.CorrectionV1{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning}
		return toolStatus("rejected", "The correction is incomplete: "+err.Error()), ev
	}
	s.accepted++
	return toolStatus("accepted", "Recorded; it will be reviewed before publication."), ev
}

// retain keeps a prior claim whose quote is still in the post.
func (s *stageOne) retain(call llm.ToolCall) (string, events.Payload) {
	r, err := tools.DecodeRetain(call.JSON)
	ev := &events.InvestigationClaimRetainedV1{AttemptRef: s.ref, CallID: call.CallID}
	if err != nil || s.in.Update == nil {
		ev.Disposition = events.DispositionInvalidRetain
		return toolError("there is no prior claim with that id"), ev
	}
	var prior *events.ClaimV1
	for i := range s.in.Update.PriorClaims {
		if s.in.Update.PriorClaims[i].ID == strings.TrimSpace(r.ID) {
			prior = &s.in.Update.PriorClaims[i]
		}
	}
	if prior == nil {
		ev.Disposition = events.DispositionInvalidRetain
		return toolError("there is no prior claim with id " + r.ID), ev
	}
	ev.PriorClaimID = prior.ID
	switch {
	case s.retained[prior.ID]:
		ev.Disposition = events.DispositionDuplicate
		return toolStatus("rejected", "This claim is already retained."), ev
	case !strings.Contains(s.in.Text, content.Normalize(prior.Text)):
		ev.Disposition = events.DispositionRetainNotInText
		return toolStatus("rejected", "The quoted text of this prior claim is no longer in the post, so it cannot be retained."), ev
	}
	s.retained[prior.ID] = true
	ev.Disposition = events.DispositionAccepted
	return toolStatus("accepted", "Retained."), ev
}

// exchangeEvent records one model exchange.
func exchangeEvent(ref events.AttemptRef, stage, submissionID string, round int, prompt events.PromptRefV1, res *llm.Response, callErr error, images []loadedImage) *events.InvestigationExchangeRecordedV1 {
	ex := &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: stage, SubmissionID: submissionID, Round: round,
		Prompt: prompt, Provider: res.Provider, Model: res.Model, HTTPStatus: res.HTTPStatus, RequestID: res.RequestID,
		DurationMS: res.Duration.Milliseconds(), RawRequest: redactImages(res.RawRequest, images),
		RawResponse: string(res.RawResponse), ToolResults: []events.ToolResultV1{},
		Usage: events.UsageV1{InputTokens: res.Usage.InputTokens, CachedInputTokens: res.Usage.CachedInputTokens,
			OutputTokens: res.Usage.OutputTokens, ReasoningTokens: res.Usage.ReasoningTokens, TotalTokens: res.Usage.TotalTokens}}
	if ex.Model == "" {
		ex.Model = "unknown"
	}
	if ex.Provider == "" {
		ex.Provider = "unknown"
	}
	if len(ex.RawRequest) == 0 {
		ex.RawRequest = json.RawMessage(`null`)
	}
	normalized := *res
	normalized.RawRequest, normalized.RawResponse = nil, nil
	ex.Response, _ = json.Marshal(normalized)
	if callErr != nil {
		ae := classify(callErr)
		ex.Error = &events.ExchangeErrorV1{Class: ae.class, Kind: ae.kind, Message: truncate(ae.msg, 2000)}
		var le *llm.Error
		if errors.As(callErr, &le) {
			ex.Error.StatusCode, ex.Error.Code = le.StatusCode, le.Code
		}
	}
	return ex
}
