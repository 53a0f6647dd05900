package verdict_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

func TestRubricVersion(t *testing.T) {
	r := verdict.DefaultRubric()
	require.NoError(t, r.Validate())
	require.Regexp(t, `^factsocial-v1@[0-9a-f]{12}$`, r.Version())
	require.Equal(t, r.Version(), verdict.DefaultRubric().Version(), "the version is a function of the content")

	changed := verdict.DefaultRubric()
	changed.Caps.NoSearchTimeSensitive = 41
	require.NotEqual(t, r.Version(), changed.Version(), "same name, other numbers: another version")
	relabelled := verdict.DefaultRubric()
	relabelled.BandLabels[events.BandLeaningTrue] = events.LabelMixed
	require.NotEqual(t, r.Version(), relabelled.Version())
	require.NotEqual(t, relabelled.BandLabels[events.BandLeaningTrue], verdict.DefaultRubric().BandLabels[events.BandLeaningTrue],
		"DefaultRubric returns a fresh map every time")
}

func TestRubricValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*verdict.Rubric)
		want   string
	}{
		{"no name", func(r *verdict.Rubric) { r.Name = "" }, "name is empty"},
		{"specificity", func(r *verdict.Rubric) { r.MinSpecificity = 1.5 }, "min_specificity 1.5 is outside [0, 1]"},
		{"inverted range", func(r *verdict.Rubric) { r.Truth.Refuted = verdict.Range{Min: 30, Max: 10} }, "truth.refuted 30..10 is not a range within 0..100"},
		{"range beyond 100", func(r *verdict.Rubric) { r.Confidence.High = verdict.Range{Min: 90, Max: 101} }, "confidence.high 90..101"},
		{"cap beyond 100", func(r *verdict.Rubric) { r.Caps.SingleLowTier = 120 }, "single_low_tier_source 120 is outside 0..100"},
		{"tier", func(r *verdict.Rubric) { r.Caps.LowTierFrom = 6 }, "low_tier_from a tier (1-5)"},
		{"band without a label", func(r *verdict.Rubric) { delete(r.BandLabels, events.BandMixed) }, `band MIXED needs a label (any but Opinion and Misleading), not ""`},
		{"band labelled Opinion", func(r *verdict.Rubric) { r.BandLabels[events.BandTrue] = events.LabelOpinion }, "band TRUE needs a label"},
		{"unknown band", func(r *verdict.Rubric) { r.BandLabels["SORT-OF-TRUE"] = events.LabelTrue }, "band_labels names an unknown band"},
		{"weight", func(r *verdict.Rubric) { r.Aggregate.KeyFalseWeight = 0.5 }, "key_false_weight must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := verdict.DefaultRubric()
			tt.change(&r)
			require.ErrorContains(t, r.Validate(), tt.want)
		})
	}
}

// Several errors are always listed in the same order (the rubric's own).
func TestRubricValidateOrder(t *testing.T) {
	r := verdict.DefaultRubric()
	r.Confidence.None = verdict.Range{Min: -1, Max: 0}
	r.Truth.Supported = verdict.Range{Min: 50, Max: 40}
	r.OpinionConfidence = 101
	r.Caps.NoSearchTimeSensitive = -5
	want := "truth.supported 50..40 is not a range within 0..100\n" +
		"confidence.none -1..0 is not a range within 0..100\n" +
		"no_search_time_sensitive -5 is outside 0..100\n" +
		"opinion_confidence 101 is outside 0..100"
	for range 20 {
		require.EqualError(t, r.Validate(), want)
	}
}
