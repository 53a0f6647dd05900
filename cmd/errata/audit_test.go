package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
)

// TestAuditCommand appends a complete and a pending investigation to real
// Kafka and runs `errata audit` as a process: the text and the JSON show
// every step; with --from-projection, fed by `errata worker --projectors
// audit`, the JSON is byte for byte the log's.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rig := newWorkerRig(t, ctx, 10)
	done := audittest.Complete("cmd-complete", "1860000000000000201")
	pending := audittest.Pending("cmd-pending", "1860000000000000202")
	for _, f := range []*audittest.Fixture{done, pending} {
		require.NoError(t, rig.append(ctx, append(append([]events.Event{}, f.Posts...), f.Investigation...), 100))
	}

	text, stderr, err := runErrata(t, rig.env, "audit", done.InvestigationID)
	require.NoError(t, err, stderr)
	for _, want := range []string{"Investigation " + done.InvestigationID + "  status COMPLETE", "== Post version ==",
		"registered:   3 time(s); first CLIENT_FALLBACK", "INVESTIGATE_NOW, requester " + audittest.RequesterKey,
		`user key attached (sealed by key-ring id "k1"`, "== Input ==", "== Attempt 1 of series 1 ==", "error TRANSIENT rate_limited",
		"== Attempt 2 of series 1 ==", "prompt:       investigator v3 sha256 ", "paid by:      USER key",
		"web search search completed: Eiffel Tower completion year", "tool call call_a submit_correction",
		"claim submission 1 (REJECTED_NOT_VERBATIM", "verdict:    APPROVED after 1 try(ies)", "COMPLETE by attempt 2 of series 1",
		"assessments of the attempt: 1 published, 1 withheld (no_authoritative_contradiction)",
		"total        7100 in (1800 cached), 730 out (256 reasoning), 7830 total"} {
		require.True(t, strings.Contains(text, want), "text lacks %q:\n%s", want, text)
	}
	for _, ev := range append(append([]events.Event{}, done.Investigation...), done.Posts[0], done.Posts[3], done.Posts[4]) {
		require.Contains(t, text, ev.ID, "every step is shown")
	}
	require.NotContains(t, text, audittest.UserKey)

	logJSON, stderr, err := runErrata(t, rig.env, "audit", "--json", done.InvestigationID)
	require.NoError(t, err, stderr)
	var trail audit.Trail
	require.NoError(t, json.Unmarshal([]byte(logJSON), &trail))
	require.Equal(t, events.StatusComplete, trail.Status)
	require.Equal(t, len(done.Investigation), trail.Steps)
	require.Len(t, trail.Attempts, 2)
	ex := trail.Attempts[1].Exchanges[0]
	require.Equal(t, `{"input":"Fun fact: the Eiffel Tower was completed in 1925, long after the World's Fair it was built for.","model":"gpt-5","round":1}`, ex.RawRequest, "exact request bytes in JSON mode")
	require.Equal(t, `{"id":"resp_2_1","status":"completed"}`, ex.RawResponse)
	require.Equal(t, events.ValidationApproved, trail.Attempts[1].Submissions[0].Validation.Outcome)
	require.True(t, trail.Attempts[1].Submissions[0].Assessment.Published)
	require.Equal(t, audittest.WithheldFailed, trail.Attempts[1].Submissions[2].Assessment.Failed)
	require.Equal(t, audittest.Claim, trail.Result.Claims[0].Text)
	require.Equal(t, rig.topicPrefix()+"investigations", trail.Result.Step.Position.Topic)

	pendingText, stderr, err := runErrata(t, rig.env, "audit", pending.InvestigationID)
	require.NoError(t, err, stderr)
	require.Contains(t, pendingText, "status PENDING")

	unknown := events.InvestigationID(events.PostVersionID(done.PostID, "nothing"))
	_, stderr, err = runErrata(t, rig.env, "audit", unknown)
	require.Error(t, err)
	require.Contains(t, stderr, "investigation not found: "+unknown+" is not on "+rig.topicPrefix()+"investigations")
	_, stderr, err = runErrata(t, rig.env, "audit", "not-a-uuid")
	require.Error(t, err)
	require.Contains(t, stderr, "investigation id must be a UUID")

	// The same trail from the projection.
	worker := startErrata(t, rig.env, filepath.Join(t.TempDir(), "worker.log"), "worker", "--projectors", "audit", "--stages=")
	defer worker.stop(t)
	var projJSON string
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		out, stderr, err := runErrata(t, rig.env, "audit", "--json", "--from-projection", done.InvestigationID)
		if err != nil {
			return false, stderr
		}
		projJSON = out
		return out == logJSON, "projection trail differs (not caught up?)"
	})
	require.Equal(t, logJSON, projJSON)
	out, stderr, err := runErrata(t, rig.env, "audit", "--from-projection", pending.InvestigationID)
	require.NoError(t, err, stderr)
	require.Contains(t, out, "status PENDING")
}

// topicPrefix is the rig's private topic prefix.
func (r *workerRig) topicPrefix() string {
	for _, kv := range r.env {
		if v, ok := strings.CutPrefix(kv, "ERRATA_KAFKA_TOPIC_PREFIX="); ok {
			return v
		}
	}
	return ""
}

// TestAuditAnalysisCommand appends the verdict analyses of the fixture to
// real Kafka and runs `errata audit --analysis` as a process: the text
// shows every step, the JSON the exact exchange bodies; with
// --from-projection the JSON is byte for byte the log's.
func TestAuditAnalysisCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rig := newWorkerRig(t, ctx, 10)
	f := analysistest.New("cmd-audit")
	require.NoError(t, rig.append(ctx, f.All(), 100))

	text, stderr, err := runErrata(t, rig.env, "audit", "--analysis", f.CompleteID)
	require.NoError(t, err, stderr)
	for _, want := range []string{"Analysis " + f.CompleteID + "  status COMPLETE", "== Requests ==", "== Attempt 1 ==",
		"failed (another attempt follows): provider overloaded (HTTP 503)", "== Attempt 2 ==",
		"versions:     registry " + analysistest.RegistryVersion + ", policy " + analysistest.PolicyVersion + ", rubric " + analysistest.RubricVersion,
		"gate 1:     FACTUAL, specificity 0.9, researched (numeric)", `query:      keyword "Eiffel Tower completed year": 2 result(s)`,
		"verdict:    False / FALSE, truth 6%, confidence 70% (capped: approximate_numeric_evidence ≤ 70 (was 88))",
		"post verdict: False / FALSE", "(filled from the search results)", "completed: 2 claim(s), 1 researched"} {
		require.True(t, strings.Contains(text, want), "text lacks %q:\n%s", want, text)
	}
	for _, ev := range f.Complete {
		require.Contains(t, text, ev.ID, "every step is shown")
	}

	logJSON, stderr, err := runErrata(t, rig.env, "audit", "--analysis", "--json", f.CompleteID)
	require.NoError(t, err, stderr)
	var trail audit.AnalysisTrail
	require.NoError(t, json.Unmarshal([]byte(logJSON), &trail))
	require.Equal(t, len(f.Complete), trail.Steps)
	require.Equal(t, `{"id":"resp_verdict"}`, trail.Attempts[1].Exchanges[2].RawResponse, "exact response bytes in JSON mode")
	require.Equal(t, rig.topicPrefix()+"analyses", trail.Requests[0].Step.Position.Topic)

	failed, stderr, err := runErrata(t, rig.env, "audit", "--analysis", f.FailedID)
	require.NoError(t, err, stderr)
	require.Contains(t, failed, "status FAILED")
	_, stderr, err = runErrata(t, rig.env, "audit", "--analysis", f.PostVersionID)
	require.Error(t, err)
	require.Contains(t, stderr, "analysis not found: "+f.PostVersionID+" is not on "+rig.topicPrefix()+"analyses")
	_, stderr, err = runErrata(t, rig.env, "audit", "--analysis", "nope")
	require.Error(t, err)
	require.Contains(t, stderr, "analysis id must be a UUID")

	worker := startErrata(t, rig.env, filepath.Join(t.TempDir(), "worker.log"), "worker", "--projectors", "audit", "--stages=")
	defer worker.stop(t)
	testenv.Eventually(t, time.Minute, func() (bool, string) {
		out, stderr, err := runErrata(t, rig.env, "audit", "--analysis", "--json", "--from-projection", f.CompleteID)
		if err != nil {
			return false, stderr
		}
		return out == logJSON, "projection trail differs (not caught up?)"
	})
}
