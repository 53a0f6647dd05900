package queries_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence/queries"
)

func kw(texts ...string) []queries.Query {
	out := make([]queries.Query, len(texts))
	for i, t := range texts {
		out[i] = queries.Query{Text: t, Kind: queries.KindKeyword}
	}
	return out
}

func tl(text string) queries.Query { return queries.Query{Text: text, Kind: queries.KindTimeline} }

func TestDecompose(t *testing.T) {
	tests := []struct {
		name, claim, context string
		want                 queries.Plan
	}{
		{name: "seed: the spacecraft claim",
			claim: "The official number of active spacecraft orbiting Earth, as of the beginning of 2024, exceeded 9,000.",
			want:  queries.Plan{Queries: kw("active spacecraft orbiting Earth exceeded", "spacecraft orbiting Earth 2024 exceeded 9,000")}},
		{name: "he: the name in the nearest sentence",
			claim:   "He said the tariff cut doubled exports in 2023.",
			context: "Senator Jane Miller spoke in Ohio on Monday. He was wrong, critics say. Miller said the tariff cut doubled exports in 2023.",
			want:    queries.Plan{Queries: kw("Miller tariff cut doubled exports", "Miller tariff cut doubled exports 2023")}},
		{name: "she: a titled person before the claim in the post",
			claim:   "She said the tariff cut doubled exports in 2023.",
			context: "Senator Jane Miller spoke on Monday. She said the tariff cut doubled exports in 2023. Ohio is next.",
			want:    queries.Plan{Queries: kw("Jane Miller tariff cut doubled exports", "Jane Miller tariff doubled exports 2023")}},
		{name: "its: an organisation, and a causal claim",
			claim:   "Its revenue fell 12% in 2023 because of the recall.",
			context: "Acme Corp recalled 40,000 heaters last spring. Its revenue fell 12% in 2023 because of the recall.",
			want: queries.Plan{Causal: true, Queries: append(kw("Acme Corp revenue fell recall", "Acme Corp revenue 12% 2023 recall"),
				tl("Acme Corp revenue 2023 recall timeline"))}},
		{name: "the company and it stand for one name",
			claim:   "The company said it had hired 3,000 engineers.",
			context: "Shares of Nvidia rose on Tuesday. The company said it had hired 3,000 engineers.",
			want:    queries.Plan{Queries: kw("Nvidia hired engineers", "Nvidia hired 3,000 engineers")}},
		{name: "two candidates: the pronoun is dropped",
			claim:   "They raised prices by 20% in 2024 across Europe.",
			context: "Apple and Google met the regulators.",
			want:    queries.Plan{Queries: kw("raised prices Europe", "raised prices 20% 2024 Europe")}},
		{name: "two candidates and nothing else: no queries",
			claim: "It grew.", context: "Apple and Google announced results.",
			want: queries.Plan{}},
		{name: "the claim names its subject: the context is not used",
			claim:   "In 2023 Tesla said its deliveries rose 5%.",
			context: "Ford cut prices. In 2023 Tesla said its deliveries rose 5%.",
			want:    queries.Plan{Queries: kw("Tesla deliveries rose", "2023 Tesla deliveries rose 5%")}},
		{name: "a capital that only opens the sentence is not a name",
			claim: "Tesla said its deliveries rose 5% in 2023.", context: "Ford cut prices.",
			want: queries.Plan{Queries: kw("tesla deliveries rose", "tesla deliveries rose 5% 2023")}},
		{name: "a person pronoun skips an organisation",
			claim:   "He founded the charity in 1998.",
			context: "The report by Oxfam quoted Dr. Samuel Okafor at length.",
			want:    queries.Plan{Queries: kw("Samuel Okafor founded charity", "Samuel Okafor founded charity 1998")}},
		{name: "a name too far back is not used",
			claim:   "She resigned in 2019 amid the scandal.",
			context: "Senator Jane Miller spoke. a. b. c. d. e. f. Nothing else happened.",
			want:    queries.Plan{Queries: kw("resigned 2019 scandal", "resigned 2019 scandal evidence")}},
		{name: "after X, Y is causal",
			claim: "After the minimum wage rose, unemployment in Seattle increased.",
			want: queries.Plan{Causal: true, Queries: append(kw("minimum wage rose unemployment Seattle increased",
				"minimum wage unemployment Seattle increased evidence"), tl("minimum unemployment Seattle timeline"))}},
		{name: "a short causal claim gets a search word",
			claim: "Vaccines cause autism.",
			want:  queries.Plan{Causal: true, Queries: append(kw("vaccines cause autism", "vaccines cause autism evidence"), tl("vaccines autism timeline"))}},
		{name: "German, with a person resolved from the context and a causal marker",
			claim:   "Er hat die Kurse bezahlt, weil die Zeugen vorbereitet werden sollten.",
			context: "Christian Hafenecker sprach am Dienstag im Parlament. Er hat die Kurse bezahlt, weil die Zeugen vorbereitet werden sollten.",
			want: queries.Plan{Causal: true, Queries: append(kw("Christian Hafenecker Kurse bezahlt Zeugen vorbereitet",
				"Christian Hafenecker bezahlt Zeugen vorbereitet Belege"), tl("Christian Hafenecker bezahlt vorbereitet Chronologie"))}},
		{name: "German nouns are keywords, acronyms names",
			claim: "Laut Christian Hafenecker hat die ÖVP im U-Ausschuss Vorbereitungskurse für Zeugen bezahlt.",
			want:  queries.Plan{Queries: kw("Christian Hafenecker ÖVP U-Ausschuss Vorbereitungskurse bezahlt", "Christian Hafenecker ÖVP Zeugen")}},
		{name: "Cyrillic",
			claim: "Москва объявила о снижении налогов на 5% в 2024 году.",
			want:  queries.Plan{Queries: kw("москва объявила снижении налогов", "москва объявила снижении налогов 5% 2024")}},
		{name: "Japanese splits at its particles",
			claim: "東京の人口は1400万人を超えた。",
			want:  queries.Plan{Queries: kw("東京 人口 超", "東京 人口 1400万人 超")}},
		{name: "accented Latin",
			claim: "Le président Emmanuel Macron a annoncé une réduction de 15% des émissions.",
			want: queries.Plan{Queries: kw("président Emmanuel Macron annoncé réduction émissions",
				"président Emmanuel Macron réduction 15% émissions")}},
		{name: "only stopwords", claim: "It is what it was, and they did.", want: queries.Plan{}},
		{name: "empty", want: queries.Plan{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queries.Decompose(tt.claim, tt.context)
			require.Equal(t, tt.want, got)
			checkPlan(t, got)
		})
	}
}

// TestTimelineOnlyForCausalClaims is FAKTCHECK's lesson: a timeline query on
// every claim buries verdicts in noise.
func TestTimelineOnlyForCausalClaims(t *testing.T) {
	nonCausal := []string{
		"Global warming is driving polar bears toward extinction",
		"The causeway to the island opened in 1987.",
		"He left the party after the vote in March 2021.",
		"The official number of active spacecraft orbiting Earth exceeded 9,000.",
		"Aftermath: 40 houses burned in Paradise, California.",
		"The tribunal's resultant ruling was published on 4 March 2024.",
		"Die Regierung hat 2023 das Budget um 4% erhöht.",
	}
	for _, c := range nonCausal {
		p := queries.Decompose(c, "")
		require.False(t, p.Causal, c)
		for _, q := range p.Queries {
			require.Equal(t, queries.KindKeyword, q.Kind, c)
		}
	}
	causal := []string{
		"The bridge collapsed because of the storm in 2019.",
		"Emissions fell in 2020 due to the lockdowns.",
		"The rate cut led to a housing boom in Spain.",
		"The drought resulted in crop failures across Kenya.",
		"Prices rose; as a result, sales of Fiat cars dropped.",
		"Inflation was high; therefore the central bank raised rates.",
		"The protest triggered a crackdown in Minsk.",
		"After the tax cut in 2017, wages in Ohio grew.",
		"Die Preise stiegen wegen der Energiekrise in Österreich.",
	}
	for _, c := range causal {
		p := queries.Decompose(c, "")
		require.True(t, p.Causal, c)
		last := p.Queries[len(p.Queries)-1]
		require.Equal(t, queries.KindTimeline, last.Kind, c)
		checkPlan(t, p)
	}
}

func TestDecomposeHostile(t *testing.T) {
	long := strings.Repeat("word ", queries.MaxClaimBytes/5) + "Zanzibar cloves exported"
	tests := []struct {
		name, claim, context string
		want                 queries.Plan
	}{
		{name: "control characters and NUL are separators",
			claim: "Acme\x00Corp\x07 recalled\x1b 40,000\u200b heaters\r\n in 2023",
			want:  queries.Plan{Queries: kw("Acme Corp recalled heaters", "Acme Corp recalled 40,000 heaters 2023")}},
		{name: "not UTF-8", claim: "Acme\xff\xfe Corp recalled \xc3 heaters",
			want: queries.Plan{Queries: kw("Acme Corp recalled heaters", "Acme Corp recalled heaters evidence")}},
		{name: "a claim over 10 KB is cut before it is read", claim: long, want: queries.Plan{}},
		{name: "a very long word is cut to 60 bytes", claim: "The " + strings.Repeat("ä", 500) + " of Ruritania rose sharply.",
			want: queries.Plan{Queries: kw(strings.Repeat("ä", 30)+" Ruritania rose sharply", strings.Repeat("ä", 30)+" Ruritania rose sharply evidence")}},
		{name: "punctuation only", claim: strings.Repeat("!?.,;:-—'\"", 50), want: queries.Plan{}},
		{name: "emoji only", claim: "🚀🚀🚀 🔥", want: queries.Plan{}},
		{name: "invisible characters are not words", claim: "❤️ Acme\u00adCorp \u200dhired \ufe0f engineers ❤️",
			want: queries.Plan{Queries: kw("Acme Corp hired engineers", "Acme Corp hired engineers evidence")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := queries.Decompose(tt.claim, tt.context)
			require.Equal(t, tt.want, got)
			checkPlan(t, got)
		})
	}
	// A huge context with a pronoun: the name nearest the claim is used.
	ctx := strings.Repeat("Nothing to see here. ", 20000) + "Senator Jane Miller spoke."
	got := queries.Decompose("She said exports doubled in 2023.", ctx)
	require.Equal(t, queries.Plan{Queries: kw("Jane Miller exports doubled", "Jane Miller exports doubled 2023")}, got)
}

// checkPlan asserts the bounds every plan keeps.
func checkPlan(t *testing.T, p queries.Plan) {
	t.Helper()
	keywords, timelines := 0, 0
	for i, q := range p.Queries {
		switch q.Kind {
		case queries.KindKeyword:
			keywords++
			require.Zero(t, timelines, "keyword queries come first")
		case queries.KindTimeline:
			timelines++
			require.True(t, p.Causal, "a timeline query only for a causal claim")
			require.Equal(t, len(p.Queries)-1, i)
		default:
			t.Fatalf("kind %q", q.Kind)
		}
		words := strings.Fields(q.Text)
		require.GreaterOrEqual(t, len(words), queries.MinQueryWords, q.Text)
		require.LessOrEqual(t, len(words), queries.MaxQueryWords, q.Text)
		require.LessOrEqual(t, len(q.Text), queries.MaxQueryBytes, q.Text)
		require.True(t, utf8.ValidString(q.Text), q.Text)
		require.Equal(t, strings.Join(words, " "), q.Text, "single spaces")
		require.False(t, strings.ContainsFunc(q.Text, unicode.IsControl), q.Text)
	}
	require.Contains(t, []int{0, 2, 3}, keywords)
	require.LessOrEqual(t, timelines, 1)
}

// FuzzDecompose checks that Decompose never panics, keeps its bounds, and
// gives the same plan twice.
func FuzzDecompose(f *testing.F) {
	for _, s := range [][2]string{
		{"She said the tariff cut doubled exports in 2023.", "Senator Jane Miller spoke on Monday."},
		{"Its revenue fell 12% because of the recall.", "Acme Corp recalled heaters."},
		{"After the vote, they left.", "Apple and Google"},
		{"Er hat die Kurse bezahlt, weil die Zeugen vorbereitet werden sollten.", "Christian Hafenecker sprach."},
		{"東京の人口は1400万人を超えた。", ""},
		{"\x00\xff U.S. Mr. J. K. Rowling's 9,210.5 $9 40% co-op", "It. He. They. The company."},
		{strings.Repeat("ä", 300), strings.Repeat("Ö ", 300)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, claim, context string) {
		p := queries.Decompose(claim, context)
		checkPlan(t, p)
		require.Equal(t, p, queries.Decompose(claim, context))
	})
}

func BenchmarkDecompose(b *testing.B) {
	ctx := strings.Repeat("Senator Jane Miller spoke in Ohio on Monday about trade. ", 100)
	claim := "She said the tariff cut doubled exports in 2023 because the dollar fell."
	b.Run("claim", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			queries.Decompose(claim, ctx)
		}
	})
	b.Run("10KB claim, 64KB context", func(b *testing.B) {
		big := strings.Repeat("Exports of Ruritanian cheese rose 12% in 2023. ", queries.MaxClaimBytes/47)
		huge := strings.Repeat("Senator Jane Miller spoke in Ohio on Monday about trade. ", queries.MaxContextBytes/57)
		b.ReportAllocs()
		for b.Loop() {
			queries.Decompose("She said "+big, huge)
		}
	})
}
