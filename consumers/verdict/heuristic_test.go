package verdict_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

func TestHeuristicTriage(t *testing.T) {
	tests := []struct {
		text       string
		kind       string
		spec       float64
		reason     string
		flags      [3]bool // time-sensitive, current events, numeric
		researched bool
	}{
		{"In 1980, the oldest justice on the United States Supreme Court was Justice William O. Douglas.", events.TriageFactual, 1,
			"an assertion with no opinion, instruction or future marker", [3]bool{false, false, true}, true},
		{"Research shows that coffee raises blood pressure by 5 percent.", events.TriageFactual, 0.7,
			"an assertion with no opinion, instruction or future marker", [3]bool{false, false, true}, true},
		{"The best-selling album of 1982 was Thriller.", events.TriageFactual, 0.9,
			"an assertion with no opinion, instruction or future marker", [3]bool{false, false, true}, true},
		{"The president is currently in Paris for talks announced today.", events.TriageFactual, 0.6,
			"an assertion with no opinion, instruction or future marker", [3]bool{true, true, false}, true},
		{"Is there something else you would like to know?", events.TriageNotAClaim, 0.4, "a question", [3]bool{}, false},
		{"Some reasons for this include:", events.TriageNotAClaim, 0.1, "an introduction to what follows", [3]bool{}, false},
		{"Sure, here are some other Chinese scholars.", events.TriageNotAClaim, 0.3, `an assistant's or greeter's phrase ("sure")`, [3]bool{}, false},
		{"As a language model, I cannot see colours.", events.TriageNotAClaim, 0.4, `an assistant's or greeter's phrase ("as a language model")`, [3]bool{}, false},
		{"Enjoy your iced matcha latte!", events.TriageNotAClaim, 0.3, `an assistant's or greeter's phrase ("enjoy")`, [3]bool{}, false},
		{"To find the best interior decorator and best price, you can follow these steps:1.", events.TriageNotAClaim, 0.7,
			"an instruction (a purpose clause)", [3]bool{false, false, true}, false},
		{"Research online to find interior decorators in your area.", events.TriageNotAClaim, 0.4, `an instruction (starts with "research")`, [3]bool{}, false},
		{"It is important to ensure that the paint used is safe for sheep.", events.TriageOpinion, 0.4,
			`a view, recommendation or hedge ("it is important")`, [3]bool{}, false},
		{"Terraform modules can be easily tested.", events.TriageOpinion, 0.3, `an evaluative word without any figure ("easily")`, [3]bool{}, false},
		{"Things are getting worse.", events.TriageOpinion, 0.1, `an evaluative word without any figure ("worse")`, [3]bool{}, false},
		{"The detection of gravitational waves would be a major scientific discovery.", events.TriagePrediction, 0.4,
			`a future or hypothetical marker ("would")`, [3]bool{}, false},
		{"Bitcoin will hit $200,000 next year.", events.TriagePrediction, 0.6, `a future or hypothetical marker ("will")`, [3]bool{false, false, true}, false},
		{"", events.TriageNotAClaim, 0, "no words", [3]bool{}, false},
		{" \x00 ... ", events.TriageNotAClaim, 0, "no words", [3]bool{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			e := verdict.HeuristicTriage(tt.text)
			require.Equal(t, tt.kind, e.Kind)
			require.Equal(t, tt.spec, e.Specificity)
			require.Equal(t, "heuristic: "+tt.reason, e.Reason)
			require.Equal(t, tt.flags, [3]bool{e.TimeSensitive, e.CurrentEvents, e.Numeric})
			ok, _ := verdict.Researched(e)
			require.Equal(t, tt.researched, ok)
			require.Equal(t, strings.Join(strings.Fields(tt.text), " "), e.Text)
		})
	}
}

// Whatever the input, the baseline answers a valid triage.
func FuzzHeuristicTriage(f *testing.F) {
	for _, s := range []string{"", "a?", "To do it, you go.", "Ünïcödé 12 %", "\xff\xfe", strings.Repeat("will ", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := verdict.HeuristicTriage(s)
		require.Contains(t, []string{events.TriageFactual, events.TriageOpinion, events.TriagePrediction, events.TriageNotAClaim}, e.Kind)
		require.GreaterOrEqual(t, e.Specificity, 0.0)
		require.LessOrEqual(t, e.Specificity, 1.0)
		require.NotEmpty(t, e.Reason)
	})
}
