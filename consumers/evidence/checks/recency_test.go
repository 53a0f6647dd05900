package checks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence/checks"
)

func TestRecency(t *testing.T) {
	ref := time.Date(2024, 3, 15, 0, 0, 0, 0, time.UTC)
	year := checks.DefaultHalfLife / 3
	tests := []struct {
		name      string
		published time.Time
		halfLife  time.Duration
		want      float64
		ok        bool
	}{
		{name: "unknown date", published: time.Time{}, want: 0, ok: false},
		{name: "seed: a month old", published: time.Date(2024, 2, 15, 0, 0, 0, 0, time.UTC), want: 0.9818, ok: true},
		{name: "same instant", published: ref, want: 1, ok: true},
		{name: "future dates weigh 1", published: ref.Add(48 * time.Hour), want: 1, ok: true},
		{name: "one half-life", published: ref.Add(-checks.DefaultHalfLife), want: 0.5, ok: true},
		{name: "two half-lives", published: ref.Add(-2 * checks.DefaultHalfLife), want: 0.25, ok: true},
		{name: "ten years", published: ref.Add(-10 * time.Duration(year)), want: 0.0992, ok: true},
		{name: "a shorter half-life", published: ref.Add(-time.Duration(year)), halfLife: time.Duration(year), want: 0.5, ok: true},
		{name: "non-positive half-life is the default", published: ref.Add(-checks.DefaultHalfLife), halfLife: -time.Hour, want: 0.5, ok: true},
		{name: "centuries old", published: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), want: 0, ok: true},
		{name: "year one", published: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), want: 0, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := checks.Recency(tt.published, ref, tt.halfLife)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, got)
		})
	}
}
