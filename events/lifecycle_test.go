package events_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// lifecycleSamples are the sample payloads of the run events of an
// investigation (see samples).
func lifecycleSamples(postID, versionHash string) map[string]events.Payload {
	versionID := events.PostVersionID(postID, versionHash)
	invID := events.InvestigationID(versionID)
	priorVersionID := events.PostVersionID(postID, "0000000000000000000000000000000000000000000000000000000000000001")
	priorInvID := events.InvestigationID(priorVersionID)
	ref := events.AttemptRef{InvestigationID: invID, Series: 1, Attempt: 2}
	prompt := events.PromptRefV1{Name: "investigator-update", Version: "v1", SHA256: hashOf("prompt text")}
	content := "# Did Claude 3 Opus align itself?\n\nClaude 3 Opus was released in 2021 and [IMAGE:0] quickly became popular."
	text := "Did Claude 3 Opus align itself? Claude 3 Opus was released in 2021 and quickly became popular."
	source := events.SourceV1{URL: "https://www.anthropic.com/news/claude-3-family", Title: "Introducing the next generation of Claude", Snippet: "Today, we're announcing the Claude 3 model family"}
	correction := events.CorrectionV1{
		Text:      "Claude 3 Opus was released in 2021",
		Context:   "Did Claude 3 Opus align itself? Claude 3 Opus was released in 2021 and quickly became popular.",
		Summary:   "Claude 3 Opus was released in March 2024, not 2021.",
		Reasoning: "Anthropic's announcement is dated 4 March 2024.",
		Sources:   []events.SourceV1{source},
	}
	return map[string]events.Payload{
		events.TypeInvestigationInputSnapshottedV1: &events.InvestigationInputSnapshottedV1{
			InvestigationID: invID, PostID: postID, PostVersionID: versionID,
			Platform: events.PlatformLessWrong, URL: "https://www.lesswrong.com/posts/ioZxrP7BhS5ArK59w/did-claude-3-opus-align-itself",
			Provenance: events.ProvenanceServerVerified, Format: events.InputFormatMarkdown,
			MarkdownSource: events.MarkdownSourceServerHTML, RendererVersion: "1.2.0",
			Content: content, ContentSHA256: hashOf(content), Text: text, TextSHA256: hashOf(text), WordCount: 16,
			Images: []events.SnapshotImageV1{{
				SourceURL: "https://res.cloudinary.com/lesswrong-2-0/image/upload/a.png", SHA256: hashOf("png"),
				MediaType: "image/png", Bytes: 2048, BlobKey: "images/" + hashOf("png") + ".png", Placeholder: 0, TextOffset: 70,
			}},
			SkippedImages: []events.SkippedImageV1{{URL: "https://example.com/b.svg", Reason: "unsupported image type"}},
			Update: &events.UpdateBasisV1{
				PriorInvestigationID: priorInvID, PriorPostVersionID: priorVersionID,
				PriorClaims: []events.ClaimV1{{ID: events.ClaimID(priorInvID, 0), Text: correction.Text, Context: correction.Context,
					Summary: correction.Summary, Reasoning: correction.Reasoning, Sources: correction.Sources}},
				Diff: "  Claude 3 Opus was released in 2021\n- and nobody noticed.\n+ and quickly became popular.",
			},
		},
		events.TypeInvestigationAttemptStartedV1: &events.InvestigationAttemptStartedV1{
			AttemptRef: ref, Worker: "worker-1", Prompt: prompt, Provider: "openai-responses", Model: "gpt-5",
			Instructions: "You are a fact-checker working for Errata.",
			Tools: []events.ToolDefinitionV1{{Name: "retain_correction", Description: "Keep a correction.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)}},
			WebSearch: "NATIVE", RoundCap: 24, Credential: events.CredentialUser,
			InputEventID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f71",
		},
		events.TypeInvestigationExchangeRecordedV1: &events.InvestigationExchangeRecordedV1{
			AttemptRef: ref, Stage: events.StageInvestigator, Round: 1, Prompt: prompt,
			Provider: "openai-responses", Model: "gpt-5-2025-08-07", HTTPStatus: 200, RequestID: "req_123", DurationMS: 5321,
			RawRequest:  json.RawMessage(`{"model":"gpt-5","input":[{"role":"user","content":[{"type":"input_image","image_url":"blob:images/a.png"}]}]}`),
			RawResponse: `{"id":"resp_1","status":"completed","output":[]}`,
			Response:    json.RawMessage(`{"provider":"openai-responses","id":"resp_1","status":"completed","output":[]}`),
			ToolResults: []events.ToolResultV1{{CallID: "call_1", Name: "fetch_url", Output: `{"status":200,"text":"Claude 3 family"}`}},
			Usage:       events.UsageV1{InputTokens: 1200, CachedInputTokens: 100, OutputTokens: 300, ReasoningTokens: 200, TotalTokens: 1500},
		},
		events.TypeInvestigationClaimSubmittedV1: &events.InvestigationClaimSubmittedV1{
			AttemptRef: ref, SubmissionID: events.SubmissionID(ref, 0), Seq: 0, CallID: "call_2",
			Disposition: events.DispositionAccepted, Correction: correction,
		},
		events.TypeInvestigationClaimRetainedV1: &events.InvestigationClaimRetainedV1{
			AttemptRef: ref, PriorClaimID: events.ClaimID(priorInvID, 0), CallID: "call_3", Disposition: events.DispositionAccepted,
		},
		events.TypeInvestigationClaimValidatedV1: &events.InvestigationClaimValidatedV1{
			AttemptRef: ref, SubmissionID: events.SubmissionID(ref, 0), Outcome: events.ValidationApproved,
			Reason: "The announcement is dated March 2024.", Prompt: events.PromptRefV1{Name: "validator", Version: "v1", SHA256: hashOf("validator")},
			Provider: "openai-responses", Model: "gpt-5", Tries: 1,
		},
		events.TypeInvestigationClaimAssessedV1: &events.InvestigationClaimAssessedV1{
			AttemptRef: ref, SubmissionID: events.SubmissionID(ref, 0), Causal: false,
			Queries: []events.EvidenceQueryV1{{Query: "Claude 3 Opus release date", Kind: "keyword", Results: 5},
				{Query: "Anthropic Claude 3 announcement", Kind: "keyword", Error: "search provider answered 503"}},
			Sources: []events.AssessedSourceV1{{URL: "https://anthropic.com/news/claude-3-family", Domain: "anthropic.com", Tier: 1,
				Rule: "exact:anthropic.com", Title: source.Title, Snippet: source.Snippet, PublishedAt: "2024-03-04T00:00:00Z",
				Origin: "investigator", Entail: 0.02, Contradict: 0.93, Neutral: 0.05, Num: "mismatch", Recency: 0.8}},
			Dropped:        []events.DroppedSourceV1{{URL: "https://localhost./x", Origin: "search", Reason: "host has no public suffix"}},
			StanceProvider: "openai-responses", StanceModel: "gpt-5-mini",
			StancePrompt: &events.PromptRefV1{Name: "stance", Version: "v1", SHA256: hashOf("stance")},
			EMax:         0.02, EMean3: 0.02, CMax: 0.93, AgreeDom: 0, RelAvg: 0.95, RecMax: 0.8, NumOK: 0,
			Raw: 0.0655, Score: 6, Verdict: events.EvidenceRefuted,
			Gate4: "INSUFFICIENT", Gate4Sources: 1, Gate4Quality: 0.95, Gate4Agreement: 1,
			RegistryVersion: "starter-v1@0123456789ab", PolicyVersion: "strict-v1@0123456789ab", PublishMode: "strict",
			Published: false, Reason: "gate4_below_minimum", Failed: []string{"gate4_below_minimum"},
		},
		events.TypeInvestigationAttemptFailedV1: &events.InvestigationAttemptFailedV1{
			AttemptRef: ref, Class: events.FailureTransient, Kind: "rate_limited", Message: "429 rate limited",
			RetryAt: "2026-11-22T10:30:20.123456Z",
		},
		events.TypeInvestigationStageOneFinishedV1: &events.InvestigationStageOneFinishedV1{
			AttemptRef: ref, Rounds: 3, Submissions: 2, Accepted: 1, Retained: 1, FinalText: "Retained 1, submitted 2.",
		},
		events.TypeInvestigationKeyAttachedV1: &events.InvestigationKeyAttachedV1{
			InvestigationID: invID, KeyID: "k1", ExpiresAt: "2026-11-22T10:45:00Z",
		},
	}
}

func TestLifecycleEventsRejectBadPayloads(t *testing.T) {
	postID := events.PostID(events.PlatformLessWrong, "x")
	versionID := events.PostVersionID(postID, hashOf("v"))
	ref := events.AttemptRef{InvestigationID: events.InvestigationID(versionID), Series: 1, Attempt: 1}
	cases := map[string]events.Payload{
		"attempt zero": &events.InvestigationAttemptFailedV1{AttemptRef: events.AttemptRef{InvestigationID: ref.InvestigationID, Series: 1},
			Class: events.FailureTransient, Kind: "k", Message: "m"},
		"unknown class":         &events.InvestigationAttemptFailedV1{AttemptRef: ref, Class: "MAYBE", Kind: "k", Message: "m"},
		"bad retry_at":          &events.InvestigationAttemptFailedV1{AttemptRef: ref, Class: events.FailureTransient, Kind: "k", Message: "m", RetryAt: "soon"},
		"submission id forged":  &events.InvestigationClaimSubmittedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, 1), Seq: 0, Disposition: events.DispositionNotVerbatim},
		"accepted without text": &events.InvestigationClaimSubmittedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, 0), Disposition: events.DispositionAccepted},
		"validator exchange without claim": &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: events.StageValidator, Round: 1,
			Prompt: events.PromptRefV1{Name: "validator", Version: "v1", SHA256: hashOf("x")}, Provider: "p", Model: "m",
			RawRequest: json.RawMessage(`{}`), ToolResults: []events.ToolResultV1{}},
		"assessor exchange without claim": &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: events.StageAssessor, Round: 1,
			Prompt: events.PromptRefV1{Name: "stance", Version: "v1", SHA256: hashOf("x")}, Provider: "p", Model: "m",
			RawRequest: json.RawMessage(`{}`), ToolResults: []events.ToolResultV1{}},
		"snapshot hash mismatch": &events.InvestigationInputSnapshottedV1{InvestigationID: ref.InvestigationID, PostID: postID, PostVersionID: versionID,
			Platform: events.PlatformLessWrong, Provenance: events.ProvenanceServerVerified, Format: events.InputFormatText,
			MarkdownSource: events.MarkdownSourceNone, Content: "a", ContentSHA256: hashOf("b"), Text: "a", TextSHA256: hashOf("a"),
			Images: []events.SnapshotImageV1{}, SkippedImages: []events.SkippedImageV1{}},
		"accepted more than submitted": &events.InvestigationStageOneFinishedV1{AttemptRef: ref, Rounds: 1, Submissions: 1, Accepted: 2},
	}
	for name, p := range cases {
		t.Run(name, func(t *testing.T) { require.Error(t, p.Validate()) })
	}
}
