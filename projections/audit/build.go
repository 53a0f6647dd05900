package audit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/errata-dev/errata/events"
)

// Build folds the events of one investigation, in log order, into its
// trail; post is the registration facts of its version (FoldPostVersion),
// nil when unknown. Records of other investigations are ignored, and a
// record whose event id was already seen (an append retried by its
// producer) counts once. Build is pure: the same records give the same
// trail.
func Build(investigationID string, recs []Record, post *PostVersion) (*Trail, error) {
	t := &Trail{InvestigationID: investigationID, PostVersion: post, SupersededBy: []string{},
		Configuration: Configuration{Name: events.DefaultConfigurationName},
		Requests:      []Request{}, UserKeys: []UserKey{}, Attempts: []*Attempt{}, Failures: []Failure{}}
	b := builder{t: t, attempts: map[attemptKey]*Attempt{}, submissions: map[string]*Submission{},
		pendingExchanges: map[string][]*Exchange{}, pendingAttempt: map[string]*Attempt{}}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Event.Subject != investigationID || seen[r.Event.ID] {
			continue
		}
		seen[r.Event.ID] = true
		t.Steps++
		if err := b.apply(r); err != nil {
			return nil, fmt.Errorf("%s %s at %s: %w", r.Event.Type(), r.Event.ID, r.Position, err)
		}
	}
	if t.Steps == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, investigationID)
	}
	// Validator and assessor exchanges of a submission the trail never
	// saw (not expected: a submission precedes its validation) stay
	// visible among their attempt's exchanges, in log order of their
	// submission ids.
	for _, id := range b.pendingOrder {
		if xs, ok := b.pendingExchanges[id]; ok {
			a := b.pendingAttempt[id]
			a.Exchanges = append(a.Exchanges, xs...)
		}
	}
	for _, a := range t.Attempts {
		for _, s := range a.Submissions {
			a.Usage.add(sumUsage(s.Exchanges))
			a.Usage.add(sumUsage(s.AssessorExchanges))
		}
		a.Usage.add(sumUsage(a.Exchanges))
		t.Usage.add(a.Usage)
	}
	return t, nil
}

// configurationOf names the configuration a request recorded.
func configurationOf(id string, spec *events.AnalysisConfigurationV1) Configuration {
	c := Configuration{ID: id, Spec: spec}
	switch {
	case spec != nil:
		c.Name = spec.Name
	case id == events.DefaultConfigurationID:
		c.Name = events.DefaultConfigurationName
	}
	return c
}

type attemptKey struct{ series, attempt int }

type builder struct {
	t           *Trail
	attempts    map[attemptKey]*Attempt
	submissions map[string]*Submission
	// pendingExchanges are validator and assessor exchanges read before
	// their submission, by submission id.
	pendingExchanges map[string][]*Exchange
	pendingAttempt   map[string]*Attempt
	pendingOrder     []string
}

func (b *builder) attempt(ref events.AttemptRef) *Attempt {
	k := attemptKey{ref.Series, ref.Attempt}
	if a, ok := b.attempts[k]; ok {
		return a
	}
	a := &Attempt{Series: ref.Series, Attempt: ref.Attempt, Tools: []Tool{}, Exchanges: []*Exchange{},
		Submissions: []*Submission{}, Retains: []Retain{}}
	b.attempts[k] = a
	b.t.Attempts = append(b.t.Attempts, a)
	return a
}

// submission is the submission id names; a decision on one the trail has
// not seen (not expected: a submission precedes its validation and
// assessment) gets a placeholder, so that no decision is dropped.
func (b *builder) submission(ref events.AttemptRef, id string, step Step) *Submission {
	if s := b.submissions[id]; s != nil {
		return s
	}
	s := &Submission{Step: step, SubmissionID: id, Disposition: "UNKNOWN", Exchanges: []*Exchange{}, AssessorExchanges: []*Exchange{}}
	b.submissions[id] = s
	a := b.attempt(ref)
	a.Submissions = append(a.Submissions, s)
	return s
}

// perSubmission reports whether an exchange of stage belongs under its
// submission: the validator's, and the assessor's stance exchanges.
func perSubmission(stage string) bool {
	return stage == events.StageValidator || stage == events.StageAssessor
}

// attach puts an exchange under its submission by stage.
func (s *Submission) attach(x *Exchange) {
	if x.Stage == events.StageAssessor {
		s.AssessorExchanges = append(s.AssessorExchanges, x)
		return
	}
	s.Exchanges = append(s.Exchanges, x)
}

func (b *builder) identify(postID, postVersionID, platform, externalID string) {
	t := b.t
	if t.PostVersionID == "" {
		t.PostID, t.PostVersionID, t.Platform = postID, postVersionID, platform
	}
	if t.ExternalID == "" {
		t.ExternalID = externalID
	}
}

func (b *builder) apply(r Record) error {
	t := b.t
	step := stepOf(r)
	switch p := r.Event.Payload.(type) {
	case *events.InvestigationRequestedV1:
		b.identify(p.PostID, p.PostVersionID, p.Platform, p.ExternalID)
		t.Requests = append(t.Requests, Request{Step: step, Source: p.Source, RequesterKey: p.RequesterKey,
			UniqueViewScore: p.UniqueViewScore, VersionHash: p.VersionHash, ConfigurationID: p.ConfigurationID,
			Supersedes: p.Supersedes, ExperimentID: p.ExperimentID, Arm: p.Arm})
		if len(t.Requests) == 1 {
			// The first request decided; a repeated one names the same
			// investigation, so the same configuration.
			t.Configuration = configurationOf(p.ConfigurationID, p.Configuration)
			t.Supersedes, t.ExperimentID, t.Arm = p.Supersedes, p.ExperimentID, p.Arm
		}
		if t.Status == "" || (t.Status == events.StatusFailed && p.Source == events.RequestSourceInvestigateNow) {
			t.Status = events.StatusPending
		}
	case *events.InvestigationKeyAttachedV1:
		t.UserKeys = append(t.UserKeys, UserKey{Step: step, KeyRingID: p.KeyID, ExpiresAt: p.ExpiresAt})
	case *events.InvestigationInputSnapshottedV1:
		b.identify(p.PostID, p.PostVersionID, p.Platform, "")
		in := &Input{Step: step, PostVersionID: p.PostVersionID, URL: p.URL, Provenance: p.Provenance, Format: p.Format,
			MarkdownSource: p.MarkdownSource, RendererVersion: p.RendererVersion, ContentSHA256: p.ContentSHA256,
			TextSHA256: p.TextSHA256, WordCount: p.WordCount, Images: []Image{}, SkippedImages: []SkippedImage{},
			Content: p.Content, Text: p.Text}
		for _, im := range p.Images {
			in.Images = append(in.Images, Image(im))
		}
		for _, s := range p.SkippedImages {
			in.SkippedImages = append(in.SkippedImages, SkippedImage(s))
		}
		if u := p.Update; u != nil {
			in.Update = &UpdateBasis{PriorInvestigationID: u.PriorInvestigationID, PriorPostVersionID: u.PriorPostVersionID,
				PriorClaims: claimsOf(u.PriorClaims), Diff: u.Diff}
		}
		t.Input = in
	case *events.InvestigationAttemptStartedV1:
		a := b.attempt(p.AttemptRef)
		a.Started = &step
		a.Worker, a.Prompt, a.Provider, a.Model = p.Worker, promptOf(p.Prompt), p.Provider, p.Model
		a.Instructions, a.WebSearch, a.RoundCap, a.Credential, a.InputEventID = p.Instructions, p.WebSearch, p.RoundCap, p.Credential, p.InputEventID
		a.Tools = make([]Tool, 0, len(p.Tools))
		for _, tool := range p.Tools {
			a.Tools = append(a.Tools, Tool(tool))
		}
		t.Status = events.StatusProcessing
	case *events.InvestigationExchangeRecordedV1:
		ex, err := exchangeOf(step, p)
		if err != nil {
			return err
		}
		a := b.attempt(p.AttemptRef)
		switch {
		case !perSubmission(p.Stage) || p.SubmissionID == "":
			a.Exchanges = append(a.Exchanges, ex)
		case b.submissions[p.SubmissionID] != nil:
			b.submissions[p.SubmissionID].attach(ex)
		default:
			if _, ok := b.pendingExchanges[p.SubmissionID]; !ok {
				b.pendingOrder = append(b.pendingOrder, p.SubmissionID)
				b.pendingAttempt[p.SubmissionID] = a
			}
			b.pendingExchanges[p.SubmissionID] = append(b.pendingExchanges[p.SubmissionID], ex)
		}
	case *events.InvestigationClaimSubmittedV1:
		a := b.attempt(p.AttemptRef)
		c := p.Correction
		s := &Submission{Step: step, SubmissionID: p.SubmissionID, Seq: p.Seq, CallID: p.CallID, Disposition: p.Disposition,
			Correction: Correction{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: sourcesOf(c.Sources)},
			Exchanges:  []*Exchange{}, AssessorExchanges: []*Exchange{}}
		for _, x := range b.pendingExchanges[p.SubmissionID] {
			s.attach(x)
		}
		delete(b.pendingExchanges, p.SubmissionID)
		b.submissions[p.SubmissionID] = s
		a.Submissions = append(a.Submissions, s)
	case *events.InvestigationClaimRetainedV1:
		a := b.attempt(p.AttemptRef)
		a.Retains = append(a.Retains, Retain{Step: step, PriorClaimID: p.PriorClaimID, CallID: p.CallID, Disposition: p.Disposition})
	case *events.InvestigationClaimValidatedV1:
		v := &Validation{Step: step, Outcome: p.Outcome, Reason: p.Reason, Prompt: promptOf(p.Prompt),
			Provider: p.Provider, Model: p.Model, Tries: p.Tries}
		b.submission(p.AttemptRef, p.SubmissionID, step).Validation = v
	case *events.InvestigationClaimAssessedV1:
		s := b.submission(p.AttemptRef, p.SubmissionID, step)
		if s.Assessment == nil { // the first assessment of a submission is the one that counts
			s.Assessment = assessmentOf(step, p)
		}
	case *events.InvestigationAttemptFailedV1:
		a := b.attempt(p.AttemptRef)
		a.Failure = &AttemptFailure{Step: step, Class: p.Class, Kind: p.Kind, Message: p.Message, RetryAt: p.RetryAt}
		if p.RetryAt != "" {
			t.Status = events.StatusPending
		}
	case *events.InvestigationStageOneFinishedV1:
		a := b.attempt(p.AttemptRef)
		a.StageOne = &StageOneFinished{Step: step, Rounds: p.Rounds, Submissions: p.Submissions, Accepted: p.Accepted,
			Retained: p.Retained, FinalText: p.FinalText, ForcedFinal: p.ForcedFinal}
	case *events.InvestigationCompletedV1:
		b.identify(p.PostID, p.PostVersionID, "", "")
		t.Result = &Result{Step: step, Series: p.Series, Attempt: p.Attempt, Provenance: p.Provenance,
			PromptVersion: p.PromptVersion, Provider: p.Provider, Model: p.Model, Claims: claimsOf(p.Claims)}
		t.Status = events.StatusComplete
	case *events.InvestigationFailedV1:
		b.identify(p.PostID, p.PostVersionID, "", "")
		t.Failures = append(t.Failures, Failure{Step: step, Series: p.Series, Reason: p.Reason, Attempts: p.Attempts})
		t.Status = events.StatusFailed
	default:
		return fmt.Errorf("not an investigation event: %T", p)
	}
	return nil
}

func assessmentOf(step Step, p *events.InvestigationClaimAssessedV1) *Assessment {
	a := &Assessment{Step: step, Verdict: p.Verdict, Score: p.Score, Raw: p.Raw,
		Features:      Features{EMax: p.EMax, EMean3: p.EMean3, CMax: p.CMax, AgreeDom: p.AgreeDom, RelAvg: p.RelAvg, RecMax: p.RecMax, NumOK: p.NumOK},
		Gate4:         Gate4{Level: p.Gate4, Sources: p.Gate4Sources, Quality: p.Gate4Quality, Agreement: p.Gate4Agreement},
		PolicyVersion: p.PolicyVersion, RegistryVersion: p.RegistryVersion, PublishMode: p.PublishMode,
		Published: p.Published, Reason: p.Reason, Failed: append([]string{}, p.Failed...), Causal: p.Causal,
		StanceProvider: p.StanceProvider, StanceModel: p.StanceModel,
		Queries: make([]EvidenceQuery, len(p.Queries)), Sources: make([]AssessedSource, len(p.Sources)), Dropped: make([]DroppedSource, len(p.Dropped))}
	if p.StancePrompt != nil {
		pr := promptOf(*p.StancePrompt)
		a.StancePrompt = &pr
	}
	for i, q := range p.Queries {
		a.Queries[i] = EvidenceQuery(q)
	}
	for i, s := range p.Sources {
		a.Sources[i] = AssessedSource{URL: s.URL, Domain: s.Domain, Tier: s.Tier, Rule: s.Rule, Origin: s.Origin, Title: s.Title,
			Snippet: s.Snippet, PublishedAt: s.PublishedAt, Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral,
			StanceNote: s.StanceNote, Num: s.Num, Recency: s.Recency}
	}
	for i, d := range p.Dropped {
		a.Dropped[i] = DroppedSource(d)
	}
	return a
}

func sourcesOf(in []events.SourceV1) []Source {
	out := make([]Source, len(in))
	for i, s := range in {
		out[i] = Source(s)
	}
	return out
}

func claimsOf(in []events.ClaimV1) []Claim {
	out := make([]Claim, len(in))
	for i, c := range in {
		out[i] = Claim{ID: c.ID, SubmissionID: c.SubmissionID, Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: sourcesOf(c.Sources)}
	}
	return out
}

func sumUsage(xs []*Exchange) Usage {
	var u Usage
	for _, x := range xs {
		u.add(x.Usage)
	}
	return u
}

// normalized is the part of the normalized model response (the
// exchange's "response": consumers/llm.Response as JSON) the trail shows.
// It is read by field name, so this package does not depend on the
// provider code.
type normalized struct {
	ID               string `json:"id"`
	Model            string `json:"model"`
	Status           string `json:"status"`
	IncompleteReason string `json:"incomplete_reason"`
	Output           []struct {
		Type    string `json:"type"`
		Content []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Refusal   string `json:"refusal"`
			Citations []struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"citations"`
		} `json:"content"`
		Summary  []string `json:"summary"`
		ToolCall *struct {
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_call"`
		WebSearch *WebSearch `json:"web_search"`
	} `json:"output"`
	OutputJSON json.RawMessage `json:"output_json"`
}

func exchangeOf(step Step, p *events.InvestigationExchangeRecordedV1) (*Exchange, error) {
	ex := &Exchange{Step: step, Stage: p.Stage, SubmissionID: p.SubmissionID, Round: p.Round, Prompt: promptOf(p.Prompt),
		Provider: p.Provider, Model: p.Model, HTTPStatus: p.HTTPStatus, RequestID: p.RequestID, DurationMS: p.DurationMS,
		ToolCalls: []ToolCall{}, WebSearches: []WebSearch{}, Citations: []Citation{}, ToolResults: []ToolResult{},
		Usage: Usage(p.Usage), RawRequest: string(p.RawRequest), RawResponse: p.RawResponse}
	if ex.RawRequest == "null" {
		ex.RawRequest = ""
	}
	for _, tr := range p.ToolResults {
		ex.ToolResults = append(ex.ToolResults, ToolResult(tr))
	}
	if e := p.Error; e != nil {
		ex.Error = &ExchangeError{Class: e.Class, Kind: e.Kind, StatusCode: e.StatusCode, Code: e.Code, Message: e.Message}
	}
	if len(p.Response) == 0 || string(p.Response) == "null" {
		return ex, nil
	}
	var n normalized
	if err := json.Unmarshal(p.Response, &n); err != nil {
		return nil, fmt.Errorf("normalized response: %w", err)
	}
	ex.ResponseID, ex.ResponseModel, ex.ResponseStatus, ex.IncompleteReason = n.ID, n.Model, n.Status, n.IncompleteReason
	if len(n.OutputJSON) > 0 && string(n.OutputJSON) != "null" {
		ex.OutputJSON = n.OutputJSON
	}
	var texts, refusals []string
	for _, item := range n.Output {
		ex.Reasoning = append(ex.Reasoning, item.Summary...)
		if tc := item.ToolCall; tc != nil {
			ex.ToolCalls = append(ex.ToolCalls, ToolCall{CallID: tc.CallID, Name: tc.Name, Arguments: tc.Arguments})
		}
		if ws := item.WebSearch; ws != nil {
			ex.WebSearches = append(ex.WebSearches, *ws)
		}
		for _, c := range item.Content {
			if c.Text != "" {
				texts = append(texts, c.Text)
			}
			if c.Refusal != "" {
				refusals = append(refusals, c.Refusal)
			}
			for _, ci := range c.Citations {
				ex.Citations = append(ex.Citations, Citation{URL: ci.URL, Title: ci.Title})
			}
		}
	}
	ex.Text = strings.Join(texts, "\n\n")
	ex.Refusal = strings.Join(refusals, "\n\n")
	return ex, nil
}

// FoldPostVersion folds the posts-topic records of one post, in log order,
// into the registration facts of postVersionID; nil when the version was
// never registered. A fold can be continued: Add applies more records.
func FoldPostVersion(postVersionID string, recs []Record) *PostVersion {
	pv := &PostVersion{PostVersionID: postVersionID, Anomalies: []Anomaly{}}
	for _, r := range recs {
		pv.Add(r)
	}
	if pv.Registrations == 0 {
		return nil
	}
	return pv
}

// Add applies one posts-topic record to the facts (records of other
// versions and types change nothing).
func (pv *PostVersion) Add(r Record) {
	switch p := r.Event.Payload.(type) {
	case *events.PostVersionRegisteredV1:
		if p.PostVersionID != pv.PostVersionID {
			return
		}
		if pv.Registrations == 0 {
			pv.PostID, pv.Platform, pv.ExternalID, pv.URL = p.PostID, p.Platform, p.ExternalID, p.URL
			pv.VersionHash, pv.ContentHash, pv.OccurrencesHash, pv.WordCount = p.VersionHash, p.ContentHash, p.OccurrencesHash, p.WordCount
			pv.FirstProvenance, pv.ServerFetchError, pv.FirstRegistered = p.Provenance, p.ServerFetchError, stepOf(r)
		}
		pv.Registrations++
		if p.Provenance == events.ProvenanceServerVerified && pv.ServerVerified == nil {
			s := stepOf(r)
			pv.ServerVerified = &s
		}
	case *events.PostIntegrityAnomalyRecordedV1:
		if p.PostVersionID != pv.PostVersionID {
			return
		}
		pv.Anomalies = append(pv.Anomalies, Anomaly{Step: stepOf(r), Kind: p.Kind, Field: p.Field,
			ObservedValue: p.ObservedValue, ServerValue: p.ServerValue})
	}
}
