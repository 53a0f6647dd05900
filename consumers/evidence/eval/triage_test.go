package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

func TestLoadTriage(t *testing.T) {
	set, err := LoadTriage("testdata/fcb-checkworthiness.hand.jsonl", 0)
	require.NoError(t, err)
	require.Equal(t, SubtaskClaim, set.Subtask)
	require.Equal(t, 9, set.Lines)
	require.Len(t, set.Items, 8)
	require.Equal(t, TriageItem{ID: "line 9", Line: 9, Text: "Enjoy your iced matcha latte!", Label: "not_a_claim"}, set.Items[7])
	require.Equal(t, []string{"factual", "opinion", "not_a_claim"}, set.Labels)
	require.Equal(t, "factual", set.Positive)

	set, err = LoadTriage("testdata/fcb-checkworthiness-sentences.hand.jsonl", 2)
	require.NoError(t, err)
	require.Equal(t, SubtaskSentence, set.Subtask)
	require.Len(t, set.Items, 2)
	require.Equal(t, "yes", set.Positive)

	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"not JSON", "{\"claim\":", ":1: not a JSON record: unexpected end of JSON input"},
		{"unknown label", `{"claim":"x","checkworthy":"maybe"}`, `:1: checkworthy "maybe" is unknown (known: factual, opinion, not_a_claim)`},
		{"the other subtask's label", `{"claim":"x","checkworthy":"yes"}`, `:1: checkworthy "yes" is unknown (known: factual, opinion, not_a_claim)`},
		{"mixed subtasks", "{\"claim\":\"x\",\"checkworthy\":\"factual\"}\n{\"sentence\":\"y\",\"checkworthy\":\"yes\"}", ":2: a sentence record in a file of claim records"},
		{"both fields", `{"claim":"x","sentence":"y","checkworthy":"factual"}`, ":1: a record has either claim or sentence, not both"},
		{"neither field", `{"checkworthy":"factual"}`, ":1: claim or sentence is missing"},
		{"empty text", `{"sentence":"  ","checkworthy":"yes"}`, ":1: sentence is empty"},
		{"NUL", `{"claim":"a\u0000b","checkworthy":"factual"}`, ":1: claim contains NUL (U+0000)"},
		{"no records", "\n\n", ": no records"},
		{"huge line", `{"claim":"` + strings.Repeat("a", MaxLineBytes) + `"}`, ":1: line longer than 262144 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".jsonl")
			require.NoError(t, os.WriteFile(f, []byte(tc.content), 0o600))
			_, err := LoadTriage(f, 0)
			require.EqualError(t, err, f+tc.want, tc.name)
		})
	}
	_, err = LoadTriage("testdata/fcb-checkworthiness.hand.jsonl", -1)
	require.EqualError(t, err, "limit -1 is negative")
}

// The gold lane measures the rule-based baseline, never a model.
func TestTriageGoldLane(t *testing.T) {
	set, err := LoadTriage("testdata/fcb-checkworthiness-sentences.hand.jsonl", 0)
	require.NoError(t, err)
	r, err := EvaluateTriage(context.Background(), set, TriageOptions{Lane: LaneGold, Triager: HeuristicTriager{}, Rubric: verdict.DefaultRubric()})
	require.NoError(t, err)
	// yes (Douglas): FACTUAL, specific: TP; not_a_claim (a question): TN;
	// other ("would"): PREDICTION, TN; opinion ("it is important"): TN;
	// yes ("Things were different"): FACTUAL but vague (0.1): FN.
	require.Equal(t, Binary{TP: 1, FN: 1, TN: 3, Precision: 1, Recall: 0.5, F1: 2.0 / 3, NegPrecision: 0.75, NegRecall: 1, Accuracy: 0.8}, r.CheckWorthy)
	require.Equal(t, Binary{TP: 2, TN: 3, Precision: 1, Recall: 1, F1: 1, NegPrecision: 1, NegRecall: 1, Accuracy: 1}, r.FactualKind)
	require.Equal(t, []Class{
		{Label: "yes", Kind: "FACTUAL", Gold: 2, Predicted: 2, Correct: 2, Precision: 1, Recall: 1, F1: 1},
		{Label: "no", Gold: 0},
		{Label: "other", Gold: 1},
		{Label: "opinion", Kind: "OPINION", Gold: 1, Predicted: 1, Correct: 1, Precision: 1, Recall: 1, F1: 1},
		{Label: "not_a_claim", Kind: "NOT_A_CLAIM", Gold: 1, Predicted: 1, Correct: 1, Precision: 1, Recall: 1, F1: 1},
	}, r.Classes)
	require.Equal(t, 1, r.Confusion["other"]["PREDICTION"])
	require.Zero(t, r.Tokens.Calls)
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	for _, want := range []string{
		"errata eval: fcb-checkworthiness, gold lane: the rule-based baseline verdict.HeuristicTriage (no LLM)\n",
		"this measures verdict.HeuristicTriage, the rule-based Gate-1 baseline an analysis falls back on, NOT the model's triage",
		"check-worthy = yes: 2 texts; not: 3\n",
		"check-worthy (Gate 1 passes)     1.0000  0.5000  0.6667",
		"not check-worthy     0.7500  1.0000  0.8571",
		"other            -     1          -        -          -       -       -",
		"cost      $0.0000\n",
	} {
		require.Contains(t, b.String(), want)
	}
}

// The provider lane sends each text through the real extraction request
// to the scripted fake (testdata/triage-script.json), whose triage differs
// from the gold labels:
//
//	factual      tower    FACTUAL 0.9              check-worthy  TP
//	factual      water    FACTUAL 0.8 + 0.6 (split) check-worthy TP
//	factual      curie    FACTUAL 0.2 (vague)       not          FN (kind FACTUAL: TP)
//	factual      wall     OPINION                   not          FN
//	factual      euro     PREDICTION                not          FN
//	opinion      abacus   OPINION                   not          TN
//	opinion      terraform FACTUAL 0.5              check-worthy FP
//	not_a_claim  latte    (no rule: no claim)       not          TN
func TestTriageProviderLane(t *testing.T) {
	sc, err := fakeopenai.LoadScript("testdata/triage-script.json")
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	set, err := LoadTriage("testdata/fcb-checkworthiness.hand.jsonl", 0)
	require.NoError(t, err)
	meter := NewMeter(llm.ChatCompletions{})
	var progress []int
	r, err := EvaluateTriage(context.Background(), set, TriageOptions{Lane: LaneProvider, Rubric: verdict.DefaultRubric(), Parallel: 3,
		Triager:  ProviderTriager{LLM: meter, Cred: llm.Credentials{BaseURL: fake.URL, APIKey: logging.Secret("sk-test")}, Model: "gpt-5-mini"},
		Progress: func(done, total int) { progress = append(progress, done*10+total) }})
	require.NoError(t, err)
	require.Equal(t, Binary{TP: 2, FP: 1, FN: 3, TN: 2, Precision: 2.0 / 3, Recall: 0.4, F1: 0.5, NegPrecision: 0.4, NegRecall: 2.0 / 3, Accuracy: 0.5},
		r.CheckWorthy)
	require.Equal(t, Binary{TP: 3, FP: 1, FN: 2, TN: 2, Precision: 0.75, Recall: 0.6, F1: 6.0 / 9, NegPrecision: 0.5, NegRecall: 2.0 / 3, Accuracy: 5.0 / 8},
		r.FactualKind)
	require.Equal(t, []Class{
		{Label: "factual", Kind: "FACTUAL", Gold: 5, Predicted: 4, Correct: 3, Precision: 0.75, Recall: 0.6, F1: 6.0 / 9},
		{Label: "opinion", Kind: "OPINION", Gold: 2, Predicted: 2, Correct: 1, Precision: 0.5, Recall: 0.5, F1: 0.5},
		{Label: "not_a_claim", Kind: "NOT_A_CLAIM", Gold: 1, Predicted: 0, Correct: 0},
	}, r.Classes)
	require.Equal(t, map[string]map[string]int{
		"factual":     {"FACTUAL": 3, "OPINION": 1, "PREDICTION": 1, "NOT_A_CLAIM": 0, "none": 0},
		"opinion":     {"FACTUAL": 1, "OPINION": 1, "PREDICTION": 0, "NOT_A_CLAIM": 0, "none": 0},
		"not_a_claim": {"FACTUAL": 0, "OPINION": 0, "PREDICTION": 0, "NOT_A_CLAIM": 0, "none": 1},
	}, r.Confusion)
	require.Equal(t, 1, r.Split)
	require.Equal(t, 1, r.NoClaims)
	require.Equal(t, 8, r.Evaluated)
	require.Zero(t, r.Errors)
	require.Len(t, progress, 8)
	require.Equal(t, 88, progress[7])

	reqs := fake.RequestsTo(fakeopenai.ChatCompletions)
	require.Len(t, reqs, 8, "one extraction call per text")
	require.Equal(t, 8, meter.Tokens().Calls)
	for _, q := range reqs {
		body := q.JSON()
		require.Equal(t, "verdict_extraction", body["response_format"].(map[string]any)["json_schema"].(map[string]any)["name"])
		require.Contains(t, string(q.Body), `### Text\n<<<UNTRUSTED-DATA-BEGIN `, "the text is fenced")
	}
}

// An answer the decoder refuses is asked again; a refused key ends the
// run at once.
func TestTriageProviderFailures(t *testing.T) {
	fake := fakeopenai.NewForTest(t)
	bad := fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: `{"claims":[{"text":"x","context":"","kind":"FACTUAL","specificity":2,"time_sensitive":false,"current_events":false,"numeric":false,"reason":""}]}`})
	good := fakeopenai.ChatReply(fakeopenai.ChatCompletion{Content: `{"claims":[{"text":"x","context":"","kind":"OPINION","specificity":0.2,"time_sensitive":false,"current_events":false,"numeric":false,"reason":"r"}]}`})
	fake.Enqueue(fakeopenai.ChatCompletions, bad, good, bad, bad)
	tr := ProviderTriager{LLM: llm.ChatCompletions{}, Cred: llm.Credentials{BaseURL: fake.URL, APIKey: logging.Secret("sk")}, Model: "m",
		Now: func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }}
	claims, err := tr.Triage(context.Background(), "Some text.")
	require.NoError(t, err)
	require.Equal(t, []verdict.Extracted{{Text: "x", Kind: "OPINION", Specificity: 0.2, Reason: "r"}}, claims)
	_, err = tr.Triage(context.Background(), "Some text.")
	require.ErrorIs(t, err, verdict.ErrAnswer)
	require.ErrorContains(t, err, "no usable extraction after 2 tries")
	require.Contains(t, string(fake.RequestsTo(fakeopenai.ChatCompletions)[0].Body), "Today's date is 2026-01-02.")

	sc, err := fakeopenai.LoadScript("testdata/triage-script.json")
	require.NoError(t, err)
	refusing := fakeopenai.NewForTest(t)
	refusing.Play(sc, nil)
	refusing.RequireAPIKey("sk-right")
	set, err := LoadTriage("testdata/fcb-checkworthiness.hand.jsonl", 0)
	require.NoError(t, err)
	_, err = EvaluateTriage(context.Background(), set, TriageOptions{Lane: LaneProvider, Rubric: verdict.DefaultRubric(), Parallel: 2,
		Triager: ProviderTriager{LLM: llm.ChatCompletions{}, Cred: llm.Credentials{BaseURL: refusing.URL, APIKey: logging.Secret("sk-wrong")}, Model: "m"}})
	var le *llm.Error
	require.ErrorAs(t, err, &le)
	require.Equal(t, 401, le.StatusCode)
	require.ErrorContains(t, err, "provider lane: line ")
	require.LessOrEqual(t, len(refusing.RequestsTo(fakeopenai.ChatCompletions)), 2, "no text starts after the refusal")
}
