// Package audittest builds the events of realistic investigations for the
// audit tests: a complete run with a transient failure, a retry, native web
// search, three submissions (two accepted and approved, one not verbatim),
// the evidence engine's assessment of both approved ones (one published,
// one withheld) and the published claim; and a pending one. Ids and times
// derive from the fixture's name, so goldens are stable.
package audittest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/events"
)

// Start is the time of a fixture's first event.
var Start = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// UserKey is the user's OpenAI key of the complete fixture. It is never in
// any event; tests check that no rendering contains it.
const UserKey = "sk-user-0123456789abcdefSECRET"

// RequesterKey is the keyed hash of the investigateNow caller.
var RequesterKey = hash("requester")

// Post is the post the fixture investigates.
const postText = "Fun fact: the Eiffel Tower was completed in 1925, long after the World's Fair it was built for."

// Claim is the claim the complete fixture publishes.
const Claim = "the Eiffel Tower was completed in 1925"

// WithheldClaim is the claim the validator approves and the evidence
// engine withholds: the only source contradicting it is a blog.
const WithheldClaim = "long after the World's Fair it was built for"

// WithheldFailed are the reasons the withheld claim fails the publish
// rule, first one first.
var WithheldFailed = []string{evidence.ReasonNoAuthority, evidence.ReasonGateBelowMinimum}

// Fixture is the events of one investigation and of its post.
type Fixture struct {
	InvestigationID string
	PostID          string
	PostVersionID   string
	// Posts are registrations, an anomaly and views of the post (posts topic).
	Posts []events.Event
	// Investigation is the investigation's events in log order.
	Investigation []events.Event
	// Control is analysis control events the investigation needs before it
	// (a configuration's declaration), empty for the default configuration.
	Control []events.Event
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

type seq struct {
	name string
	n    int
	at   time.Time
	reg  *events.Registry
}

func (s *seq) next(p events.Payload, causation string) events.Event {
	s.n++
	s.at = s.at.Add(1500 * time.Millisecond)
	ev, err := s.reg.New(p, events.Meta{
		ID:            uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("audittest/%s/%d", s.name, s.n))).String(),
		Time:          s.at,
		CorrelationID: "req-" + s.name,
		CausationID:   causation,
	})
	if err != nil {
		panic(fmt.Sprintf("audittest: %v", err))
	}
	return ev
}

// registration is an X post version of text as externalID.
func registration(externalID, provenance string) *events.PostVersionRegisteredV1 {
	postID := events.PostID(events.PlatformX, externalID)
	vh := hash("version:" + postText)
	return &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, vh), Platform: events.PlatformX, ExternalID: externalID,
		URL: "https://x.com/someone/status/" + externalID, VersionHash: vh, ContentHash: hash(postText),
		OccurrencesHash: hash("occurrences:none"), ContentText: postText, WordCount: 17, Provenance: provenance,
		ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
		X: &events.XMetaV1{TweetID: externalID, Text: postText, AuthorHandle: "someone", MediaURLs: []string{}},
	}
}

func base(name, externalID string) (*seq, *Fixture, *events.PostVersionRegisteredV1) {
	s := &seq{name: name, at: Start, reg: events.NewCatalogRegistry()}
	r := registration(externalID, events.ProvenanceClientFallback)
	r.ServerFetchError = "X posts cannot be verified server-side" // producers/ingest's text
	f := &Fixture{PostID: r.PostID, PostVersionID: r.PostVersionID, InvestigationID: events.InvestigationID(r.PostVersionID)}
	first := s.next(r, "")
	f.Posts = append(f.Posts, first,
		s.next(&events.PostViewRecordedV2{PostID: r.PostID, PostVersionID: r.PostVersionID, Platform: r.Platform, ExternalID: externalID,
			ViewerKey: hash("viewer"), ViewerKind: events.ViewerAnonymousSession, IPRangeKey: hash("range")}, ""),
		s.next(r, ""))
	return s, f, r
}

// Pending is an investigation that was requested and snapshotted and has
// not started.
func Pending(name, externalID string) *Fixture {
	s, f, r := base(name, externalID)
	req := s.next(&events.InvestigationRequestedV1{InvestigationID: f.InvestigationID, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceSelector, UniqueViewScore: 3}, "")
	f.Investigation = append(f.Investigation, req, s.next(snapshot(f, r), req.ID))
	return f
}

func snapshot(f *Fixture, r *events.PostVersionRegisteredV1) *events.InvestigationInputSnapshottedV1 {
	return &events.InvestigationInputSnapshottedV1{InvestigationID: f.InvestigationID, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, URL: r.URL, Provenance: r.Provenance, Format: events.InputFormatText, MarkdownSource: events.MarkdownSourceNone,
		Content: postText, ContentSHA256: hash(postText), Text: postText, TextSHA256: hash(postText), WordCount: r.WordCount,
		Images: []events.SnapshotImageV1{}, SkippedImages: []events.SkippedImageV1{{URL: "https://pbs.twimg.com/media/a.svg", Reason: "not a JPEG, PNG, GIF or WebP image"}}}
}

var (
	investigatorPrompt = events.PromptRefV1{Name: "investigator", Version: "v3", SHA256: hash("investigator prompt v3")}
	validatorPrompt    = events.PromptRefV1{Name: "validator", Version: "v2", SHA256: hash("validator prompt v2")}
	stancePrompt       = events.PromptRefV1{Name: "stance", Version: "v1", SHA256: hash("stance prompt v1")}
)

// RegistryVersion is the source registry version the assessments record.
const RegistryVersion = "starter-v1@5ca1ab1e0000"

// passage is one source of an assessment: the engine's view of it and the
// part only the event records.
type passage struct {
	evidence.Passage
	note string
}

// Assessed is the claim_assessed event of an approved submission, judged
// by the engine's default (strict) policy from the passages, as the
// worker's assessor records it.
func Assessed(ref events.AttemptRef, submissionID string, queries []events.EvidenceQueryV1, dropped []events.DroppedSourceV1, ps ...passage) *events.InvestigationClaimAssessedV1 {
	pol := evidence.DefaultPolicy()
	in := make([]evidence.Passage, len(ps))
	srcs := make([]events.AssessedSourceV1, len(ps))
	for i, p := range ps {
		in[i] = p.Passage
		src := events.AssessedSourceV1{URL: p.URL, Domain: p.Domain, Tier: p.Tier, Rule: p.Rule, Title: p.Title, Snippet: p.Snippet,
			Origin: p.Origin, Entail: p.Stance.Entail, Contradict: p.Stance.Contradict, Neutral: p.Stance.Neutral,
			StanceNote: p.note, Num: string(p.Num), Recency: p.Recency}
		if !p.PublishedAt.IsZero() {
			src.PublishedAt = p.PublishedAt.Format(time.RFC3339)
		}
		srcs[i] = src
	}
	a := pol.Assess(true, in)
	f := a.Features
	return &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: submissionID, Queries: queries, Sources: srcs, Dropped: dropped,
		StanceProvider: "openai-responses", StanceModel: "gpt-5-mini", StancePrompt: &stancePrompt,
		EMax: f.EMax, EMean3: f.EMean3, CMax: f.CMax, AgreeDom: f.AgreeDom, RelAvg: f.RelAvg, RecMax: f.RecMax, NumOK: f.NumOK,
		Raw: a.Raw, Score: a.Score, Verdict: a.Verdict, Gate4: a.Gate.Level, Gate4Sources: a.Gate.Sources, Gate4Quality: a.Gate.Quality,
		Gate4Agreement: a.Gate.Agreement, RegistryVersion: RegistryVersion, PolicyVersion: a.PolicyVersion, PublishMode: pol.PublishMode(),
		Published: a.Decision.Publish, Reason: a.Decision.Reason, Failed: append([]string{}, a.Decision.Failed...)}
}

// stanceExchange is the stance exchange of an assessment: one batch,
// judged at the first try.
func stanceExchange(ref events.AttemptRef, submissionID string, usage events.UsageV1, ps ...passage) *events.InvestigationExchangeRecordedV1 {
	var js []map[string]any
	for i, p := range ps {
		if p.note == "" {
			js = append(js, map[string]any{"index": i + 1, "entail": p.Stance.Entail, "contradict": p.Stance.Contradict, "neutral": p.Stance.Neutral})
		}
	}
	answer := mustJSON(map[string]any{"judgements": js})
	return &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: events.StageAssessor, SubmissionID: submissionID,
		Round: 1, Prompt: stancePrompt, Provider: "openai-responses", Model: "gpt-5-mini", HTTPStatus: 200,
		RequestID: "req_s_" + submissionID[:8], DurationMS: 400,
		RawRequest:  mustJSON(map[string]any{"model": "gpt-5-mini", "text": map[string]any{"format": "json_schema"}, "passages": len(ps)}),
		RawResponse: `{"id":"resp_s_` + submissionID[:8] + `"}`,
		Response: mustJSON(map[string]any{"provider": "openai-responses", "id": "resp_s_" + submissionID[:8], "model": "gpt-5-mini", "status": "completed",
			"output":      []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "text", "text": string(answer)}}}},
			"output_json": answer}),
		ToolResults: []events.ToolResultV1{}, Usage: usage}
}

// The sources of the fixture's assessments.
var (
	tourEiffel = evidence.Passage{URL: "https://www.toureiffel.paris/en/the-monument/history", Domain: "toureiffel.paris", Tier: 3, Rule: "default",
		Title: "History of the Eiffel Tower", Snippet: "The Eiffel Tower was built for the 1889 World's Fair.", Origin: evidence.OriginInvestigator,
		Recency: 0.5}
	britannica = evidence.Passage{URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Domain: "britannica.com", Tier: 2,
		Rule: "exact:britannica.com", Title: "Eiffel Tower", Snippet: "The tower was completed in 1889 for the Exposition Universelle.",
		PublishedAt: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), Origin: evidence.OriginSearch, Recency: 0.8}
	culture = evidence.Passage{URL: "https://www.culture.gouv.fr/en/eiffel-tower", Domain: "culture.gouv.fr", Tier: 1, Rule: "wildcard:*.gouv.fr",
		Title: "La tour Eiffel", Snippet: "Inaugurated on 31 March 1889, two months before the Exposition opened.", Origin: evidence.OriginSearch,
		PublishedAt: time.Date(2024, 3, 31, 0, 0, 0, 0, time.UTC), Recency: 0.7}
	blog = evidence.Passage{URL: "https://someone.blogspot.com/2019/04/eiffel-myths.html", Domain: "someone.blogspot.com", Tier: 4,
		Rule: "parent:blogspot.com", Title: "Eiffel myths", Snippet: "The tower was ready for the fair's opening in May 1889.",
		Origin: evidence.OriginSearch, Recency: 0.5}
	wikipedia = evidence.Passage{URL: "https://en.wikipedia.org/wiki/Eiffel_Tower", Domain: "wikipedia.org", Tier: 2, Rule: "exact:wikipedia.org",
		Title: "Eiffel Tower", Snippet: "The tower was the entrance arch of the 1889 World's Fair.", Origin: evidence.OriginSearch, Recency: 0.5}
)

// with gives a source its stance and numeric check.
func with(p evidence.Passage, e, c, n float64, num evidence.Num) passage {
	p.Stance, p.Num = evidence.Stance{Entail: e, Contradict: c, Neutral: n}, num
	return passage{Passage: p}
}

// BrokeSchema is the stance note of the withheld claim's Wikipedia passage.
const BrokeSchema = "stance answer broke the schema 3 times: judgements[1]: index 3 is not a passage number from 1 to 2"

// QueryError is the error of the withheld claim's second query.
const QueryError = "searxng search: search: provider unavailable: 503 Service Unavailable"

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Complete is a finished investigation (see the package comment), paid
// with a user's key; the post was first registered from the client, then
// server-verified, with a content anomaly.
func Complete(name, externalID string) *Fixture {
	s, f, r := base(name, externalID)
	verified := *r
	verified.Provenance, verified.ServerFetchError = events.ProvenanceServerVerified, ""
	reg2 := s.next(&verified, "")
	f.Posts = append(f.Posts, reg2, s.next(&events.PostIntegrityAnomalyRecordedV1{PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, Kind: events.AnomalyContentMismatch, Field: "content_hash",
		ObservedValue: hash("client text"), ServerValue: r.ContentHash}, reg2.ID))

	inv := f.InvestigationID
	req := s.next(&events.InvestigationRequestedV1{InvestigationID: inv, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Platform: r.Platform, ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceInvestigateNow,
		RequesterKey: RequesterKey}, "")
	key := s.next(&events.InvestigationKeyAttachedV1{InvestigationID: inv, KeyID: "k1", ExpiresAt: "2026-11-22T10:15:00Z"}, req.ID)
	snap := s.next(snapshot(f, r), req.ID)
	f.Investigation = append(f.Investigation, req, key, snap)

	tools := []events.ToolDefinitionV1{
		{Name: "submit_correction", Description: "Submit one incorrect claim with evidence.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		{Name: "fetch_url", Description: "Fetch a web page as text."},
	}
	started := func(attempt int) *events.InvestigationAttemptStartedV1 {
		return &events.InvestigationAttemptStartedV1{AttemptRef: events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: attempt},
			Worker: "worker-a", Prompt: investigatorPrompt, Provider: "openai-responses", Model: "gpt-5",
			Instructions: "You are Errata's investigator.\nFlag only claims that are empirically incorrect.",
			Tools:        tools, WebSearch: "NATIVE", RoundCap: 24, Credential: events.CredentialUser, InputEventID: snap.ID}
	}
	exchange := func(ref events.AttemptRef, round int, status int, response any, raw string, usage events.UsageV1) *events.InvestigationExchangeRecordedV1 {
		return &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: events.StageInvestigator, Round: round,
			Prompt: investigatorPrompt, Provider: "openai-responses", Model: "gpt-5", HTTPStatus: status,
			RequestID: fmt.Sprintf("req_%d_%d", ref.Attempt, round), DurationMS: int64(900 * round),
			RawRequest:  mustJSON(map[string]any{"model": "gpt-5", "input": postText, "round": round}),
			RawResponse: raw, Response: mustJSON(response), ToolResults: []events.ToolResultV1{}, Usage: usage}
	}

	// Attempt 1: rate limited.
	a1 := events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: 1}
	st1 := s.next(started(1), snap.ID)
	ex1 := exchange(a1, 1, 429, nil, `{"error":{"message":"Rate limit reached","type":"requests"}}`, events.UsageV1{})
	ex1.Error = &events.ExchangeErrorV1{Class: events.FailureTransient, Kind: "rate_limited", StatusCode: 429, Code: "rate_limit_exceeded", Message: "Rate limit reached"}
	e1 := s.next(ex1, st1.ID)
	fail1 := s.next(&events.InvestigationAttemptFailedV1{AttemptRef: a1, Class: events.FailureTransient, Kind: "rate_limited",
		Message: "429 Rate limit reached", RetryAt: "2026-11-22T10:00:40Z"}, e1.ID)
	f.Investigation = append(f.Investigation, st1, e1, fail1)

	// Attempt 2: search, two submissions, validation, final answer.
	a2 := events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: 2}
	st2 := s.next(started(2), fail1.ID)
	correction := events.CorrectionV1{Text: Claim, Context: postText, Summary: "The Eiffel Tower was completed in 1889.",
		Reasoning: "It was built for the 1889 Exposition Universelle and opened in March 1889.",
		Sources: []events.SourceV1{{URL: "https://www.toureiffel.paris/en/the-monument/history", Title: "History of the Eiffel Tower",
			Snippet: "The Eiffel Tower was built for the 1889 World's Fair."}}}
	notVerbatim := correction
	notVerbatim.Text = "the tower was finished in 1925"
	withheld := events.CorrectionV1{Text: WithheldClaim, Context: postText, Summary: "It was built for the 1889 World's Fair and ready for it.",
		Reasoning: "The tower opened in March 1889, before the fair.",
		Sources: []events.SourceV1{{URL: "https://www.toureiffel.paris/en/the-monument/history", Title: "History of the Eiffel Tower",
			Snippet: "The Eiffel Tower was built for the 1889 World's Fair."}}}
	round1 := map[string]any{"provider": "openai-responses", "id": "resp_2_1", "model": "gpt-5-2025-08-07", "status": "completed",
		"output": []any{
			map[string]any{"type": "reasoning", "summary": []string{"Check the completion date of the Eiffel Tower."}},
			map[string]any{"type": "web_search_call", "web_search": map[string]any{"status": "completed", "action": "search",
				"query": "Eiffel Tower completion year", "sources": []string{"https://www.toureiffel.paris/en/the-monument/history"}}},
			map[string]any{"type": "function_call", "tool_call": map[string]any{"call_id": "call_a", "name": "submit_correction",
				"arguments": string(mustJSON(correction))}},
			map[string]any{"type": "function_call", "tool_call": map[string]any{"call_id": "call_b", "name": "submit_correction",
				"arguments": string(mustJSON(notVerbatim))}},
			map[string]any{"type": "function_call", "tool_call": map[string]any{"call_id": "call_c", "name": "submit_correction",
				"arguments": string(mustJSON(withheld))}},
		},
		"usage": map[string]any{"input_tokens": 1800, "cached_input_tokens": 0, "output_tokens": 420, "reasoning_tokens": 256, "total_tokens": 2220}}
	ex21 := exchange(a2, 1, 200, round1, `{"id":"resp_2_1","status":"completed"}`,
		events.UsageV1{InputTokens: 1800, OutputTokens: 420, ReasoningTokens: 256, TotalTokens: 2220})
	ex21.ToolResults = []events.ToolResultV1{
		{CallID: "call_a", Name: "submit_correction", Output: `{"status":"accepted"}`},
		{CallID: "call_b", Name: "submit_correction", Output: `{"status":"rejected","message":"text is not verbatim in the post"}`},
		{CallID: "call_c", Name: "submit_correction", Output: `{"status":"accepted"}`},
	}
	e21 := s.next(ex21, st2.ID)
	sub0 := s.next(&events.InvestigationClaimSubmittedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 0), Seq: 0, CallID: "call_a",
		Disposition: events.DispositionAccepted, Correction: correction}, e21.ID)
	sub1 := s.next(&events.InvestigationClaimSubmittedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 1), Seq: 1, CallID: "call_b",
		Disposition: events.DispositionNotVerbatim, Correction: notVerbatim}, e21.ID)
	sub2 := s.next(&events.InvestigationClaimSubmittedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 2), Seq: 2, CallID: "call_c",
		Disposition: events.DispositionAccepted, Correction: withheld}, e21.ID)
	validate := func(seq int, reason string, cause string) (events.Event, events.Event) {
		id := events.SubmissionID(a2, seq)
		verdict := string(mustJSON(map[string]any{"approved": true, "reason": reason}))
		n := fmt.Sprint(seq + 1)
		vex := s.next(&events.InvestigationExchangeRecordedV1{AttemptRef: a2, Stage: events.StageValidator, SubmissionID: id,
			Round: 1, Prompt: validatorPrompt, Provider: "openai-responses", Model: "gpt-5-mini", HTTPStatus: 200, RequestID: "req_v_" + n, DurationMS: 700,
			RawRequest: mustJSON(map[string]any{"model": "gpt-5-mini", "text": map[string]any{"format": "json_schema"}}), RawResponse: `{"id":"resp_v_` + n + `"}`,
			Response: mustJSON(map[string]any{"provider": "openai-responses", "id": "resp_v_" + n, "model": "gpt-5-mini", "status": "completed",
				"output":      []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "text", "text": verdict}}}},
				"output_json": json.RawMessage(verdict)}),
			ToolResults: []events.ToolResultV1{}, Usage: events.UsageV1{InputTokens: 900, OutputTokens: 60, TotalTokens: 960}}, cause)
		val := s.next(&events.InvestigationClaimValidatedV1{AttemptRef: a2, SubmissionID: id, Outcome: events.ValidationApproved,
			Reason: reason, Prompt: validatorPrompt, Provider: "openai-responses", Model: "gpt-5-mini", Tries: 1}, vex.ID)
		return vex, val
	}
	vex, val := validate(0, "The tower opened in 1889 for the Exposition Universelle.", sub0.ID)

	// The engine publishes the first claim: a tier-1 and a tier-2 source
	// contradict it, nothing reliable supports it, Gate 4 is HIGH.
	pub := []passage{with(tourEiffel, 0.03, 0.9, 0.07, evidence.NumMismatch), with(britannica, 0.02, 0.95, 0.03, evidence.NumMismatch),
		with(culture, 0.01, 0.97, 0.02, evidence.NumMismatch)}
	sx0 := s.next(stanceExchange(a2, events.SubmissionID(a2, 0), events.UsageV1{InputTokens: 600, OutputTokens: 90, TotalTokens: 690}, pub...), val.ID)
	as0 := s.next(Assessed(a2, events.SubmissionID(a2, 0),
		[]events.EvidenceQueryV1{{Query: "Eiffel Tower completed 1889", Kind: "keyword", Results: 5},
			{Query: "Eiffel Tower Exposition Universelle opening", Kind: "keyword", Results: 4}},
		[]events.DroppedSourceV1{}, pub...), sx0.ID)

	// It withholds the second: only a blog contradicts it, and a query
	// failed and one passage has no stance.
	vex2, val2 := validate(2, "The tower was ready for the 1889 World's Fair.", sub2.ID)
	held := []passage{with(tourEiffel, 0.05, 0.55, 0.4, ""), with(blog, 0.05, 0.85, 0.1, ""), {Passage: wikipedia, note: BrokeSchema}}
	held[2].Stance = evidence.NeutralStance
	sx2 := s.next(stanceExchange(a2, events.SubmissionID(a2, 2), events.UsageV1{InputTokens: 500, OutputTokens: 70, TotalTokens: 570}, held...), val2.ID)
	as2 := s.next(Assessed(a2, events.SubmissionID(a2, 2),
		[]events.EvidenceQueryV1{{Query: "Eiffel Tower World's Fair 1889 opening", Kind: "keyword", Results: 3},
			{Query: "Eiffel Tower built for Exposition Universelle", Kind: "keyword", Error: QueryError}},
		[]events.DroppedSourceV1{{URL: "https://eiffel.intranet.corp/notes", Origin: evidence.OriginSearch, Reason: `url rejected: no_public_suffix: "eiffel.intranet.corp"`}},
		held...), sx2.ID)
	round2 := map[string]any{"provider": "openai-responses", "id": "resp_2_2", "model": "gpt-5-2025-08-07", "status": "completed",
		"output": []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "text", "text": "One claim submitted.",
			"citations": []any{map[string]any{"url": "https://www.toureiffel.paris/en/the-monument/history", "title": "History", "start_index": 0, "end_index": 3}}}}}}}
	e22 := s.next(exchange(a2, 2, 200, round2, `{"id":"resp_2_2","status":"completed"}`,
		events.UsageV1{InputTokens: 2400, CachedInputTokens: 1800, OutputTokens: 30, TotalTokens: 2430}), e21.ID)
	fin := s.next(&events.InvestigationStageOneFinishedV1{AttemptRef: a2, Rounds: 2, Submissions: 3, Accepted: 2, FinalText: "One claim submitted."}, e22.ID)
	done := s.next(&events.InvestigationCompletedV1{InvestigationID: inv, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Provenance: r.Provenance, PromptVersion: "investigator/v3", Provider: "openai-responses", Model: "gpt-5",
		Claims: []events.ClaimV1{{ID: events.ClaimID(inv, 0), Text: correction.Text, Context: correction.Context, Summary: correction.Summary,
			Reasoning: correction.Reasoning, Sources: correction.Sources, SubmissionID: events.SubmissionID(a2, 0)}}, Series: 1, Attempt: 2}, as2.ID)
	f.Investigation = append(f.Investigation, st2, e21, sub0, sub1, sub2, vex, val, sx0, as0, vex2, val2, sx2, as2, e22, fin, done)
	return f
}
