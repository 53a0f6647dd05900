package runstate

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// A configured request keeps its configuration, what it supersedes and
// its experiment arm on the run; the first request of an investigation id
// decides them, and a later one (a retry after a failure) changes none of
// them. A default request leaves them empty.
func TestFoldConfiguredRequest(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	spec := events.AnalysisConfigurationV1{Name: "candidate-1", Model: "gpt-test-2", ValidatorModel: "gpt-test-v2",
		InvestigatorPrompt: "v2", ValidatorPrompt: "v1", Policy: "strict-v1@0123456789ab", AuthorContext: true}
	configured := func(r inv, source string) *events.InvestigationRequestedV1 {
		p := r.requested(source)
		p.ConfigurationID, p.Configuration = events.ConfigurationID(spec), &spec
		p.Supersedes, p.ExperimentID, p.Arm = r.supersedes, r.experiment, events.ArmCandidate
		return p
	}
	now := events.RequestSourceInvestigateNow

	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		tx, store := inTx(t, pool)
		r := newInv()
		r.supersedes, r.experiment = uuid.NewString(), uuid.NewString()
		fold(t, tx, step{0, configured(r, events.RequestSourceReprocess)})
		got, err := store.Run(context.Background(), r.id)
		require.NoError(t, err)
		require.Equal(t, events.ConfigurationID(spec), got.ConfigurationID)
		require.Equal(t, &spec, got.Configuration)
		require.Equal(t, r.supersedes, got.Supersedes)
		require.Equal(t, r.experiment, got.ExperimentID)
		require.Equal(t, events.ArmCandidate, got.Arm)
		require.Equal(t, events.StatusPending, got.Status)
	})
	t.Run("a later request of the same id changes none of it", func(t *testing.T) {
		t.Parallel()
		tx, store := inTx(t, pool)
		r := newInv()
		r.supersedes, r.experiment = uuid.NewString(), uuid.NewString()
		first := configured(r, now)
		later := configured(r, now)
		later.Supersedes, later.ExperimentID, later.Arm = "", "", ""
		fold(t, tx, step{0, first}, step{1, r.failed(1)}, step{2, later})
		got, err := store.Run(context.Background(), r.id)
		require.NoError(t, err)
		require.Equal(t, 2, got.Series, "investigateNow after a failure starts the next series")
		require.Equal(t, &spec, got.Configuration)
		require.Equal(t, r.supersedes, got.Supersedes)
		require.Equal(t, r.experiment, got.ExperimentID)
		require.Equal(t, events.ArmCandidate, got.Arm)
	})
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		tx, store := inTx(t, pool)
		r := newInv()
		fold(t, tx, step{0, r.requested(now)})
		got, err := store.Run(context.Background(), r.id)
		require.NoError(t, err)
		require.Equal(t, events.DefaultConfigurationID, got.ConfigurationID)
		require.Nil(t, got.Configuration)
		require.Empty(t, got.Supersedes+got.ExperimentID+got.Arm)
	})
}
