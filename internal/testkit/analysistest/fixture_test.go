package analysistest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/testkit/analysistest"
)

// TestFixtureIsValid: every event validates (New panics otherwise), ids
// are stable, and event ids are unique.
func TestFixtureIsValid(t *testing.T) {
	a, b := analysistest.New("x"), analysistest.New("x")
	require.Equal(t, a.CompleteID, b.CompleteID)
	require.Len(t, a.Complete, 21)
	require.Len(t, a.Opinion, 7)
	require.Len(t, a.Failed, 7)
	seen := map[string]bool{}
	for _, ev := range a.All() {
		require.False(t, seen[ev.ID], ev.ID)
		seen[ev.ID] = true
	}
	require.NotEqual(t, analysistest.New("y").CompleteID, a.CompleteID)
}
