package serving_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// While an investigation runs, its accepted submissions are pending until
// the validator decides; approved ones are confirmed, rejected ones and
// those of an abandoned attempt disappear; a transient failure reclaims
// it to PENDING.
func TestProgressClaims(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	rd := serving.NewReader(p.pool)
	a := registration(events.PlatformX, "200", "Water boils at 50 degrees and ice melts at 30 degrees.")
	inv := events.InvestigationID(a.PostVersionID)
	ref1 := events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: 1}
	ref2 := events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: 2}
	src := []events.SourceV1{{URL: "https://example.org/s", Title: "S", Snippet: "snippet"}}
	submitted := func(ref events.AttemptRef, seq int, text string) *events.InvestigationClaimSubmittedV1 {
		return &events.InvestigationClaimSubmittedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq), Seq: seq,
			CallID: "c", Disposition: events.DispositionAccepted, Correction: events.CorrectionV1{Text: text, Context: text,
				Summary: "wrong", Reasoning: "because", Sources: src}}
	}
	validated := func(ref events.AttemptRef, seq int, outcome string) *events.InvestigationClaimValidatedV1 {
		return &events.InvestigationClaimValidatedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq), Outcome: outcome,
			Reason: "r", Prompt: events.PromptRefV1{Name: "validator", Version: "v1", SHA256: hex64("v")}, Provider: "p", Model: "m", Tries: 1}
	}
	started := func(ref events.AttemptRef) *events.InvestigationAttemptStartedV1 {
		return &events.InvestigationAttemptStartedV1{AttemptRef: ref, Worker: "w", Prompt: events.PromptRefV1{Name: "f", Version: "v1", SHA256: hex64("f")},
			Provider: "p", Model: "m", Instructions: "i", Tools: []events.ToolDefinitionV1{}, WebSearch: "NATIVE", RoundCap: 3,
			Credential: events.CredentialInstance, InputEventID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f71"}
	}
	assessed := func(ref events.AttemptRef, seq int, published bool) *events.InvestigationClaimAssessedV1 {
		e := &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
			Queries: []events.EvidenceQueryV1{}, Sources: []events.AssessedSourceV1{}, Dropped: []events.DroppedSourceV1{},
			Verdict: events.EvidenceRefuted, Gate4: "MEDIUM", CMax: 0.9, Score: 10, RegistryVersion: "r@1", PolicyVersion: "p@1",
			PublishMode: "strict", Published: true, Reason: "published", Failed: []string{}}
		if !published {
			e.Published, e.Reason, e.Failed, e.Gate4 = false, "gate4_below_minimum", []string{"gate4_below_minimum"}, "INSUFFICIENT"
		}
		return e
	}
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	p.handle(t, records(t, 0, 0,
		timed{a, at(0)}, timed{investigationOf(a), at(1)}, timed{started(ref1), at(2)},
		timed{submitted(ref1, 0, "Water boils at 50 degrees"), at(3)},
		timed{submitted(ref1, 1, "ice melts at 30 degrees"), at(3)},
		timed{validated(ref1, 0, events.ValidationApproved), at(4)},
	)...)
	got, err := rd.VersionStatusByID(context.Background(), a.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusProcessing, got.InvestigationStatus)
	require.Empty(t, got.ConfirmedClaims, "approved but not yet assessed: still being checked")
	require.Len(t, got.PendingClaims, 2)

	// The evidence engine publishes the first and withholds the second
	// (approved too): only the first is confirmed, the second is gone.
	p.handle(t, records(t, 0, 6,
		timed{assessed(ref1, 0, true), at(4)},
		timed{validated(ref1, 1, events.ValidationApproved), at(4)},
		timed{assessed(ref1, 1, false), at(4)},
	)...)
	got, err = rd.VersionStatusByID(context.Background(), a.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusProcessing, got.InvestigationStatus)
	require.Len(t, got.ConfirmedClaims, 1)
	require.Equal(t, "Water boils at 50 degrees", got.ConfirmedClaims[0].Text)
	require.Empty(t, got.PendingClaims, "a withheld claim is never shown, not even as pending")

	// The attempt fails transiently: PENDING again; the next attempt starts empty.
	p.handle(t, records(t, 0, 9,
		timed{&events.InvestigationAttemptFailedV1{AttemptRef: ref1, Class: events.FailureTransient, Kind: "rate_limited",
			Message: "429", RetryAt: at(6).Format(time.RFC3339Nano)}, at(5)},
	)...)
	got, err = rd.VersionStatusByID(context.Background(), a.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusPending, got.InvestigationStatus)
	p.handle(t, records(t, 0, 10, timed{started(ref2), at(6)})...)
	got, err = rd.VersionStatusByID(context.Background(), a.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, events.StatusProcessing, got.InvestigationStatus)
	require.Empty(t, got.PendingClaims)
	require.Empty(t, got.ConfirmedClaims)
}
