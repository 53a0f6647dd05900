package serving

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

// TestAnalysisState: the status, current attempt, failure and completion
// time an analysis's attempts and their ends give, whatever the order they
// were applied in (the maps hold no order).
func TestAnalysisState(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	s := func(ns ...int) map[int]analysisAttempt {
		m := map[int]analysisAttempt{}
		for _, n := range ns {
			m[n] = analysisAttempt{}
		}
		return m
	}
	done := attemptEnd{outcome: AnalysisOutcomeCompleted, at: at}
	retry := attemptEnd{outcome: AnalysisOutcomeFailed, reason: "busy", retryable: true, at: at}
	final := attemptEnd{outcome: AnalysisOutcomeFailed, reason: "gave up", at: at}
	reason := "gave up"
	for _, tc := range []struct {
		name    string
		started map[int]analysisAttempt
		ended   map[int]attemptEnd
		want    analysisState
	}{
		{"requested only", nil, nil, analysisState{status: events.StatusPending}},
		{"running", s(1), nil, analysisState{status: events.StatusRunning, attempt: 1}},
		{"retry pending", s(1), map[int]attemptEnd{1: retry}, analysisState{status: events.StatusPending, attempt: 1}},
		{"second attempt runs", s(1, 2), map[int]attemptEnd{1: retry}, analysisState{status: events.StatusRunning, attempt: 2}},
		{"failed for good", s(1, 2), map[int]attemptEnd{1: retry, 2: final}, analysisState{status: events.StatusFailed, attempt: 2, failure: &reason}},
		{"an end before its start", nil, map[int]attemptEnd{1: final}, analysisState{status: events.StatusFailed, attempt: 1, failure: &reason}},
		{"complete", s(1, 2), map[int]attemptEnd{1: retry, 2: done}, analysisState{status: events.StatusComplete, attempt: 2, completedAt: &at}},
		{"complete beats a later attempt", s(1, 2), map[int]attemptEnd{1: done}, analysisState{status: events.StatusComplete, attempt: 1, completedAt: &at}},
		{"a failure after a completion", s(1, 2), map[int]attemptEnd{1: done, 2: final}, analysisState{status: events.StatusComplete, attempt: 1, completedAt: &at}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, stateOf(tc.started, tc.ended))
		})
	}
}
