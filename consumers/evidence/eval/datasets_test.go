package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
)

// The label mapping tables are the documented ones, exactly.
func TestLabelMappings(t *testing.T) {
	require.Equal(t, map[string]evidence.Stance{
		"SUPPORTS":        {Entail: 1},
		"REFUTES":         {Contradict: 1},
		"NOT_ENOUGH_INFO": {Neutral: 1},
	}, climateFeverStance)
	require.Equal(t, map[string]evidence.Stance{
		"completely-support": {Entail: 1},
		"partially-support":  {Entail: 0.6, Neutral: 0.4},
		"refute":             {Contradict: 1},
		"irrelevant":         {Neutral: 1},
	}, fcbStance)
	for _, m := range []map[string]evidence.Stance{climateFeverStance, fcbStance} {
		for label, s := range m {
			require.NoError(t, s.Validate(), label)
		}
	}
	// Partial support agrees and blocks a flag, but never reaches
	// Supported or Contested on its own.
	pol := evidence.DefaultPolicy().Rules()
	partial := fcbStance["partially-support"]
	require.GreaterOrEqual(t, partial.Entail, pol.AgreeEntail)
	require.GreaterOrEqual(t, partial.Entail, pol.Publish.SupportBlockAt)
	require.Less(t, partial.Entail, pol.SupportedEMax)
	require.Less(t, partial.Entail, pol.ContestedEMax)

	require.Equal(t, []string{"SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO", "DISPUTED"}, climateFeverLabels)
	require.Equal(t, []string{"true", "false", "not_enough_evidence"}, fcbFactualityLabels)

	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{[]string{"refute", "irrelevant"}, "refute"},
		{[]string{"refute", "partially-support"}, "refute"},
		{[]string{"refute", "completely-support"}, "refute+support"},
		{[]string{"refute", "completely-support", "partially-support"}, "refute+support"},
		{[]string{"partially-support", "irrelevant"}, "support"},
		{[]string{"completely-support"}, "support"},
		{[]string{"irrelevant", "irrelevant"}, "irrelevant-only"},
		{nil, "irrelevant-only"},
	} {
		var ev []Gold
		for _, l := range tc.labels {
			ev = append(ev, Gold{Label: l})
		}
		require.Equal(t, tc.want, fcbStanceClaimLabel(ev), "%v", tc.labels)
	}
}

func TestWikipediaURL(t *testing.T) {
	require.Equal(t, "https://en.wikipedia.org/wiki/Global_warming", wikipediaURL("Global warming"))
	require.Equal(t, "https://en.wikipedia.org/wiki/List_of_ecoregions_in_North_America_%28CEC%29", wikipediaURL("List of ecoregions in North America (CEC)"))
	require.Equal(t, "https://en.wikipedia.org/wiki/AC%2FDC%3F%23x", wikipediaURL("AC/DC?#x"))
}

func TestDefaultEvidenceFile(t *testing.T) {
	require.Equal(t, filepath.Join("d", "factcheck-bench.subtask3_claim_evidence_stance.test.jsonl"),
		DefaultEvidenceFile(filepath.Join("d", "factcheck-bench.subtask4_claim_factuality.test.jsonl")))
	require.Equal(t, filepath.Join("d", "factcheck-bench.subtask3_claim_evidence_stance.dev.jsonl"),
		DefaultEvidenceFile(filepath.Join("d", "mine.jsonl")))
}

const cfGood = `{"claim_id":"1","claim":"c","claim_label":"SUPPORTS","evidences":[{"evidence_id":"A:1","evidence_label":"SUPPORTS","article":"A","evidence":"e"}]}`

func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "d.jsonl")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return p
}

// A malformed line is an error naming the file and line, never a silent
// skip: a measurement must not lose records unnoticed.
func TestMalformedLines(t *testing.T) {
	huge := `{"claim_id":"2","claim":"` + strings.Repeat("x", 1<<20) + `","claim_label":"SUPPORTS","evidences":[]}`
	for _, tc := range []struct {
		name    string
		dataset string
		line    string
		want    string
	}{
		{"bad JSON", ClimateFever, `{"claim_id":"2",`, "d.jsonl:2: not a JSON record: unexpected end of JSON input"},
		{"trailing data", ClimateFever, cfGood + ` {}`, "d.jsonl:2: not a JSON record: invalid character '{' after top-level value"},
		{"not an object", ClimateFever, `[1,2]`, "d.jsonl:2: not a JSON record: json: cannot unmarshal array into Go value of type eval.climateFeverRecord"},
		{"raw NUL byte", ClimateFever, "{\"claim_id\":\"2\x00\"}", "d.jsonl:2: not a JSON record: invalid character '\\x00' in string literal"},
		{"unknown claim label", ClimateFever, strings.Replace(cfGood, `"claim_label":"SUPPORTS"`, `"claim_label":"MOSTLY_TRUE"`, 1),
			`d.jsonl:2: claim_label "MOSTLY_TRUE" is unknown (known: SUPPORTS, REFUTES, NOT_ENOUGH_INFO, DISPUTED)`},
		{"unknown evidence label", ClimateFever, strings.Replace(cfGood, `"evidence_label":"SUPPORTS"`, `"evidence_label":"supports"`, 1),
			`d.jsonl:2: evidences[0].evidence_label "supports" is unknown (known: NOT_ENOUGH_INFO, REFUTES, SUPPORTS)`},
		{"missing evidences", ClimateFever, `{"claim_id":"2","claim":"c","claim_label":"REFUTES"}`, "d.jsonl:2: evidences are missing"},
		{"empty evidences", ClimateFever, `{"claim_id":"2","claim":"c","claim_label":"REFUTES","evidences":[]}`, "d.jsonl:2: evidences are missing"},
		{"missing claim", ClimateFever, `{"claim_id":"2","claim_label":"REFUTES","evidences":[]}`, "d.jsonl:2: claim is empty"},
		{"escaped NUL in claim", ClimateFever, strings.Replace(cfGood, `"claim":"c"`, `"claim":"c\u0000"`, 1), "d.jsonl:2: claim contains NUL (U+0000)"},
		{"blank article", ClimateFever, strings.Replace(cfGood, `"article":"A"`, `"article":" "`, 1), "d.jsonl:2: evidences[0].article is empty"},
		{"numeric claim id", ClimateFever, strings.Replace(cfGood, `"claim_id":"1"`, `"claim_id":1`, 1),
			"d.jsonl:2: not a JSON record: json: cannot unmarshal number into Go struct field climateFeverRecord.claim_id of type string"},
		{"1 MB line", ClimateFever, huge, "d.jsonl:2: line longer than 262144 bytes"},
		{"stance: unknown label", FCBStance, `{"claim":"c","evidence":"e","stance":"supports"}`,
			`d.jsonl:2: stance "supports" is unknown (known: completely-support, irrelevant, partially-support, refute)`},
		{"stance: missing evidence", FCBStance, `{"claim":"c","stance":"refute"}`, "d.jsonl:2: evidence is empty"},
		{"stance: only NUL evidence", FCBStance, `{"claim":"c","evidence":"\u0000\u0000","stance":"refute"}`, "d.jsonl:2: evidence is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := cfGood
			if tc.dataset == FCBStance {
				first = `{"claim":"c","evidence":"e","stance":"refute"}`
			}
			p := writeLines(t, first, tc.line)
			_, err := Load(tc.dataset, p, LoadOptions{})
			require.EqualError(t, err, filepath.Join(filepath.Dir(p), tc.want))
		})
	}
}

func TestMalformedFactuality(t *testing.T) {
	dir := t.TempDir()
	stance := filepath.Join(dir, "s.jsonl")
	require.NoError(t, os.WriteFile(stance, []byte(`{"claim":"c","evidence":"e","stance":"refute"}`+"\n"), 0o600))
	fact := filepath.Join(dir, "f.jsonl")
	require.NoError(t, os.WriteFile(fact, []byte(`{"claim":"c","label":"true"}`+"\n"+`{"claim":"d","label":"mostly-true"}`+"\n"), 0o600))
	_, err := Load(FCBFactuality, fact, LoadOptions{EvidenceFile: stance})
	require.EqualError(t, err, fact+`:2: label "mostly-true" is unknown (known: true, false, not_enough_evidence)`)

	require.NoError(t, os.WriteFile(stance, []byte("not json\n"), 0o600))
	_, err = Load(FCBFactuality, fact, LoadOptions{EvidenceFile: stance})
	require.EqualError(t, err, "fcb-factuality evidence: "+stance+":1: not a JSON record: invalid character 'o' in literal null (expecting 'u')")

	_, err = Load(FCBFactuality, fact, LoadOptions{EvidenceFile: filepath.Join(dir, "absent.jsonl")})
	require.ErrorContains(t, err, "fcb-factuality evidence: open "+filepath.Join(dir, "absent.jsonl"))
}

// Blank lines, a byte-order mark, CRLF line ends and fields the engine
// does not read are accepted; NUL inside a passage is removed and counted.
func TestTolerated(t *testing.T) {
	p := writeLines(t, "\uFEFF"+cfGood+"\r", "", "   ",
		strings.Replace(cfGood, `"evidence":"e"`, `"evidence":"e\u0000x","votes":[null],"entropy":0.5`, 1))
	set, err := Load(ClimateFever, p, LoadOptions{})
	require.NoError(t, err)
	require.Len(t, set.Items, 2)
	require.Equal(t, 4, set.Lines)
	require.Equal(t, 4, set.Items[1].Line)
	require.Equal(t, 1, set.NULPassages)
	require.Equal(t, "A: ex", set.Items[1].Evidence[0].Text)
	require.Equal(t, Gold{Text: "A: e", Label: "SUPPORTS", Stance: evidence.Stance{Entail: 1}, Domain: "wikipedia:A",
		URL: "https://en.wikipedia.org/wiki/A", Tier: 2, Rule: "eval: each Wikipedia article an independent tier-2 source"}, set.Items[0].Evidence[0])
}

func TestUnknownDatasetAndTriage(t *testing.T) {
	_, err := Load("fever", "x", LoadOptions{})
	require.EqualError(t, err, `dataset "fever" is unknown (known: climate-fever, fcb-stance, fcb-factuality, fcb-checkworthiness)`)
	_, err = Load(FCBCheckworthiness, "x", LoadOptions{})
	require.ErrorIs(t, err, ErrTriageDataset)
	require.EqualError(t, err, "fcb-checkworthiness measures triage, not the evidence engine: read it with LoadTriage")
	_, err = Load(ClimateFever, "x", LoadOptions{Limit: -1})
	require.EqualError(t, err, "limit -1 is negative")
}
