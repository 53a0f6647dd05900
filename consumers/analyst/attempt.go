package analyst

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

// Exchange steps.
const (
	StepExtract = "extract"
	StepStance  = "stance"
	StepVerdict = "verdict"
)

// SearchNone is attempt_started's search when no web search is configured.
const SearchNone = "none"

// run is one attempt in progress.
type run struct {
	w       *Worker
	ref     events.AnalysisRef
	req     events.AnalysisRequestedV1
	cred    llm.Credentials
	extract prompts.Prompt
	summary prompts.Prompt
	// now is the time of the attempt's start (its event's); seq numbers
	// the attempt's exchanges, from 0.
	now time.Time
	seq int
}

// PromptVersion names the prompts an analysis runs with reg (nil:
// prompts.Default()): the extraction, summary and stance prompts,
// name@version each, joined by "+". It is the prompt version of analysis
// ids (events.AnalysisID): a new version of any of them makes a new
// analysis of the same content.
func PromptVersion(reg *prompts.Registry) (string, error) {
	if reg == nil {
		reg = prompts.Default()
	}
	var ids []string
	for _, name := range []string{prompts.NameVerdictExtract, prompts.NameVerdictSummary, prompts.NameStance} {
		p, err := reg.Get(name)
		if err != nil {
			return "", err
		}
		ids = append(ids, p.Name+"@"+p.Version)
	}
	return strings.Join(ids, "+"), nil
}

// attempt runs the next attempt of an analysis, from the request.
func (w *Worker) attempt(ctx context.Context, r Run) error {
	ref := events.AnalysisRef{AnalysisID: r.AnalysisID, Attempt: r.Attempt + 1}
	cred, err := w.credentials()
	if err != nil {
		return w.fail(ctx, ref, classify(err))
	}
	a := &run{w: w, ref: ref, req: r.Request, cred: cred}
	if a.extract, err = w.Prompts.Get(prompts.NameVerdictExtract); err == nil {
		a.summary, err = w.Prompts.Get(prompts.NameVerdictSummary)
	}
	if err != nil {
		return w.fail(ctx, ref, attemptError{kind: "prompt", msg: err.Error()})
	}
	searchName := SearchNone
	if w.Search != nil {
		searchName = w.Search.Provider()
	}
	started := &events.AnalysisAttemptStartedV1{AnalysisRef: ref, Worker: w.cfg.Worker,
		Prompts:  []events.PromptRefV1{promptRef(a.extract), promptRef(a.summary), w.Stance.PromptRef()},
		Provider: w.Provider.Name(), Model: w.cfg.Model, RegistryVersion: w.Registry.Version(),
		PolicyVersion: w.Policy.Version(), RubricVersion: w.Rubric.Version(), Search: searchName}
	evs, err := w.Appender.AppendEvents(ctx, r.AnalysisID, started)
	if err != nil {
		return err
	}
	// The attempt's time is its start's event time: the prompts' date and
	// the sources' ages derive from the log, not from a clock read later.
	a.now = evs[0].Time
	w.Log.Info("analysis attempt started", "analysis", r.AnalysisID, "attempt", ref.Attempt, "model", w.cfg.Model,
		"search", searchName)
	if version, err := PromptVersion(w.Prompts); err == nil && version != r.Request.PromptVersion {
		// Requested under other prompts (an API older or newer than this
		// worker): it runs with this worker's, which attempt_started
		// records.
		w.Log.Warn("analysis requested under other prompts", "analysis", r.AnalysisID, "requested", r.Request.PromptVersion,
			"running", version)
	}
	err = a.run(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Shutting down, or the lease was lost: the next worker records
		// this attempt as lost and starts another.
		return ctx.Err()
	}
	return w.fail(ctx, ref, classify(err))
}

// claim is one extracted claim as the attempt carries it on.
type claim struct {
	id         string
	triage     verdict.Extracted
	researched bool
	// result is its verdict.
	result verdict.ClaimResult
	// engine is the evidence engine's verdict, passages the search
	// passages judged for it.
	engine   string
	passages []evidence.Passage
}

// run appends the steps of the attempt, each as it happens.
func (a *run) run(ctx context.Context) error {
	claims, err := a.extractClaims(ctx)
	if err != nil {
		return err
	}
	researched := 0
	for i := range claims {
		if !claims[i].researched {
			continue
		}
		researched++
		if err := a.research(ctx, &claims[i]); err != nil {
			return err
		}
	}
	return a.conclude(ctx, claims, researched)
}

// extractClaims asks the model for the claims of the text and their triage
// and appends the exchange, then each claim and its triage decision.
func (a *run) extractClaims(ctx context.Context) ([]claim, error) {
	req, err := verdict.ExtractionRequest(a.w.Prompts, events.Clean(a.req.Text), a.now, nil)
	if errors.Is(err, verdict.ErrText) {
		// Only a hand-made request can hold one: producers refuse it.
		return nil, attemptError{kind: "input", msg: err.Error()}
	}
	if err != nil {
		return nil, attemptError{kind: "prompt", msg: err.Error()}
	}
	var extracted []verdict.Extracted
	if err := a.ask(ctx, StepExtract, req, func(raw []byte) (err error) {
		extracted, err = verdict.DecodeExtraction(raw, a.w.cfg.MaxClaims)
		return err
	}); err != nil {
		return nil, err
	}
	claims := make([]claim, len(extracted))
	var payloads, unresearched []events.Payload
	for i, e := range extracted {
		e = cleanExtracted(e)
		researched, why := a.w.Rubric.Researched(e)
		c := claim{id: events.AnalysisClaimID(a.ref.AnalysisID, a.ref.Attempt, i), triage: e, researched: researched}
		payloads = append(payloads,
			&events.AnalysisClaimExtractedV1{AnalysisRef: a.ref, ClaimID: c.id, Index: i, Text: e.Text, Context: e.Context},
			&events.AnalysisClaimTriagedV1{AnalysisRef: a.ref, ClaimID: c.id, Kind: e.Kind, Specificity: e.Specificity,
				TimeSensitive: e.TimeSensitive, CurrentEvents: e.CurrentEvents, Numeric: e.Numeric, Researched: researched,
				Reason: triageReason(why, e.Reason)})
		if !researched {
			// Gate 1 stops it: its verdict (Opinion or Unverifiable) is
			// known at once, without any search.
			unresearched = append(unresearched, a.verdict(&c, evidence.Assessment{}, nil, false,
				"Not researched: "+events.Clean(why)+"."))
		}
		claims[i] = c
	}
	payloads = append(payloads, unresearched...)
	if len(payloads) > 0 {
		if err := a.append(ctx, payloads...); err != nil {
			return nil, err
		}
	}
	return claims, nil
}

// conclude appends the post verdict (the rubric's) and completed. When a
// claim was researched, the model first writes the summary of the claims
// and their verdicts (its exchange appended before anything else); with
// nothing researched there is nothing to summarise, and the rubric says
// why itself.
func (a *run) conclude(ctx context.Context, claims []claim, researched int) error {
	results := make([]verdict.ClaimResult, len(claims))
	triage := make([]verdict.Extracted, len(claims))
	var fromSearch []evidence.Passage
	for i, c := range claims {
		triage[i] = c.triage
		results[i] = c.result
		fromSearch = append(fromSearch, c.passages...)
	}
	var summary verdict.Summary
	if researched > 0 {
		var err error
		if summary, err = a.summarize(ctx, claims, fromSearch); err != nil {
			return err
		}
	}
	post := a.w.Rubric.Post(verdict.PostInput{Claims: results, Triage: triage, Summary: summary,
		SearchResults: fromSearch, Registry: a.registryLookup})
	pv := &events.AnalysisPostVerdictV1{AnalysisRef: a.ref, TruthPercent: post.TruthPercent, Confidence: post.Confidence,
		Caps: caps(post.Caps), Label: post.Label, Band: post.Band, Summary: events.Clip(events.Clean(post.Summary), maxSummaryBytes),
		Caveats: cleanList(post.Caveats), Sources: cleanSources(post.Sources), Claims: len(claims)}
	done := &events.AnalysisCompletedV1{AnalysisRef: a.ref, Claims: len(claims), Researched: researched}
	if err := a.append(ctx, pv, done); err != nil {
		return err
	}
	a.w.Log.Info("analysis complete", "analysis", a.ref.AnalysisID, "attempt", a.ref.Attempt, "claims", len(claims),
		"researched", researched, "label", post.Label, "band", post.Band, "confidence", post.Confidence)
	return nil
}

// summarize asks the model for the summary of the claims and their
// verdicts, with the search results they were judged on.
func (a *run) summarize(ctx context.Context, claims []claim, fromSearch []evidence.Passage) (verdict.Summary, error) {
	verdicts, err := json.MarshalIndent(summaryClaims(claims), "", "  ")
	if err != nil {
		return verdict.Summary{}, err
	}
	found, err := json.MarshalIndent(summaryResults(fromSearch), "", "  ")
	if err != nil {
		return verdict.Summary{}, err
	}
	req, err := verdict.SummaryRequest(a.w.Prompts, events.Clean(a.req.Text), string(verdicts), string(found), a.now, nil)
	if err != nil {
		return verdict.Summary{}, attemptError{kind: "prompt", msg: err.Error()}
	}
	var summary verdict.Summary
	err = a.ask(ctx, StepVerdict, req, func(raw []byte) (err error) {
		summary, err = verdict.DecodeSummary(raw)
		return err
	})
	return summary, err
}

// summaryClaim is one entry of the summary call's claim verdicts.
type summaryClaim struct {
	Text       string `json:"text"`
	Kind       string `json:"kind"`
	Researched bool   `json:"researched"`
	// For a researched claim: the engine's verdict, and the rubric's truth
	// percentage, confidence and label.
	Verdict      string `json:"verdict,omitempty"`
	TruthPercent *int   `json:"truth_percent,omitempty"`
	Confidence   *int   `json:"confidence,omitempty"`
	Label        string `json:"label,omitempty"`
}

func summaryClaims(claims []claim) []summaryClaim {
	out := make([]summaryClaim, len(claims))
	for i, c := range claims {
		out[i] = summaryClaim{Text: c.triage.Text, Kind: c.triage.Kind, Researched: c.researched}
		if c.researched {
			r := c.result
			out[i].Verdict, out[i].TruthPercent, out[i].Confidence, out[i].Label = c.engine, &r.TruthPercent, &r.Confidence, r.Label
		}
	}
	return out
}

// summaryResult is one entry of the summary call's search results.
type summaryResult struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Snippet     string `json:"snippet"`
	PublishedAt string `json:"published_at,omitempty"`
	Tier        int    `json:"tier"`
}

// summaryResults lists the judged passages, each URL once, in order.
func summaryResults(ps []evidence.Passage) []summaryResult {
	out := []summaryResult{}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.URL] {
			continue
		}
		seen[p.URL] = true
		r := summaryResult{URL: p.URL, Title: p.Title, Snippet: p.Snippet, Tier: p.Tier}
		if !p.PublishedAt.IsZero() {
			r.PublishedAt = p.PublishedAt.UTC().Format(time.DateOnly)
		}
		out = append(out, r)
	}
	return out
}

// registryLookup resolves a URL the rubric names (verdict.PostInput).
func (a *run) registryLookup(raw string) (string, int, bool) {
	m, err := a.w.Registry.Lookup(raw)
	if err != nil || !gather.Usable(m) || len(m.URL) > maxURLBytes {
		return "", 0, false
	}
	return m.Domain, m.Tier, true
}

// answerTries bounds the tries of one question whose answers are unusable.
const answerTries = 3

// ask makes the model call req and reads its answer with decode. An unusable
// answer (a refusal, an answer breaking the schema or its bounds) is asked
// again at once, up to answerTries tries in all, every exchange recorded;
// then the attempt fails for good: the model does not answer the
// question. A provider failure ends the attempt at once (classify says
// whether a later attempt follows).
func (a *run) ask(ctx context.Context, step string, req verdict.Request, decode func([]byte) error) error {
	var last error
	call := req.LLM(a.w.cfg.Model, a.w.cfg.ReasoningEffort, a.metadata())
	for range answerTries {
		res, err := a.call(ctx, step, req.Prompt, call)
		if err != nil {
			if le, ok := llm.AsError(err); !ok || (le.Kind != llm.KindInvalidOutput && le.Kind != llm.KindRefusal) {
				return err
			}
			last = err
			continue
		}
		if last = decode(res.OutputJSON); last == nil {
			return nil
		}
	}
	return attemptError{kind: "unusable_answer", msg: fmt.Sprintf("no usable %s answer after %d tries: %v", step, answerTries, last)}
}

// call makes one model call and appends its exchange before anything
// derived from the answer. An error is the provider's (after the exchange
// is recorded) or the append's.
func (a *run) call(ctx context.Context, step string, prompt prompts.Prompt, req llm.Request) (*llm.Response, error) {
	tctx, cancel := context.WithTimeout(ctx, a.w.cfg.ExchangeTimeout)
	res, callErr := a.w.Provider.Create(tctx, a.cred, req)
	cancel()
	if callErr != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := a.append(ctx, a.exchange(step, promptRef(prompt), res, callErr)); err != nil {
		return nil, err
	}
	if callErr != nil {
		return nil, fmt.Errorf("%s call: %w", step, callErr)
	}
	return res, nil
}

// exchange is the event of one model exchange; res may be nil (a request
// refused before it was sent).
func (a *run) exchange(step string, prompt events.PromptRefV1, res *llm.Response, callErr error) *events.AnalysisExchangeRecordedV1 {
	ex := &events.AnalysisExchangeRecordedV1{AnalysisRef: a.ref, Step: step, Seq: a.seq, Prompt: prompt,
		Provider: a.w.Provider.Name(), Model: a.w.cfg.Model, RawRequest: "null"}
	a.seq++
	if res != nil {
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
	if callErr != nil {
		ex.Error = events.Clip(events.Clean(callErr.Error()), maxReasonBytes)
	}
	return ex
}

func (a *run) append(ctx context.Context, payloads ...events.Payload) error {
	_, err := a.w.Appender.AppendEvents(context.WithoutCancel(ctx), a.ref.AnalysisID, payloads...)
	return err
}

func (a *run) metadata() map[string]string {
	return map[string]string{"analysis_id": a.ref.AnalysisID, "attempt": fmt.Sprint(a.ref.Attempt)}
}

func promptRef(p prompts.Prompt) events.PromptRefV1 {
	return events.PromptRefV1{Name: p.Name, Version: p.Version, SHA256: p.SHA256}
}

func caps(cs []verdict.Cap) []events.CapV1 {
	out := make([]events.CapV1, len(cs))
	for i, c := range cs {
		out[i] = events.CapV1{Rule: c.Rule, Cap: c.Cap, Before: c.Before}
	}
	return out
}

// cleanExtracted makes a model's claim storable and bounded.
func cleanExtracted(e verdict.Extracted) verdict.Extracted {
	e.Text = events.Clip(strings.TrimSpace(events.Clean(e.Text)), maxClaimBytes)
	e.Context = events.Clip(strings.TrimSpace(events.Clean(e.Context)), maxContextBytes)
	e.Reason = events.Clip(strings.TrimSpace(events.Clean(e.Reason)), maxReasonBytes)
	return e
}

func cleanList(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x = events.Clip(strings.TrimSpace(events.Clean(x)), maxCaveatBytes); x != "" && len(out) < maxCaveats {
			out = append(out, x)
		}
	}
	return out
}

func cleanSources(ss []events.VerdictSourceV1) []events.VerdictSourceV1 {
	out := make([]events.VerdictSourceV1, 0, len(ss))
	for _, s := range ss {
		if len(out) == maxPostSources {
			break
		}
		s.URL, s.Title, s.Domain = events.Clip(events.Clean(s.URL), maxURLBytes), events.Clip(events.Clean(s.Title), maxTitleBytes), events.Clip(events.Clean(s.Domain), maxTitleBytes)
		out = append(out, s)
	}
	return out
}

// triageReason is Gate 1's reason, then the model's reason for the kind.
func triageReason(gate, model string) string {
	gate, model = strings.TrimSpace(events.Clean(gate)), strings.TrimSpace(events.Clean(model))
	switch {
	case gate == "":
		return events.Clip(nonEmpty(model, "no reason given"), maxReasonBytes)
	case model == "":
		return events.Clip(gate, maxReasonBytes)
	}
	return events.Clip(gate+" (model: "+model+")", maxReasonBytes)
}
