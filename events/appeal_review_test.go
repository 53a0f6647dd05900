package events_test

import (
	"github.com/errata-dev/errata/events"
)

// appealReviewSamples are the events of one review attempt of the sample
// appeal.
func appealReviewSamples(appealID, claimID string) map[string]events.Payload {
	ref := events.AppealRef{AppealID: appealID, Attempt: 1}
	stance := events.PromptRefV1{Name: "stance", Version: "v1",
		SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	src := events.AssessedSourceV1{URL: "https://www.census.gov/report", Domain: "census.gov", Tier: 1, Rule: "*.gov",
		Title: "Report", Snippet: "The rate was 41% in 2020.", Origin: "appellant", Entail: 0.1, Contradict: 0.8,
		Neutral: 0.1, Num: "match", Recency: 0.5}
	return map[string]events.Payload{
		events.TypeAppealReviewStartedV1: &events.AppealReviewStartedV1{AppealRef: ref, Worker: "worker-1", ClaimID: claimID,
			ClaimText: "The rate was 14% in 2020.", PolicyVersion: "strict-v1@a176a28a7d06",
			RegistryVersion: "starter@0123456789ab", Search: "searxng", StancePrompt: stance, StanceModel: "gpt-5"},
		events.TypeAppealQueryIssuedV1: &events.AppealQueryIssuedV1{AppealRef: ref, Query: "rate 2020", Kind: "keyword",
			Results: []events.SearchResultV1{{URL: "https://www.census.gov/report", Title: "Report",
				Snippet: "The rate was 41% in 2020.", PublishedAt: "2021-03-01T00:00:00Z"}}},
		events.TypeAppealURLFetchedV1: &events.AppealURLFetchedV1{AppealRef: ref, URL: "https://example.org/report.pdf",
			Error: "the page is not HTML"},
		events.TypeAppealExchangeRecordedV1: &events.AppealExchangeRecordedV1{AppealRef: ref, Step: "stance", Seq: 0,
			Prompt: stance, Provider: "openai-responses", Model: "gpt-5", HTTPStatus: 200, DurationMS: 812,
			RawRequest: `{"model":"gpt-5"}`, RawResponse: `{"output":[]}`,
			Usage: events.UsageV1{InputTokens: 120, OutputTokens: 30, TotalTokens: 150}},
		events.TypeAppealEvidenceAssessedV1: &events.AppealEvidenceAssessedV1{AppealRef: ref,
			Sources: []events.AssessedSourceV1{src}, Dropped: []events.DroppedSourceV1{},
			Score: 31, Verdict: events.EvidenceNotEnough, Gate4: "INSUFFICIENT", PolicyVersion: "strict-v1@a176a28a7d06",
			Reason: "not_refuted"},
		events.TypeAppealReviewFailedV1: &events.AppealReviewFailedV1{AppealRef: ref,
			Reason: "worker_lost: the worker running this review stopped before it finished", Retryable: true,
			RetryAt: "2026-01-02T03:04:05Z"},
	}
}
