// Package audittest builds the events of realistic investigations for the
// audit tests: a complete run with a transient failure, a retry, native web
// search, two submissions (one accepted and approved, one not verbatim) and
// a published claim; and a pending one. Ids and times derive from the
// fixture's name, so goldens are stable.
package audittest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

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

// Fixture is the events of one investigation and of its post.
type Fixture struct {
	InvestigationID string
	PostID          string
	PostVersionID   string
	// Posts are registrations, an anomaly and views of the post (posts topic).
	Posts []events.Event
	// Investigation is the investigation's events in log order.
	Investigation []events.Event
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
)

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
	round1 := map[string]any{"provider": "openai-responses", "id": "resp_2_1", "model": "gpt-5-2025-08-07", "status": "completed",
		"output": []any{
			map[string]any{"type": "reasoning", "summary": []string{"Check the completion date of the Eiffel Tower."}},
			map[string]any{"type": "web_search_call", "web_search": map[string]any{"status": "completed", "action": "search",
				"query": "Eiffel Tower completion year", "sources": []string{"https://www.toureiffel.paris/en/the-monument/history"}}},
			map[string]any{"type": "function_call", "tool_call": map[string]any{"call_id": "call_a", "name": "submit_correction",
				"arguments": string(mustJSON(correction))}},
			map[string]any{"type": "function_call", "tool_call": map[string]any{"call_id": "call_b", "name": "submit_correction",
				"arguments": string(mustJSON(notVerbatim))}},
		},
		"usage": map[string]any{"input_tokens": 1800, "cached_input_tokens": 0, "output_tokens": 420, "reasoning_tokens": 256, "total_tokens": 2220}}
	ex21 := exchange(a2, 1, 200, round1, `{"id":"resp_2_1","status":"completed"}`,
		events.UsageV1{InputTokens: 1800, OutputTokens: 420, ReasoningTokens: 256, TotalTokens: 2220})
	ex21.ToolResults = []events.ToolResultV1{
		{CallID: "call_a", Name: "submit_correction", Output: `{"status":"accepted"}`},
		{CallID: "call_b", Name: "submit_correction", Output: `{"status":"rejected","message":"text is not verbatim in the post"}`},
	}
	e21 := s.next(ex21, st2.ID)
	sub0 := s.next(&events.InvestigationClaimSubmittedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 0), Seq: 0, CallID: "call_a",
		Disposition: events.DispositionAccepted, Correction: correction}, e21.ID)
	sub1 := s.next(&events.InvestigationClaimSubmittedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 1), Seq: 1, CallID: "call_b",
		Disposition: events.DispositionNotVerbatim, Correction: notVerbatim}, e21.ID)
	verdict := `{"approved":true,"reason":"The tower opened in 1889 for the Exposition Universelle."}`
	vex := s.next(&events.InvestigationExchangeRecordedV1{AttemptRef: a2, Stage: events.StageValidator, SubmissionID: events.SubmissionID(a2, 0),
		Round: 1, Prompt: validatorPrompt, Provider: "openai-responses", Model: "gpt-5-mini", HTTPStatus: 200, RequestID: "req_v_1", DurationMS: 700,
		RawRequest: mustJSON(map[string]any{"model": "gpt-5-mini", "text": map[string]any{"format": "json_schema"}}), RawResponse: `{"id":"resp_v_1"}`,
		Response: mustJSON(map[string]any{"provider": "openai-responses", "id": "resp_v_1", "model": "gpt-5-mini", "status": "completed",
			"output":      []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "text", "text": verdict}}}},
			"output_json": json.RawMessage(verdict)}),
		ToolResults: []events.ToolResultV1{}, Usage: events.UsageV1{InputTokens: 900, OutputTokens: 60, TotalTokens: 960}}, sub0.ID)
	val := s.next(&events.InvestigationClaimValidatedV1{AttemptRef: a2, SubmissionID: events.SubmissionID(a2, 0), Outcome: events.ValidationApproved,
		Reason: "The tower opened in 1889 for the Exposition Universelle.", Prompt: validatorPrompt, Provider: "openai-responses",
		Model: "gpt-5-mini", Tries: 1}, vex.ID)
	round2 := map[string]any{"provider": "openai-responses", "id": "resp_2_2", "model": "gpt-5-2025-08-07", "status": "completed",
		"output": []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "text", "text": "One claim submitted.",
			"citations": []any{map[string]any{"url": "https://www.toureiffel.paris/en/the-monument/history", "title": "History", "start_index": 0, "end_index": 3}}}}}}}
	e22 := s.next(exchange(a2, 2, 200, round2, `{"id":"resp_2_2","status":"completed"}`,
		events.UsageV1{InputTokens: 2400, CachedInputTokens: 1800, OutputTokens: 30, TotalTokens: 2430}), e21.ID)
	fin := s.next(&events.InvestigationStageOneFinishedV1{AttemptRef: a2, Rounds: 2, Submissions: 2, Accepted: 1, FinalText: "One claim submitted."}, e22.ID)
	done := s.next(&events.InvestigationCompletedV1{InvestigationID: inv, PostID: r.PostID, PostVersionID: r.PostVersionID,
		Provenance: r.Provenance, PromptVersion: "investigator/v3", Provider: "openai-responses", Model: "gpt-5",
		Claims: []events.ClaimV1{{ID: events.ClaimID(inv, 0), Text: correction.Text, Context: correction.Context, Summary: correction.Summary,
			Reasoning: correction.Reasoning, Sources: correction.Sources}}, Series: 1, Attempt: 2}, val.ID)
	f.Investigation = append(f.Investigation, st2, e21, sub0, sub1, vex, val, e22, fin, done)
	return f
}
