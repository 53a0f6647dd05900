// Package textdiff builds the "changes" section of an update investigation:
// the difference between the text of the investigated version of a post and
// its current text, sentence by sentence.
//
// Both texts are split into paragraphs (one per line) and paragraphs into
// sentences; the two sentence sequences, with a marker between paragraphs,
// are compared with Myers' diff. Format prints the result with the unchanged
// text around each change cut down to a few sentences, so the model sees
// what changed without reading the whole post twice.
package textdiff

import "strings"

// Op says what happened to a line.
type Op byte

// Operations of a Line; the values are the diff prefixes.
const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// DefaultContext is the number of unchanged sentences Format keeps on each
// side of a change when Options.Context is zero.
const DefaultContext = 2

// NoChanges is what Format returns when the texts have the same sentences.
const NoChanges = "No textual changes: the current text has the same sentences as the investigated version."

// Ellipsis is the line that stands for a run of unchanged sentences Format
// leaves out.
const Ellipsis = "  …"

// Options tune Diff.
type Options struct {
	// Context is the number of unchanged sentences kept before and after
	// each change: 0 means DefaultContext, a negative value keeps none.
	Context int
}

// Line is one sentence of either text, or a paragraph break (empty Text).
type Line struct {
	Op   Op
	Text string
}

// IsBreak reports whether the line stands for a paragraph break.
func (l Line) IsBreak() bool { return l.Text == "" }

// Result is the complete comparison.
type Result struct {
	// Lines holds every sentence of both texts in diff order (deletions
	// before insertions at each change), with paragraph breaks between
	// paragraphs.
	Lines []Line
	// Changed reports whether any sentence was deleted or inserted. A
	// paragraph split or merged without changing a word is not a change.
	Changed bool
	// Context is the number of unchanged sentences Format keeps around
	// each change (resolved from Options).
	Context int
}

// Diff compares the old and the new text.
func Diff(oldText, newText string, opts Options) Result {
	ctx := opts.Context
	switch {
	case ctx == 0:
		ctx = DefaultContext
	case ctx < 0:
		ctx = 0
	}
	oldLines, newLines := tokens(oldText), tokens(newText)

	// Intern the lines so the diff compares integers; the empty string,
	// the paragraph break, gets an id like any other line.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	deleted, inserted := editScript(intern(oldLines), intern(newLines))

	res := Result{Context: ctx}
	if n := max(len(oldLines), len(newLines)); n > 0 {
		res.Lines = make([]Line, 0, n)
	}
	i, j := 0, 0
	for i < len(oldLines) || j < len(newLines) {
		var l Line
		switch {
		case i < len(oldLines) && deleted[i]:
			l = Line{Op: Delete, Text: oldLines[i]}
			i++
		case j < len(newLines) && inserted[j]:
			l = Line{Op: Insert, Text: newLines[j]}
			j++
		default:
			l = Line{Op: Equal, Text: newLines[j]}
			i++
			j++
		}
		if l.Op != Equal && !l.IsBreak() {
			res.Changed = true
		}
		res.Lines = append(res.Lines, l)
	}
	return res
}

// tokens lists the sentences of text with an empty string between
// paragraphs.
func tokens(text string) []string {
	var out []string
	for _, p := range Paragraphs(text) {
		sentences := Sentences(p)
		if len(sentences) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, sentences...)
	}
	return out
}

// Format renders the changes one sentence per line: "- " for a removed
// sentence, "+ " for an added one, "  " for unchanged context and an empty
// line for a paragraph break. Only Context unchanged sentences are kept on
// each side of a change; a longer unchanged run is replaced by the single
// line Ellipsis. Without changes it returns NoChanges. The result has no
// trailing newline.
func (r Result) Format() string {
	if !r.Changed {
		return NoChanges
	}
	var out []string
	emit := func(l Line) {
		if l.IsBreak() {
			// One empty line per break, whatever its op: a paragraph split
			// or merge is layout, not content.
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			return
		}
		out = append(out, string(l.Op)+" "+l.Text)
	}
	isChange := func(l Line) bool { return l.Op != Equal && !l.IsBreak() }

	for i := 0; i < len(r.Lines); {
		if isChange(r.Lines[i]) {
			emit(r.Lines[i])
			i++
			continue
		}
		// A run of unchanged sentences and paragraph breaks.
		end := i
		for end < len(r.Lines) && !isChange(r.Lines[end]) {
			end++
		}
		r.formatRun(r.Lines[i:end], i > 0, end < len(r.Lines), emit, func() { out = append(out, Ellipsis) })
		i = end
	}
	// A break at either end carries no information.
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	return strings.Join(out, "\n")
}

// formatRun emits an unchanged run: Context sentences after the change
// before it (when there is one), Context sentences before the change after
// it (when there is one), and Ellipsis for what lies between.
func (r Result) formatRun(run []Line, afterChange, beforeChange bool, emit func(Line), elide func()) {
	sentences := 0
	for _, l := range run {
		if !l.IsBreak() {
			sentences++
		}
	}
	keepHead, keepTail := 0, 0
	if afterChange {
		keepHead = r.Context
	}
	if beforeChange {
		keepTail = r.Context
	}
	if sentences <= keepHead+keepTail {
		for _, l := range run {
			emit(l)
		}
		return
	}
	// head ends right after the keepHead-th sentence, including the breaks
	// before it; tail starts at the keepTail-th sentence from the end.
	head := 0
	for n := 0; n < keepHead; head++ {
		if !run[head].IsBreak() {
			n++
		}
	}
	tail := len(run)
	for n := 0; n < keepTail; {
		tail--
		if !run[tail].IsBreak() {
			n++
		}
	}
	for _, l := range run[:head] {
		emit(l)
	}
	elide()
	for _, l := range run[tail:] {
		emit(l)
	}
}
