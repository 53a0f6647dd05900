package audit_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/projections/audit"
)

var update = flag.Bool("update", false, "rewrite the golden files of the trail renderings")

// positioned gives records consecutive offsets on one partition of topic,
// as the log would.
func positioned(topic string, partition int32, evs []events.Event) []audit.Record {
	out := make([]audit.Record, len(evs))
	for i, ev := range evs {
		out[i] = audit.Record{Event: ev, Position: audit.Position{Topic: topic, Partition: partition, Offset: int64(10 + i)}}
	}
	return out
}

func build(t *testing.T, f *audittest.Fixture) *audit.Trail {
	t.Helper()
	post := audit.FoldPostVersion(f.PostVersionID, positioned("errata.posts", 0, f.Posts))
	trail, err := audit.Build(f.InvestigationID, positioned("errata.investigations", 1, f.Investigation), post)
	require.NoError(t, err)
	return trail
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden; run go test ./projections/audit -update")
	require.Equal(t, string(want), string(got), "rendering of %s changed", name)
}

func TestCompleteTrailGolden(t *testing.T) {
	f := audittest.Complete("golden", "1860000000000000001")
	trail := build(t, f)

	js, err := audit.JSON(trail)
	require.NoError(t, err)
	golden(t, "complete.json", js)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	golden(t, "complete.txt", text.Bytes())
	pub, err := trail.Public()
	require.NoError(t, err)
	pubJS, err := audit.JSON(pub)
	require.NoError(t, err)
	golden(t, "complete.public.json", pubJS)

	// The trail shows every step.
	require.Equal(t, events.StatusComplete, trail.Status)
	require.Equal(t, len(f.Investigation), trail.Steps)
	pv := trail.PostVersion
	require.NotNil(t, pv)
	require.Equal(t, int64(3), pv.Registrations, "three registrations of the version")
	require.Equal(t, events.ProvenanceClientFallback, pv.FirstProvenance)
	require.NotNil(t, pv.ServerVerified)
	require.Equal(t, f.Posts[3].ID, pv.ServerVerified.EventID)
	require.Len(t, pv.Anomalies, 1)
	require.Equal(t, audit.Position{Topic: "errata.posts", Partition: 0, Offset: 10}, pv.FirstRegistered.Position)
	require.Len(t, trail.Requests, 1)
	require.Equal(t, audittest.RequesterKey, trail.Requests[0].RequesterKey)
	require.Equal(t, "k1", trail.UserKeys[0].KeyRingID)
	require.Equal(t, f.Investigation[2].ID, trail.Input.Step.EventID)

	require.Len(t, trail.Attempts, 2)
	a1, a2 := trail.Attempts[0], trail.Attempts[1]
	require.Equal(t, "rate_limited", a1.Failure.Kind)
	require.Equal(t, "rate_limit_exceeded", a1.Exchanges[0].Error.Code)
	require.Equal(t, events.CredentialUser, a2.Credential)
	require.Equal(t, "v3", a2.Prompt.Version)
	require.Len(t, a2.Exchanges, 2, "stage-1 exchanges; the validator's sits under its claim")
	x := a2.Exchanges[0]
	require.Equal(t, []string{"submit_correction", "submit_correction", "submit_correction"},
		[]string{x.ToolCalls[0].Name, x.ToolCalls[1].Name, x.ToolCalls[2].Name})
	require.Contains(t, x.ToolCalls[0].Arguments, audittest.Claim)
	require.Equal(t, "Eiffel Tower completion year", x.WebSearches[0].Query)
	require.Equal(t, []string{"Check the completion date of the Eiffel Tower."}, x.Reasoning)
	require.JSONEq(t, `{"model":"gpt-5","input":"`+f.Investigation[2].Payload.(*events.InvestigationInputSnapshottedV1).Text+`","round":1}`, x.RawRequest)
	require.Equal(t, "https://www.toureiffel.paris/en/the-monument/history", a2.Exchanges[1].Citations[0].URL)
	require.Len(t, a2.Submissions, 3)
	require.Equal(t, events.ValidationApproved, a2.Submissions[0].Validation.Outcome)
	require.Len(t, a2.Submissions[0].Exchanges, 1)
	require.Equal(t, events.DispositionNotVerbatim, a2.Submissions[1].Disposition)
	require.Nil(t, a2.Submissions[1].Validation)
	require.Nil(t, a2.Submissions[1].Assessment)
	require.Empty(t, a2.Submissions[1].AssessorExchanges)
	require.Equal(t, 2, a2.StageOne.Rounds)
	require.Equal(t, int64(2220+960+2430+960+690+570), a2.Usage.TotalTokens, "both stages and the stance exchanges count")

	// The engine published the first approved claim and withheld the second.
	pubSub, held := a2.Submissions[0], a2.Submissions[2]
	require.Len(t, pubSub.AssessorExchanges, 1)
	require.Equal(t, events.StageAssessor, pubSub.AssessorExchanges[0].Stage)
	require.Equal(t, pubSub.SubmissionID, pubSub.AssessorExchanges[0].SubmissionID)
	pa := pubSub.Assessment
	require.NotNil(t, pa)
	require.Equal(t, f.Investigation[14].ID, pa.Step.EventID)
	require.True(t, pa.Published)
	require.Equal(t, "published", pa.Reason)
	require.Empty(t, pa.Failed)
	require.Equal(t, "REFUTED", pa.Verdict)
	quality := []float64{0.6, 0.85, 0.95} // the reliabilities of tiers 3, 2 and 1, summed at run time as the engine does
	require.Equal(t, audit.Gate4{Level: "HIGH", Sources: 3, Quality: (quality[0] + quality[1] + quality[2]) / 3, Agreement: 1}, pa.Gate4)
	require.Equal(t, "strict", pa.PublishMode)
	require.Equal(t, audittest.RegistryVersion, pa.RegistryVersion)
	require.Regexp(t, `^strict-v1@[0-9a-f]{12}$`, pa.PolicyVersion)
	require.Equal(t, []int{3, 2, 1}, []int{pa.Sources[0].Tier, pa.Sources[1].Tier, pa.Sources[2].Tier})
	require.Equal(t, "wildcard:*.gouv.fr", pa.Sources[2].Rule)
	require.Equal(t, 0.97, pa.Sources[2].Contradict)
	require.Equal(t, "mismatch", pa.Sources[2].Num)
	ha := held.Assessment
	require.NotNil(t, ha)
	require.False(t, ha.Published)
	require.Equal(t, "REFUTED", ha.Verdict)
	require.Equal(t, audittest.WithheldFailed[0], ha.Reason)
	require.Equal(t, audittest.WithheldFailed, ha.Failed)
	require.Equal(t, audit.Gate4{Level: "INSUFFICIENT", Sources: 1, Quality: 0.35, Agreement: 1}, ha.Gate4)
	require.Equal(t, audittest.QueryError, ha.Queries[1].Error)
	require.Equal(t, audittest.BrokeSchema, ha.Sources[2].StanceNote)
	require.Equal(t, 1.0, ha.Sources[2].Neutral)
	require.Equal(t, "https://eiffel.intranet.corp/notes", ha.Dropped[0].URL)
	require.Equal(t, pubSub.SubmissionID, trail.Result.Claims[0].SubmissionID, "the published claim names its submission")
	require.Len(t, trail.Result.Claims, 1, "the withheld claim is not published")
	require.Equal(t, int64(0), a1.Usage.TotalTokens)
	require.Equal(t, a2.Usage, trail.Usage)
	require.Equal(t, audittest.Claim, trail.Result.Claims[0].Text)
	require.Equal(t, 2, trail.Result.Attempt)

	for _, s := range []string{text.String()} {
		for _, want := range []string{"== Post version ==", "== Requests ==", "== Input ==", "== Attempt 1 of series 1 ==",
			"== Attempt 2 of series 1 ==", "== Result ==", "== Tokens ==", "verdict:", "APPROVED", "tool call call_a submit_correction",
			"web search search completed: Eiffel Tower completion year", "error TRANSIENT rate_limited",
			"assessment: REFUTED, score ", "): PUBLISHED", "WITHHELD: no_authoritative_contradiction (failed: no_authoritative_contradiction, gate4_below_minimum)",
			"gate 4:     HIGH: 3 independent source(s) with a stance", "tier 1 (wildcard:*.gouv.fr) https://www.culture.gouv.fr/en/eiffel-tower from search",
			"failed: " + audittest.QueryError, "(" + audittest.BrokeSchema + ")", "assessor exchange round 1",
			"assessments of the attempt: 1 published, 1 withheld (no_authoritative_contradiction)",
			"total        7100 in (1800 cached), 730 out (256 reasoning), 7830 total"} {
			require.True(t, strings.Contains(s, want), "text lacks %q", want)
		}
	}
	for _, ev := range f.Investigation {
		require.Contains(t, text.String(), ev.ID, "every step is in the text")
	}
}

func TestPublicTrailLeavesOutCallerAndDeploymentDetails(t *testing.T) {
	f := audittest.Complete("public", "1860000000000000002")
	trail := build(t, f)
	pub, err := trail.Public()
	require.NoError(t, err)
	js, err := audit.JSON(pub)
	require.NoError(t, err)
	s := string(js)
	for _, absent := range []string{`"raw_request"`, `"raw_response"`, `"request_id"`, audittest.RequesterKey, `"key_ring_id"`,
		`"worker"`, `"correlation_id"`, `"causation_id"`, "req-public", audittest.UserKey} {
		require.NotContains(t, s, absent)
	}
	for _, present := range []string{audittest.Claim, `"tool_calls"`, `"validation"`, `"usage"`, `"instructions"`, `"content_sha256"`} {
		require.Contains(t, s, present)
	}
	// Public copies: the full trail is unchanged.
	require.NotEmpty(t, trail.Attempts[1].Exchanges[0].RawRequest)
	require.Equal(t, audittest.RequesterKey, trail.Requests[0].RequesterKey)

	full, err := audit.JSON(trail)
	require.NoError(t, err)
	require.NotContains(t, string(full), audittest.UserKey, "user keys are never in events")
}

func TestPendingTrail(t *testing.T) {
	f := audittest.Pending("pending", "1860000000000000003")
	trail := build(t, f)
	require.Equal(t, events.StatusPending, trail.Status)
	require.Empty(t, trail.Attempts)
	require.Nil(t, trail.Result)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	golden(t, "pending.txt", text.Bytes())
	require.Contains(t, text.String(), "SELECTOR, unique-view score 3")
}

func TestBuildIgnoresOtherInvestigationsAndRepeatedEvents(t *testing.T) {
	f := audittest.Complete("dups", "1860000000000000004")
	other := audittest.Pending("other", "1860000000000000005")
	want := build(t, f)

	var mixed []events.Event
	for i, ev := range f.Investigation {
		mixed = append(mixed, ev)
		if i%3 == 0 {
			mixed = append(mixed, ev) // a retried append: same event id
		}
		if i < len(other.Investigation) {
			mixed = append(mixed, other.Investigation[i])
		}
	}
	post := audit.FoldPostVersion(f.PostVersionID, positioned("errata.posts", 0, append(other.Posts, f.Posts...)))
	got, err := audit.Build(f.InvestigationID, positioned("errata.investigations", 1, mixed), post)
	require.NoError(t, err)
	require.Equal(t, want.Steps, got.Steps)
	require.Equal(t, want.Usage, got.Usage)
	require.Equal(t, want.Status, got.Status)
	require.Equal(t, want.PostVersion.Registrations, got.PostVersion.Registrations)

	_, err = audit.Build(events.InvestigationID(events.PostVersionID(f.PostID, strings.Repeat("0", 64))), positioned("t", 0, f.Investigation), nil)
	require.ErrorIs(t, err, audit.ErrNotFound)
}

func TestTrailJSONRoundTrips(t *testing.T) {
	trail := build(t, audittest.Complete("roundtrip", "1860000000000000006"))
	js, err := audit.JSON(trail)
	require.NoError(t, err)
	var back audit.Trail
	require.NoError(t, json.Unmarshal(js, &back))
	again, err := audit.JSON(&back)
	require.NoError(t, err)
	require.Equal(t, string(js), string(again), "the projection stores and reloads trails losslessly")
}

// An assessment or a stance exchange of a submission the trail has not
// seen stays visible; a second assessment of a submission does not replace
// the first.
func TestBuildAssessmentsOutOfOrder(t *testing.T) {
	f := audittest.Complete("assess-order", "1860000000000000007")
	var subs, assessed, stance []int
	for i, ev := range f.Investigation {
		switch p := ev.Payload.(type) {
		case *events.InvestigationClaimSubmittedV1:
			subs = append(subs, i)
		case *events.InvestigationClaimAssessedV1:
			assessed = append(assessed, i)
		case *events.InvestigationExchangeRecordedV1:
			if p.Stage == events.StageAssessor {
				stance = append(stance, i)
			}
		}
	}
	require.Len(t, subs, 3)
	require.Len(t, assessed, 2)
	require.Len(t, stance, 2)
	want := build(t, f)

	// The withheld claim's assessment repeated after the published one's:
	// the first assessment counts.
	again := append([]events.Event{}, f.Investigation...)
	second := f.Investigation[assessed[1]]
	dup := *second.Payload.(*events.InvestigationClaimAssessedV1)
	dup.Published, dup.Reason, dup.Failed = true, "published", []string{}
	second.ID = "00000000-0000-4000-8000-0000000000aa"
	second.Payload = &dup
	again = append(again, second)
	got, err := audit.Build(f.InvestigationID, positioned("errata.investigations", 1, again), want.PostVersion)
	require.NoError(t, err)
	require.False(t, got.Attempts[1].Submissions[2].Assessment.Published, "the first assessment wins")
	require.Equal(t, want.Steps+1, got.Steps)

	// Without the withheld claim's submission: its exchanges, verdict and
	// assessment still show, under a placeholder and in the attempt.
	var missing []events.Event
	for i, ev := range f.Investigation {
		if i != subs[2] {
			missing = append(missing, ev)
		}
	}
	got, err = audit.Build(f.InvestigationID, positioned("errata.investigations", 1, missing), want.PostVersion)
	require.NoError(t, err)
	a2 := got.Attempts[1]
	require.Len(t, a2.Submissions, 3)
	ph := a2.Submissions[2]
	require.Equal(t, "UNKNOWN", ph.Disposition)
	require.NotNil(t, ph.Validation)
	require.NotNil(t, ph.Assessment)
	require.Equal(t, audittest.WithheldFailed, ph.Assessment.Failed)
	require.Len(t, a2.Exchanges, 3, "its validator exchange, read before anything named the submission, stays among the attempt's")
	require.Equal(t, events.StageValidator, a2.Exchanges[2].Stage)
	require.Len(t, ph.AssessorExchanges, 1, "its stance exchange, read after the verdict, is under the placeholder")
	require.Equal(t, want.Usage, got.Usage)
}

// Hostile values in an assessment (a 10,000-character rule, NUL in a
// snippet and a note, an enormous query) never stop a rendering.
func TestHostileAssessmentRenders(t *testing.T) {
	f := audittest.Complete("assess-hostile", "1860000000000000008")
	long := strings.Repeat("r", 10_000)
	for i, ev := range f.Investigation {
		if p, ok := ev.Payload.(*events.InvestigationClaimAssessedV1); ok {
			cp := *p
			cp.Sources = append([]events.AssessedSourceV1{}, p.Sources...)
			cp.Sources[0].Rule = long
			cp.Sources[0].Snippet = "a\x00b"
			cp.Sources[0].StanceNote = "\x00"
			cp.Queries = append([]events.EvidenceQueryV1{}, p.Queries...)
			cp.Queries[0].Query = strings.Repeat("q", 100_000)
			cp.Failed = append(append([]string{}, p.Failed...), "\x00"+long)
			f.Investigation[i].Payload = &cp
		}
	}
	trail := build(t, f)
	js, err := audit.JSON(trail)
	require.NoError(t, err)
	require.Contains(t, string(js), `"snippet": "a\u0000b"`)
	require.Contains(t, string(js), long)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	require.Contains(t, text.String(), "tier 3 ("+long+")")
	pub, err := trail.Public()
	require.NoError(t, err)
	require.Equal(t, audit.StanceNotJudged, pub.Attempts[1].Submissions[0].Assessment.Sources[0].StanceNote)
	var back audit.Trail
	require.NoError(t, json.Unmarshal(js, &back))
	again, err := audit.JSON(&back)
	require.NoError(t, err)
	require.Equal(t, string(js), string(again))
}
