package events_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// analysisSamples are the sample payloads of a verdict analysis (see samples).
func analysisSamples(postID, versionHash string) map[string]events.Payload {
	versionID := events.PostVersionID(postID, versionHash)
	text := "Claude 3 Opus was released in 2021 and quickly became popular. I think it is the best model."
	sum := hashOf(text)
	id := events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputPost, versionID, sum), events.AnalysisTypeVerdict, "verdict-v1")
	ref := events.AnalysisRef{AnalysisID: id, Attempt: 1}
	claim := events.AnalysisClaimID(id, 1, 0)
	prompt := events.PromptRefV1{Name: "verdict-extract", Version: "v1", SHA256: hashOf("extract")}
	src := events.AssessedSourceV1{URL: "https://anthropic.com/news/claude-3-family", Domain: "anthropic.com", Tier: 3,
		Rule: "default", Title: "Introducing the next generation of Claude", Snippet: "Today, we're announcing the Claude 3 model family",
		PublishedAt: "2024-03-04T00:00:00Z", Origin: "search", Entail: 0.02, Contradict: 0.93, Neutral: 0.05, Num: "mismatch", Recency: 0.8}
	caps := []events.CapV1{{Rule: "single_social_or_blog_source", Cap: 50, Before: 80}}
	return map[string]events.Payload{
		events.TypeAnalysisRequestedV1: &events.AnalysisRequestedV1{AnalysisID: id, AnalysisType: events.AnalysisTypeVerdict,
			PromptVersion: "verdict-v1", InputKind: events.AnalysisInputPost, Platform: events.PlatformLessWrong,
			ExternalID: "ioZxrP7BhS5ArK59w", PostID: postID, PostVersionID: versionID,
			URL: "https://www.lesswrong.com/posts/ioZxrP7BhS5ArK59w/did-claude-3-opus-align-itself", Title: "Did Claude 3 Opus align itself?",
			Text: text, ContentSHA256: sum, Source: events.AnalysisSourceExtension,
			RequesterKey: "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"},
		events.TypeAnalysisAttemptStartedV1: &events.AnalysisAttemptStartedV1{AnalysisRef: ref, Worker: "worker-1",
			Prompts: []events.PromptRefV1{prompt}, Provider: "openai-responses", Model: "gpt-5",
			RegistryVersion: "starter-v1@1db44c3b699b", PolicyVersion: "strict-v1@a176a28a7d06", RubricVersion: "factsocial-v1@0123456789ab"},
		events.TypeAnalysisExchangeRecordedV1: &events.AnalysisExchangeRecordedV1{AnalysisRef: ref, Step: "extract", Seq: 0, Prompt: prompt,
			Provider: "openai-responses", Model: "gpt-5", HTTPStatus: 200, DurationMS: 2100,
			RawRequest: `{"model":"gpt-5"}`, RawResponse: `{"id":"resp_1"}`,
			Usage: events.UsageV1{InputTokens: 900, OutputTokens: 200, TotalTokens: 1100}},
		events.TypeAnalysisClaimExtractedV1: &events.AnalysisClaimExtractedV1{AnalysisRef: ref, ClaimID: claim, Index: 0,
			Text: "Claude 3 Opus was released in 2021", Context: text},
		events.TypeAnalysisClaimTriagedV1: &events.AnalysisClaimTriagedV1{AnalysisRef: ref, ClaimID: claim, Kind: events.TriageFactual,
			Specificity: 0.9, Numeric: true, Researched: true, Reason: "a dated product release"},
		events.TypeAnalysisQueryIssuedV1: &events.AnalysisQueryIssuedV1{AnalysisRef: ref, ClaimID: claim, Query: "Claude 3 Opus release date",
			Kind: "keyword", Results: []events.SearchResultV1{{URL: src.URL, Title: src.Title, Snippet: src.Snippet, PublishedAt: src.PublishedAt}}},
		events.TypeAnalysisSourceAssessedV1: &events.AnalysisSourceAssessedV1{AnalysisRef: ref, ClaimID: claim, Source: src},
		events.TypeAnalysisClaimVerdictV1: &events.AnalysisClaimVerdictV1{AnalysisRef: ref, ClaimID: claim,
			EMax: 0.02, EMean3: 0.02, CMax: 0.93, RelAvg: 0.6, RecMax: 0.8, Score: 5, Verdict: events.EvidenceRefuted, Gate4: "INSUFFICIENT",
			TruthPercent: 8, Confidence: 50, Caps: caps, Label: events.LabelFalse, Band: events.BandFalse,
			Summary: "Claude 3 Opus was released in March 2024."},
		events.TypeAnalysisPostVerdictV1: &events.AnalysisPostVerdictV1{AnalysisRef: ref, TruthPercent: 20, Confidence: 50, Caps: caps,
			Label: events.LabelMisleading, Band: events.BandMostlyFalse, Summary: "The post dates the model's release three years early.",
			Caveats: []string{"One source only."}, Sources: []events.VerdictSourceV1{{URL: src.URL, Title: src.Title, Domain: src.Domain, Tier: 3}},
			Claims: 2},
		events.TypeAnalysisCompletedV1: &events.AnalysisCompletedV1{AnalysisRef: ref, Claims: 2, Researched: 1},
		events.TypeAnalysisFailedV1:    &events.AnalysisFailedV1{AnalysisRef: ref, Reason: "provider unavailable", Retryable: true},
	}
}

// Submissions of the same text are one analysis; a post's analysis is
// keyed by its version, not its text.
func TestAnalysisIdentity(t *testing.T) {
	sum := hashOf("some text")
	a := events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", sum), events.AnalysisTypeVerdict, "v1")
	b := events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputURL, "", sum), events.AnalysisTypeVerdict, "v1")
	require.Equal(t, a, b, "a URL whose text equals a submitted text is the same job")
	require.NotEqual(t, a, events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", sum), events.AnalysisTypeVerdict, "v2"))
	bad := events.AnalysisRequestedV1{AnalysisID: a, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: "v1",
		InputKind: events.AnalysisInputText, Text: "some text", ContentSHA256: sum, Source: "SOMEONE"}
	require.ErrorContains(t, bad.Validate(), `source "SOMEONE" is unknown`)
	bad.Source = events.AnalysisSourceAPI
	require.NoError(t, bad.Validate())
	bad.AnalysisID = events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", sum), events.AnalysisTypeVerdict, "v2")
	require.Error(t, bad.Validate())
}
