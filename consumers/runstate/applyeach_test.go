package runstate

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// A fold applies the events in order and stops at the first it cannot
// apply, naming the fold, the event's type and its id.
func TestApplyEach(t *testing.T) {
	evs := []events.Event{
		{ID: "e1", Payload: &events.InvestigationCompletedV1{InvestigationID: "i"}},
		{ID: "e2", Payload: &events.InvestigationFailedV1{InvestigationID: "i"}},
		{ID: "e3", Payload: &events.InvestigationCompletedV1{InvestigationID: "i"}},
	}
	var seen []string
	broken := errors.New("broken")
	err := ApplyEach(context.Background(), nil, evs, "some fold", func(_ context.Context, _ pgx.Tx, ev events.Event) error {
		seen = append(seen, ev.ID)
		if ev.ID == "e2" {
			return broken
		}
		return nil
	})
	require.ErrorIs(t, err, broken)
	require.EqualError(t, err, "some fold "+events.TypeInvestigationFailedV1+" e2: broken")
	require.Equal(t, []string{"e1", "e2"}, seen)

	seen = nil
	require.NoError(t, ApplyEach(context.Background(), nil, evs, "some fold", func(_ context.Context, _ pgx.Tx, ev events.Event) error {
		seen = append(seen, ev.ID)
		return nil
	}))
	require.Equal(t, []string{"e1", "e2", "e3"}, seen)
}
