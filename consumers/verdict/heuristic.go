package verdict

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"

	"github.com/errata-dev/errata/events"
)

// HeuristicTriage is a rule-based Gate 1 for one statement, with no model:
// the baseline `errata eval --dataset fcb-checkworthiness --lane gold`
// measures, and a fallback for when no usable model answer exists. It is
// deliberately simple, and far weaker than the model's triage; the rules,
// first match wins:
//
//  1. NOT_A_CLAIM: no letters; a question (ends with "?"); an introduction
//     (ends with ":"); an assistant's or a greeter's phrase ("sure", "thank
//     you", "as a language model", "I recommend", ...); an instruction (a
//     purpose clause "To ..., ..." or a sentence that starts with an
//     imperative verb not followed by a verb or preposition).
//  2. OPINION: a first-person view ("I think", "in my opinion"), an
//     obligation or recommendation ("should", "must", "it is important"),
//     a hedge about knowledge ("it is unclear", "purely speculative"); or,
//     in a statement without any figure, an evaluative word ("best",
//     "easy", "beautiful", ...).
//  3. PREDICTION: a future or hypothetical marker ("will", "is going to",
//     "is likely to", "would", "might", "next year", ...).
//  4. FACTUAL otherwise.
//
// Specificity starts at 0.3 (a definite assertion, the low end of the
// prompt's "definite subject without precise details"): +0.3 with a
// figure, date or month; +0.2 with a capitalised name after the first word
// (+0.1 more with two or more); +0.1 with eight words or more; −0.2 with a
// vague quantifier ("some", "many", "things", ...); held in [0, 1], to two
// decimals; 0 without any word. Flags:
// TimeSensitive from words like "now", "currently", "still", "as of";
// CurrentEvents from "today", "yesterday", "this week", "breaking", ...;
// Numeric from a digit, a month or a number word. Reason names the rule.
func HeuristicTriage(text string) Extracted {
	t := strings.Join(strings.Fields(text), " ")
	e := Extracted{Text: t, Context: t}
	low := strings.ToLower(t)
	words := wordsOf(low)
	e.Numeric = numericRE.MatchString(low)
	e.TimeSensitive = timeSensitiveRE.MatchString(low)
	e.CurrentEvents = currentEventsRE.MatchString(low)
	if len(words) > 0 {
		e.Specificity = specificity(t, words, e.Numeric)
	}
	e.Kind, e.Reason = heuristicKind(t, low, words, e.Numeric)
	e.Reason = "heuristic: " + e.Reason
	return e
}

func heuristicKind(t, low string, words []string, numeric bool) (string, string) {
	switch {
	case len(words) == 0:
		return events.TriageNotAClaim, "no words"
	case strings.HasSuffix(t, "?"):
		return events.TriageNotAClaim, "a question"
	case strings.HasSuffix(t, ":"):
		return events.TriageNotAClaim, "an introduction to what follows"
	}
	if m := phraseRE.FindString(low); m != "" {
		return events.TriageNotAClaim, fmt.Sprintf("an assistant's or greeter's phrase (%q)", strings.TrimSpace(m))
	}
	if purposeRE.MatchString(low) {
		return events.TriageNotAClaim, "an instruction (a purpose clause)"
	}
	if imperative[words[0]] && (len(words) == 1 || !notImperativeNext[words[1]]) {
		return events.TriageNotAClaim, fmt.Sprintf("an instruction (starts with %q)", words[0])
	}
	if m := opinionRE.FindString(low); m != "" {
		return events.TriageOpinion, fmt.Sprintf("a view, recommendation or hedge (%q)", strings.TrimSpace(m))
	}
	if m := evaluativeRE.FindString(low); m != "" && !numeric {
		return events.TriageOpinion, fmt.Sprintf("an evaluative word without any figure (%q)", m)
	}
	if m := futureRE.FindString(low); m != "" {
		return events.TriagePrediction, fmt.Sprintf("a future or hypothetical marker (%q)", strings.TrimSpace(m))
	}
	return events.TriageFactual, "an assertion with no opinion, instruction or future marker"
}

func specificity(t string, words []string, numeric bool) float64 {
	s := 0.3 // a definite assertion: the prompt's 0.3-0.6 band
	if numeric {
		s += 0.3
	}
	switch names := properNames(t); {
	case names >= 2:
		s += 0.3
	case names == 1:
		s += 0.2
	}
	if len(words) >= 8 {
		s += 0.1
	}
	if vagueRE.MatchString(strings.ToLower(t)) {
		s -= 0.2
	}
	return math.Round(math.Max(0, math.Min(1, s))*100) / 100
}

// properNames counts capitalised words after the first.
func properNames(t string) int {
	n := 0
	for i, w := range strings.Fields(t) {
		w = strings.TrimLeft(w, `"'“‘(`)
		if i == 0 || w == "" || w == "I" {
			continue
		}
		if r := []rune(w)[0]; unicode.IsUpper(r) {
			n++
		}
	}
	return n
}

func wordsOf(low string) []string {
	return strings.FieldsFunc(low, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
}

// words builds a case-insensitive whole-word alternation.
func words(list ...string) string {
	return `\b(?:` + strings.Join(list, "|") + `)\b`
}

var (
	numericRE = regexp.MustCompile(`[0-9]|` + words("percent", "per cent", "million", "millions", "billion", "billions", "thousand",
		"thousands", "hundred", "hundreds", "dozen", "twice", "half", "january", "february", "march", "april", "june", "july",
		"august", "september", "october", "november", "december"))
	timeSensitiveRE = regexp.MustCompile(words("now", "currently", "current", "today", "this year", "latest", "still", "as of",
		"recent", "recently", "at the moment", "ongoing", "so far", "anymore", "nowadays"))
	currentEventsRE = regexp.MustCompile(words("today", "yesterday", "tonight", "this week", "this month", "this year",
		"last week", "last night", "breaking", "just announced", "just now"))
	phraseRE = regexp.MustCompile(`^(?:sure\b|thanks\b|thank you\b|hello\b|hi\b|hey\b|good luck\b|here are\b|here is\b|` +
		`let me\b|let's\b|i hope\b|hope this\b|i'm sorry\b|i am sorry\b|i recommend\b|i suggest\b|as a language model\b|` +
		`as an ai\b|enjoy\b|please\b|congratulations\b|cheers\b)`)
	purposeRE = regexp.MustCompile(`^to [a-z]+ [^,]*, (?:you|we|simply|just|first|follow|use|try|make|check|go)\b`)
	opinionRE = regexp.MustCompile(words("i think", "i believe", "i feel", "i guess", "in my opinion", "in my view", "imo",
		"we should", "should", "must", "ought to", "it is important", "it's important", "it is essential", "it is crucial",
		"it is unclear", "it's unclear", "purely speculative", "may seem", "hard to say", "difficult to determine",
		"it is difficult to", "needs to be", "need to"))
	evaluativeRE = regexp.MustCompile(words("best", "worst", "great", "greatest", "terrible", "awful", "amazing", "beautiful",
		"ugly", "good", "bad", "better", "worse", "easy", "easily", "difficult", "simple", "appealing", "interesting",
		"boring", "disgrace", "disgraceful", "shameful", "wonderful", "fantastic", "excellent", "horrible", "stupid",
		"ridiculous", "overrated", "underrated", "favorite", "favourite", "delicious", "nice", "awesome", "useful",
		"effective", "efficient", "powerful", "impressive", "fair", "unfair"))
	futureRE = regexp.MustCompile(words("will", "won't", "shall", "going to", "is likely to", "are likely to", "is expected to",
		"are expected to", "is set to", "are set to", "would", "might", "next year", "next month", "next week", "in the future",
		"forecast", "forecasts"))
	vagueRE = regexp.MustCompile(words("some", "many", "things", "stuff", "a lot", "lots", "often", "various", "people say",
		"they say", "everyone", "everybody", "somehow", "somewhat"))
)

// imperative verbs that start an instruction, unless the next word shows
// the first is a noun or a finite verb ("Research shows ...", "Use of ...").
var imperative = setOf("research", "select", "determine", "shortlist", "consider", "check", "make", "try", "use", "remember",
	"click", "go", "visit", "contact", "ask", "follow", "find", "choose", "avoid", "add", "keep", "read", "see", "note", "look",
	"evaluate", "compare", "install", "open", "call", "take", "start", "stop", "buy", "do", "don't", "never", "always",
	"imagine", "let", "put", "get", "set", "turn", "mix", "stir", "pour", "write", "discuss", "review", "search", "enjoy")

var notImperativeNext = setOf("is", "are", "was", "were", "has", "have", "had", "shows", "showed", "shown", "suggests",
	"suggested", "found", "finds", "indicates", "indicated", "can", "could", "may", "might", "will", "would", "should", "must",
	"does", "did", "of", "in", "on", "by", "from", "for", "and", "or", "at", "to", "as", "s", "'s")

func setOf(list ...string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, w := range list {
		m[w] = true
	}
	return m
}
