package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// TestIntegrationInvestigateNowAssignment: with an experiment running,
// investigateNow requests each new investigation under its version's arm
// (deterministic, recorded in the request), answers with that
// investigation's id, and a repeated call answers with the same one.
func TestIntegrationInvestigateNowAssignment(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	ctx := context.Background()
	reader := serving.NewReader(b.pool)
	srv, err := New(Config{MinExtensionVersion: "0.2.0", ReadYourWritesTimeout: 15 * time.Second, OpenAIBaseURL: unreachableOpenAI},
		ingest.NewService(b.appender), reader, pgproj.NewWatermark(b.pool, serving.ProjectorName),
		ingest.NewHasher(testHashSecret), testLogger(t),
		WithInvestigations(investigations.New(b.appender, nil, nil), reader),
		WithAssigner(investigations.NewServingAssigner(reader)))
	require.NoError(t, err)

	added, err := apikeys.NewService(b.appender).Add(ctx, "assignment test")
	require.NoError(t, err)
	b.waitApplied(t, added.Position)
	ctl := control.New(reader, b.appender, prompts.Default(), evidence.Policies())
	decision := control.Decision{Operator: "test@host", Reason: "compare the small model"}
	declared, err := ctl.Declare(ctx, control.Declaration{Name: "mini", Model: "gpt-5-mini", InvestigatorPrompt: "v1",
		ValidatorPrompt: "v1", Policy: "strict-v1", Decision: decision})
	require.NoError(t, err)
	b.waitApplied(t, declared.Position)
	started, err := ctl.StartExperiment(ctx, control.ExperimentStart{Name: "mini-test", Candidate: "mini", ShareBP: 5000, Decision: decision})
	require.NoError(t, err)
	b.waitApplied(t, started.Position)

	investigateNow := func(versionID string) string {
		r := do(t, srv, request{path: "/trpc/post.investigateNow", headers: map[string]string{HeaderAPIKey: added.Key.Reveal()},
			body: mustRaw(t, map[string]any{"postVersionId": versionID})})
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		var out struct {
			InvestigationID string `json:"investigationId"`
			Status          string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
		require.Equal(t, events.StatusPending, out.Status)
		return out.InvestigationID
	}
	arms := map[string]int{}
	for i := range 8 {
		v := registerX(t, b, fmt.Sprint(1790000000000000700+i), fmt.Sprintf("Assignment post number %d.", i), nil)
		arm := events.ExperimentArm(started.ID, v, 5000)
		configurationID := ""
		if arm == events.ArmCandidate {
			configurationID = declared.ID
		}
		want := events.InvestigationIDFor(v, configurationID)
		require.Equal(t, want, investigateNow(v), "the id names the version under its arm's configuration")
		var gotConfig, gotExperiment, gotArm string
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT configuration_id, experiment_id::text, arm FROM investigations WHERE id = $1`,
			want).Scan(&gotConfig, &gotExperiment, &gotArm))
		require.Equal(t, []string{configurationID, started.ID, arm}, []string{gotConfig, gotExperiment, gotArm})
		require.Equal(t, want, investigateNow(v), "a repeated call answers with the visible investigation")
		var n int
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM investigations WHERE post_version_id = $1`, v).Scan(&n))
		require.Equal(t, 1, n, "nothing new is requested for a version with a visible investigation")
		arms[arm]++
	}
	require.Len(t, arms, 2, "both arms get versions: %v", arms)
}
