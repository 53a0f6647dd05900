package investigator_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

var body = []string{
	"The Eiffel Tower was completed in 1925 and has stood in Paris ever since, a landmark of the city.",
	"Water boils at 100 degrees Celsius at sea level, which every cook relies on.",
	"Many travel guides repeat that the Great Wall of China is visible from the Moon with the naked eye.",
}

const (
	eiffel = "The Eiffel Tower was completed in 1925"
	wall   = "the Great Wall of China is visible from the Moon with the naked eye"
)

// A fresh run: two verbatim claims and one paraphrase are submitted; the
// paraphrase is rejected before validation, the validator approves one of
// the two, and only that one is published. Validation overlaps stage 1:
// the verdicts are in the log before stage 1 ends.
func TestFreshRunPublishesOnlyApprovedVerbatimClaims(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{
		submit: []tools.Correction{
			correction(eiffel, "It was completed in 1889."),
			correction("Eiffel's tower was finished in 1925", "Paraphrased: must be rejected before validation."),
			correction(wall, "It is not visible from the Moon."),
		},
		approve:    map[string]bool{eiffel: true},
		finalDelay: 1500 * time.Millisecond,
	}
	b.install(h.fake)
	p := h.register("fresh0001", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)

	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)
	require.Equal(t, eiffel, got.Claims[0].Text)
	require.Equal(t, "It was completed in 1889.", got.Claims[0].Summary)
	require.Equal(t, events.ClaimID(p.investigationID, 0), got.Claims[0].ID)
	require.Contains(t, got.Claims[0].Context, eiffel)
	require.Equal(t, 2, b.validations, "the paraphrase never reaches the validator")

	trail := h.trail(p.investigationID)
	kinds := types(trail)
	require.Equal(t, "requested", kinds[0])
	require.Equal(t, "completed", kinds[len(kinds)-1])
	require.Equal(t, 1, count(kinds, "input_snapshotted"))
	require.Equal(t, 1, count(kinds, "attempt_started"))
	require.Equal(t, 3, count(kinds, "claim_submitted"))
	require.Equal(t, 2, count(kinds, "claim_validated"))
	require.Equal(t, 1, count(kinds, "claim_assessed"), "only the approved claim is assessed")
	require.Equal(t, 5, count(kinds, "exchange_recorded"), "two stage-1 turns, two validations and one stance call")
	require.Less(t, slices.Index(kinds, "claim_assessed"), slices.Index(kinds, "completed"))
	firstVerdict := slices.Index(kinds, "claim_validated")
	require.Less(t, firstVerdict, slices.Index(kinds, "stage_one_finished"), "validation overlaps stage 1: %v", kinds)

	var dispositions []string
	for _, ev := range trail {
		switch p := ev.Payload.(type) {
		case *events.InvestigationClaimSubmittedV1:
			dispositions = append(dispositions, p.Disposition)
		case *events.InvestigationAttemptStartedV1:
			require.Equal(t, "investigator-fresh", p.Prompt.Name)
			require.Equal(t, events.CredentialInstance, p.Credential)
			require.Contains(t, p.Instructions, "Errata")
		case *events.InvestigationExchangeRecordedV1:
			require.NotEmpty(t, p.RawRequest)
			require.NotEmpty(t, p.RawResponse)
			require.NotContains(t, string(p.RawRequest)+p.RawResponse, instanceKey)
		case *events.InvestigationCompletedV1:
			require.Equal(t, 1, p.Series)
			require.Equal(t, 1, p.Attempt)
			require.Equal(t, "investigator-fresh@v1", p.PromptVersion)
		}
	}
	require.Equal(t, []string{events.DispositionAccepted, events.DispositionNotVerbatim, events.DispositionAccepted}, dispositions)
}

// An update run: the prior SERVER_VERIFIED investigation's claims and a
// diff go to the model; a retained claim is published again unchanged and
// the unretained one disappears.
func TestUpdateRunRetainsAndDrops(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	first := &brain{
		submit:  []tools.Correction{correction(eiffel, "It was completed in 1889."), correction(wall, "It is not visible.")},
		approve: map[string]bool{eiffel: true, wall: true},
	}
	first.install(h.fake)
	h.startWorkers("worker-a")
	v1 := h.register("update001", true, body...)
	h.request(v1, events.RequestSourceInvestigateNow)
	done := h.waitStatus(v1, 30*time.Second, events.StatusComplete)
	require.Len(t, done.Claims, 2)

	// The author removes the Great Wall sentence and adds one.
	edited := []string{body[0], body[1], "Mount Everest is the highest mountain above sea level."}
	second := &brain{retain: []string{done.Claims[0].ID, done.Claims[1].ID}}
	second.install(h.fake)
	v2 := h.register("update001", true, edited...)
	h.request(v2, events.RequestSourceInvestigateNow)
	got := h.waitStatus(v2, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1, "the claim whose text left the post cannot be retained")
	require.Equal(t, done.Claims[0].Text, got.Claims[0].Text)
	require.Equal(t, done.Claims[0].Summary, got.Claims[0].Summary)
	require.Equal(t, done.Claims[0].Sources, got.Claims[0].Sources)

	var input *events.InvestigationInputSnapshottedV1
	var retains []string
	for _, ev := range h.trail(v2.investigationID) {
		switch p := ev.Payload.(type) {
		case *events.InvestigationInputSnapshottedV1:
			input = p
		case *events.InvestigationClaimRetainedV1:
			retains = append(retains, p.Disposition)
		case *events.InvestigationAttemptStartedV1:
			require.Equal(t, "investigator-update", p.Prompt.Name)
		}
	}
	require.NotNil(t, input.Update)
	require.Equal(t, v1.investigationID, input.Update.PriorInvestigationID)
	require.Contains(t, input.Update.Diff, "- ")
	require.Contains(t, input.Update.Diff, "+ Mount Everest")
	require.Equal(t, 1, strings.Count(input.Update.Diff, "Eiffel"), "the diff does not carry the text twice")
	require.Equal(t, []string{events.DispositionAccepted, events.DispositionRetainNotInText}, retains)
	require.Equal(t, 0, second.validations, "retained claims are not validated again")
}

// A rate limit, then a server error: attempts 1 and 2 fail as TRANSIENT
// and are retried with backoff; attempt 3 succeeds.
func TestTransientFailuresRetryThenSucceed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{RetryBase: 100 * time.Millisecond})
	b := &brain{
		submit:    []tools.Correction{correction(eiffel, "It was completed in 1889.")},
		approve:   map[string]bool{eiffel: true},
		failFirst: []fakeopenai.Step{fakeopenai.RateLimit(0), fakeopenai.Error(503, "server_error", "overloaded")},
	}
	b.install(h.fake)
	p := h.register("transient1", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceSelector)
	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)

	var failures []*events.InvestigationAttemptFailedV1
	var starts int
	for _, ev := range h.trail(p.investigationID) {
		switch p := ev.Payload.(type) {
		case *events.InvestigationAttemptFailedV1:
			failures = append(failures, p)
		case *events.InvestigationAttemptStartedV1:
			starts++
		case *events.InvestigationCompletedV1:
			require.Equal(t, 3, p.Attempt)
		}
	}
	require.Equal(t, 3, starts)
	require.Len(t, failures, 2)
	require.Equal(t, "rate_limited", failures[0].Kind)
	require.Equal(t, "server_error", failures[1].Kind)
	for i, f := range failures {
		require.Equal(t, events.FailureTransient, f.Class)
		require.Equal(t, i+1, f.Attempt)
		require.NotEmpty(t, f.RetryAt)
	}
	require.Equal(t, 1, h.snapshotCount(p), "every attempt reads the one snapshot")
}

// A 401 is not retried: the investigation fails at once, and only an
// explicit investigateNow starts a new attempt series.
func TestNonRetryableFailureFailsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{
		submit:    []tools.Correction{correction(eiffel, "It was completed in 1889.")},
		approve:   map[string]bool{eiffel: true},
		failFirst: []fakeopenai.Step{fakeopenai.Error(401, "invalid_api_key", "Incorrect API key provided.")},
	}
	b.install(h.fake)
	p := h.register("fail00001", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)
	h.waitStatus(p, 30*time.Second, events.StatusFailed)
	require.Equal(t, 1, b.stage1Turns)

	// The selector never retries a FAILED investigation...
	h.request(p, events.RequestSourceSelector)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 1, b.stage1Turns)
	// ...an explicit investigateNow does, as series 2.
	h.request(p, events.RequestSourceInvestigateNow)
	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)
	var failed *events.InvestigationFailedV1
	var completed *events.InvestigationCompletedV1
	for _, ev := range h.trail(p.investigationID) {
		switch p := ev.Payload.(type) {
		case *events.InvestigationFailedV1:
			failed = p
		case *events.InvestigationCompletedV1:
			completed = p
		}
	}
	require.Equal(t, 1, failed.Attempts)
	require.Equal(t, 1, failed.Series)
	require.Contains(t, failed.Reason, "unauthorized")
	require.Equal(t, 2, completed.Series)
}

// A worker that stops mid-run loses nothing: another worker records the
// abandoned attempt and runs a new one to completion.
func TestWorkerLostMidRunIsTakenOver(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{
		submit:     []tools.Correction{correction(eiffel, "It was completed in 1889.")},
		approve:    map[string]bool{eiffel: true},
		firstDelay: 2 * time.Second,
	}
	b.install(h.fake)
	p := h.register("lost00001", false, body...)
	stopA := h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)
	h.waitStatus(p, 30*time.Second, events.StatusProcessing)
	stopA() // mid-exchange: the first turn is still being answered
	b.mu.Lock()
	b.firstDelay = 0
	b.mu.Unlock()
	h.startWorkers("worker-b")
	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)

	var lost *events.InvestigationAttemptFailedV1
	var workers []string
	for _, ev := range h.trail(p.investigationID) {
		switch p := ev.Payload.(type) {
		case *events.InvestigationAttemptFailedV1:
			lost = p
		case *events.InvestigationAttemptStartedV1:
			workers = append(workers, p.Worker)
		}
	}
	require.Equal(t, []string{"worker-a", "worker-b"}, workers)
	require.Equal(t, "worker_lost", lost.Kind)
	require.Equal(t, 1, lost.Attempt)
}

func count(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

func (h *harness) snapshotCount(p post) int {
	return count(types(h.trail(p.investigationID)), "input_snapshotted")
}

// At the round cap the model must answer without tools: the last turn is
// sent with tool_choice "none", and the finish records it.
func TestRoundCapForcesAFinalAnswer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{RoundCap: 2})
	b := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	b.install(h.fake)
	p := h.register("roundcap1", false, body...)
	h.startWorkers("worker-a")
	h.request(p, events.RequestSourceInvestigateNow)
	got := h.waitStatus(p, 30*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)
	var stage1 []map[string]any
	for _, r := range h.fake.RequestsTo(fakeopenai.Responses) {
		if _, structured := r.JSON()["text"]; !structured {
			stage1 = append(stage1, r.JSON())
		}
	}
	require.Len(t, stage1, 2)
	require.NotEqual(t, "none", stage1[0]["tool_choice"])
	require.Equal(t, "none", stage1[1]["tool_choice"])
	for _, ev := range h.trail(p.investigationID) {
		if f, ok := ev.Payload.(*events.InvestigationStageOneFinishedV1); ok {
			require.True(t, f.ForcedFinal)
			require.Equal(t, 2, f.Rounds)
		}
	}
}
