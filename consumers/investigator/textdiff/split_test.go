package textdiff

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParagraphs(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"only whitespace", " \n\t\n ", nil},
		{"one line", "  One line.  ", []string{"One line."}},
		{"single newlines", "First.\nSecond.", []string{"First.", "Second."}},
		{"blank lines and CRLF", "First.\r\n\r\n\r\nSecond.\r\n", []string{"First.", "Second."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Paragraphs(tc.text))
		})
	}
}

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"empty", "", nil},
		{"no terminator", "a heading without a period", []string{"a heading without a period"}},
		{"simple", "It rained. We stayed in! Did you? Yes.",
			[]string{"It rained.", "We stayed in!", "Did you?", "Yes."}},
		{"whitespace collapsed", "It  rained.\t\tWe  stayed.", []string{"It rained.", "We stayed."}},
		{"lower case after period", "See fig. three for details. Then go.",
			[]string{"See fig. three for details.", "Then go."}},
		{"lower case continuation", "Version 2.0 is out. it is fast.", []string{"Version 2.0 is out. it is fast."}},
		{"decimal", "Pi is about 3.14159 and e is 2.718. Both are irrational.",
			[]string{"Pi is about 3.14159 and e is 2.718.", "Both are irrational."}},
		{"e.g. and i.e.", "Some fruit, e.g. Apples, are red. Others, i.e. Bananas, are not.",
			[]string{"Some fruit, e.g. Apples, are red.", "Others, i.e. Bananas, are not."}},
		{"titles", "Dr. Smith met Mrs. Jones and Prof. Lee. They talked.",
			[]string{"Dr. Smith met Mrs. Jones and Prof. Lee.", "They talked."}},
		{"acronym", "The U.S. Senate voted. The U.K. Parliament did not.",
			[]string{"The U.S. Senate voted.", "The U.K. Parliament did not."}},
		{"initials", "J. R. R. Tolkien wrote it. It sold well.",
			[]string{"J. R. R. Tolkien wrote it.", "It sold well."}},
		{"number abbreviation", "See No. 5 in the list. It is short.",
			[]string{"See No. 5 in the list.", "It is short."}},
		{"digit starts sentence", "The war ended in 1945. 1946 was calm.",
			[]string{"The war ended in 1945.", "1946 was calm."}},
		{"closing quote", `He said "Stop." Then he left.`, []string{`He said "Stop."`, "Then he left."}},
		{"opening quote", `It was over. "Finally," she said.`, []string{"It was over.", `"Finally," she said.`}},
		{"parenthesis", "It was cheap (about $5.) Buyers liked it.", []string{"It was cheap (about $5.)", "Buyers liked it."}},
		{"typographic quotes", "She wrote “No.” “Why?” he asked.", []string{"She wrote “No.”", "“Why?” he asked."}},
		{"ellipsis", "Wait... What happened? Nothing… Really.",
			[]string{"Wait...", "What happened?", "Nothing…", "Really."}},
		{"repeated terminators", "Really?! Yes!!! Fine.", []string{"Really?!", "Yes!!!", "Fine."}},
		{"accented capital", "Il pleut. Émile reste.", []string{"Il pleut.", "Émile reste."}},
		{"ideographic", "今日は雨です。明日は晴れ！本当？", []string{"今日は雨です。", "明日は晴れ！", "本当？"}},
		{"no as a word", "I said no. Then I left.", []string{"I said no.", "Then I left."}},
		{"etc ends sentence", "Bring pens, paper, etc. The rest is provided.",
			[]string{"Bring pens, paper, etc.", "The rest is provided."}},
		{"time", "We meet at 5 p.m. Tomorrow works too.", []string{"We meet at 5 p.m. Tomorrow works too."}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Sentences(tc.text))
		})
	}
}
