package verdict_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

// Every boundary of FactHarbor's bands, on both sides; confidence only
// matters between 43 and 57, where 45 divides MIXED from UNVERIFIED.
func TestBandBoundaries(t *testing.T) {
	tests := []struct {
		truth, conf int
		want        string
	}{
		{-5, 90, events.BandFalse},
		{0, 90, events.BandFalse},
		{14, 90, events.BandFalse},
		{15, 90, events.BandMostlyFalse},
		{28, 90, events.BandMostlyFalse},
		{29, 90, events.BandLeaningFalse},
		{42, 90, events.BandLeaningFalse},
		{42, 10, events.BandLeaningFalse},
		{43, 44, events.BandUnverified},
		{43, 45, events.BandMixed},
		{50, 0, events.BandUnverified},
		{50, 100, events.BandMixed},
		{57, 44, events.BandUnverified},
		{57, 45, events.BandMixed},
		{58, 44, events.BandLeaningTrue},
		{58, 90, events.BandLeaningTrue},
		{71, 90, events.BandLeaningTrue},
		{72, 90, events.BandMostlyTrue},
		{85, 90, events.BandMostlyTrue},
		{86, 90, events.BandTrue},
		{86, 0, events.BandTrue},
		{100, 90, events.BandTrue},
		{140, 90, events.BandTrue},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d_%d", tt.truth, tt.conf), func(t *testing.T) {
			require.Equal(t, tt.want, verdict.Band(tt.truth, tt.conf))
		})
	}
}

// Every truth percentage lands in exactly one band, and every band is
// reached.
func TestBandCoversTheScale(t *testing.T) {
	seen := map[string]bool{}
	for truth := 0; truth <= 100; truth++ {
		for _, conf := range []int{0, 44, 45, 100} {
			b := verdict.Band(truth, conf)
			require.Contains(t, events.Bands, b)
			seen[b] = true
		}
	}
	require.Len(t, seen, len(events.Bands))
}

// The label follows the band (a post of one researched claim keeps its
// truth and confidence), then coherence.
func TestLabelRules(t *testing.T) {
	tests := []struct {
		truth, conf int
		label       string
		demoted     string
		finalConf   int
	}{
		{100, 90, events.LabelTrue, "", 90},
		{86, 90, events.LabelTrue, "", 90},
		{85, 90, events.LabelMostlyTrue, "", 90},
		{72, 90, events.LabelMostlyTrue, "", 90},
		{71, 90, events.LabelMostlyTrue, "", 90},
		{58, 90, events.LabelMostlyTrue, "", 90},
		{57, 45, events.LabelMixed, "", 45},
		{43, 45, events.LabelMixed, "", 45},
		{57, 44, events.LabelUnverifiable, "", 40},
		{43, 41, events.LabelUnverifiable, "", 40},
		{50, 12, events.LabelUnverifiable, "", 12},
		{42, 90, events.LabelFalse, "", 90},
		{29, 90, events.LabelFalse, "", 90},
		{28, 90, events.LabelFalse, "", 90},
		{15, 90, events.LabelFalse, "", 90},
		{14, 90, events.LabelFalse, "", 90},
		{0, 90, events.LabelFalse, "", 90},
		{0, 40, events.LabelFalse, "", 40},
		{0, 39, events.LabelUnverifiable, events.LabelFalse, 39},
		{95, 39, events.LabelUnverifiable, events.LabelTrue, 39},
		{60, 20, events.LabelUnverifiable, events.LabelMostlyTrue, 20},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d_%d", tt.truth, tt.conf), func(t *testing.T) {
			res := verdict.DefaultRubric().Post(verdict.PostInput{Claims: []verdict.ClaimResult{
				{Researched: true, TruthPercent: tt.truth, Confidence: tt.conf, Caps: []verdict.Cap{}}}})
			require.Equal(t, tt.label, res.Label)
			require.Equal(t, tt.demoted, res.Demoted)
			require.Equal(t, tt.finalConf, res.Confidence)
			require.Equal(t, verdict.Band(tt.truth, tt.finalConf), res.Band)
		})
	}
}
