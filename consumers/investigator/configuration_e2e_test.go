package investigator_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// candidate is a configuration that differs from the worker's settings in
// everything it can name.
func candidate() events.AnalysisConfigurationV1 {
	return events.AnalysisConfigurationV1{Name: "candidate-e2e", Model: "gpt-candidate", ValidatorModel: "gpt-candidate-validator",
		InvestigatorPrompt: "v2", ValidatorPrompt: "v1", Policy: evidence.ValidatorOnlyPolicy().Version(), AuthorContext: true}
}

// requestUnder appends the request of p's investigation under spec, as
// the producers do once they have assigned it (nil: the default), and
// returns the investigation id.
func (h *harness) requestUnder(p post, spec *events.AnalysisConfigurationV1) string {
	h.t.Helper()
	v, err := h.reader.VersionByID(context.Background(), p.versionID)
	require.NoError(h.t, err)
	req := &events.InvestigationRequestedV1{PostID: v.PostID, PostVersionID: v.ID, Platform: v.Platform,
		ExternalID: v.ExternalID, VersionHash: v.VersionHash, Source: events.RequestSourceReprocess}
	if spec != nil {
		req.ConfigurationID, req.Configuration = events.ConfigurationID(*spec), spec
	}
	req.InvestigationID = events.InvestigationIDFor(v.ID, req.ConfigurationID)
	ev, err := h.stack.Appender.NewEvent(req, "test", "")
	require.NoError(h.t, err)
	_, err = h.stack.Appender.Append(context.Background(), ev)
	require.NoError(h.t, err)
	return req.InvestigationID
}

// waitEnd waits until the investigation's trail ends (completed or
// failed) and returns the trail.
func (h *harness) waitEnd(investigationID string, timeout time.Duration) []events.Event {
	h.t.Helper()
	var trail []events.Event
	testenv.Eventually(h.t, timeout, func() (bool, string) {
		trail = h.trail(investigationID)
		kinds := types(trail)
		if len(kinds) > 0 && (kinds[len(kinds)-1] == "completed" || kinds[len(kinds)-1] == "failed") {
			return true, ""
		}
		return false, strings.Join(kinds, ",")
	})
	return trail
}

// A configured run uses the configuration's model, prompt version,
// validator model and policy, and offers author_context, whose answer (the
// author's other post and its published claim, fenced) is recorded in the
// trail; the default run of the author's other post runs as it always did.
func TestConfiguredRunUsesItsConfiguration(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	author := &events.AuthorV1{PlatformUserID: "author-e2e-1", DisplayName: "An Author"}
	first := &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	first.install(h.fake)
	h.startWorkers("worker-a")

	// The author's other post, under the default configuration.
	other := h.registerBy(author, "cfgother1", false, body...)
	h.request(other, events.RequestSourceInvestigateNow)
	done := h.waitStatus(other, 30*time.Second, events.StatusComplete)
	require.Len(t, done.Claims, 1)
	var defaultPolicy string
	for _, ev := range h.trail(other.investigationID) {
		switch p := ev.Payload.(type) {
		case *events.InvestigationAttemptStartedV1:
			require.Equal(t, "investigator-fresh", p.Prompt.Name)
			require.Equal(t, investigator.DefaultInvestigatorPromptVersion, p.Prompt.Version, "the default stays on v1")
			require.Equal(t, "gpt-test", p.Model)
			for _, tool := range p.Tools {
				require.NotEqual(t, investigator.AuthorContextToolName, tool.Name, "the default never offers author_context")
			}
		case *events.InvestigationClaimAssessedV1:
			defaultPolicy = p.PolicyVersion
		case *events.InvestigationCompletedV1:
			require.Equal(t, "investigator-fresh@v1", p.PromptVersion)
			require.Equal(t, events.DefaultConfigurationID, p.ConfigurationID)
		}
	}
	require.Equal(t, evidence.DefaultPolicy().Version(), defaultPolicy)

	// This post, by the same author, under the candidate configuration.
	second := &brain{submit: []tools.Correction{correction(wall, "It is not visible from the Moon.")},
		approve: map[string]bool{wall: true}, authorContext: true}
	second.install(h.fake)
	spec := candidate()
	p := h.registerBy(author, "cfgthis01", false, body[2], body[1])
	id := h.requestUnder(p, &spec)
	require.NotEqual(t, p.investigationID, id, "one investigation per version and configuration")
	trail := h.waitEnd(id, 30*time.Second)

	var started *events.InvestigationAttemptStartedV1
	var input *events.InvestigationInputSnapshottedV1
	var completed *events.InvestigationCompletedV1
	var assessed []*events.InvestigationClaimAssessedV1
	var validated []*events.InvestigationClaimValidatedV1
	var authorOutputs []string
	for _, ev := range trail {
		switch p := ev.Payload.(type) {
		case *events.InvestigationAttemptStartedV1:
			started = p
		case *events.InvestigationInputSnapshottedV1:
			input = p
		case *events.InvestigationCompletedV1:
			completed = p
		case *events.InvestigationClaimAssessedV1:
			assessed = append(assessed, p)
		case *events.InvestigationClaimValidatedV1:
			validated = append(validated, p)
		case *events.InvestigationExchangeRecordedV1:
			for _, r := range p.ToolResults {
				if r.Name == investigator.AuthorContextToolName {
					authorOutputs = append(authorOutputs, r.Output)
				}
			}
		}
	}
	require.NotNil(t, completed, "trail: %v", types(trail))
	require.Equal(t, "investigator-fresh", started.Prompt.Name)
	require.Equal(t, "v2", started.Prompt.Version)
	require.Equal(t, "gpt-candidate", started.Model)
	require.Contains(t, started.Instructions, "demonstrably false", "the v2 text went to the model")
	var offered []string
	for _, tool := range started.Tools {
		offered = append(offered, tool.Name)
	}
	require.Contains(t, offered, investigator.AuthorContextToolName)
	require.Equal(t, events.ConfigurationID(spec), input.ConfigurationID)
	require.Equal(t, events.ConfigurationID(spec), completed.ConfigurationID)
	require.Equal(t, "investigator-fresh@v2", completed.PromptVersion)
	require.Equal(t, "gpt-candidate", completed.Model)
	require.Len(t, validated, 1)
	require.Equal(t, "gpt-candidate-validator", validated[0].Model)
	require.Equal(t, "v1", validated[0].Prompt.Version)
	require.Len(t, assessed, 1)
	require.Equal(t, evidence.ValidatorOnlyPolicy().Version(), assessed[0].PolicyVersion)
	require.Equal(t, evidence.PublishValidatorOnly, assessed[0].PublishMode)
	require.Len(t, completed.Claims, 1)

	// The author_context answer: recorded once, fenced, and holding the
	// other post's published claim (not this post's own).
	require.Len(t, authorOutputs, 1)
	out := authorOutputs[0]
	require.Contains(t, out, "<<<UNTRUSTED-DATA-BEGIN ")
	require.Contains(t, out, `"quote":"`+eiffel)
	require.Contains(t, out, `"correction":"It was completed in 1889."`)
	require.Contains(t, out, "cfgother1")
	require.NotContains(t, out, "cfgthis01")

	// Every request the fake received for stage 1 and the validator used
	// the configured models.
	models := map[string]bool{}
	for _, r := range h.fake.RequestsTo(fakeopenai.Responses) {
		if m, _ := r.JSON()["model"].(string); m != "" {
			models[m] = true
		}
	}
	require.True(t, models["gpt-candidate"] && models["gpt-candidate-validator"], "%v", models)
}

// A post without a known author gets an explicit empty answer.
func TestAuthorContextWithoutAuthor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{authorContext: true}
	b.install(h.fake)
	h.startWorkers("worker-a")
	spec := candidate()
	p := h.register("cfgnoauth", false, body...)
	trail := h.waitEnd(h.requestUnder(p, &spec), 30*time.Second)
	var outputs []string
	for _, ev := range trail {
		if ex, ok := ev.Payload.(*events.InvestigationExchangeRecordedV1); ok {
			for _, r := range ex.ToolResults {
				if r.Name == investigator.AuthorContextToolName {
					outputs = append(outputs, r.Output)
				}
			}
		}
	}
	require.Equal(t, []string{`{"message":"This post has no known author, so there is no author context.","status":"no_author"}`}, outputs)
	require.Equal(t, "completed", types(trail)[len(types(trail))-1])
}

// A configuration the worker cannot honour fails at once, before any
// input or model call, with the reason in the events.
func TestConfigurationTheWorkerCannotRunFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, investigator.Config{})
	b := &brain{}
	b.install(h.fake)
	h.startWorkers("worker-a")
	for _, tc := range []struct {
		name, external, kind, reason string
		edit                         func(c *events.AnalysisConfigurationV1)
	}{
		{"another provider", "cfgprov01", investigator.FailureKindConfigurationProvider,
			`configuration "candidate-e2e" needs provider chat-completions, but this worker runs openai-responses`,
			func(c *events.AnalysisConfigurationV1) { c.Provider = "chat-completions" }},
		{"an unknown policy", "cfgpol001", investigator.FailureKindConfigurationPolicy,
			`configuration "candidate-e2e" names evidence policy strict-v1@000000000000, which this worker does not know`,
			func(c *events.AnalysisConfigurationV1) { c.Policy = "strict-v1@000000000000" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := candidate()
			tc.edit(&spec)
			p := h.register(tc.external, false, body...)
			trail := h.waitEnd(h.requestUnder(p, &spec), 30*time.Second)
			require.Equal(t, []string{"requested", "attempt_failed", "failed"}, types(trail))
			af := trail[1].Payload.(*events.InvestigationAttemptFailedV1)
			require.Equal(t, events.FailureNonRetryable, af.Class)
			require.Equal(t, tc.kind, af.Kind)
			require.Contains(t, af.Message, tc.reason)
			f := trail[2].Payload.(*events.InvestigationFailedV1)
			require.Contains(t, f.Reason, tc.reason)
			require.Equal(t, events.ConfigurationID(spec), f.ConfigurationID)
		})
	}
	require.Zero(t, b.stage1Turns, "no model was asked")
}
