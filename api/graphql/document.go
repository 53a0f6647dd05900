package graphql

import (
	"fmt"
	"strconv"

	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// The shape of a document, measured before gqlgen validates it. Validation
// (gqlparser's OverlappingFieldsCanBeMerged, as in graphql-js) compares
// every two fields that share a response name in one selection set, and
// recursively their sub-selections, and every two fragments spread in one
// selection set: the work grows with the square of such repetitions, and
// nested repetitions multiply. Bounding the expanded size, the repeated
// response names and the spreads per selection set bounds that work.
const (
	// MaxSelections bounds the fields, inline fragments and fragment spreads
	// of the document with every fragment spread expanded (each operation
	// and fragment definition counted as validation walks them; GraphiQL's
	// introspection query counts 489).
	MaxSelections = 1000
	// MaxRepeatedFields bounds the fields that repeat a response name
	// already selected in the same selection set (inline fragments and
	// fragment spreads merged into it, fragments expanded): `{ a a a }`
	// repeats twice.
	MaxRepeatedFields = 50
	// MaxSpreadsPerSelection bounds the fragment spreads of one selection
	// set (inline fragments merged into it).
	MaxSpreadsPerSelection = 32
)

// checkDocument parses query with the token limit and measures it: a cheap
// linear pass, so nothing quadratic runs on an oversized document.
func checkDocument(query string) *gqlerror.Error {
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, MaxTokens)
	if err != nil {
		if gerr, ok := err.(*gqlerror.Error); ok {
			if gerr.Message == fmt.Sprintf("exceeded token limit of %d", MaxTokens) {
				return refused(gqlerror.Errorf("the document has more than %d tokens; at most %d are allowed", MaxTokens, MaxTokens), codeDocumentTooLarge)
			}
			return refused(gerr, errcode.ParseFailed)
		}
		return refused(gqlerror.Errorf("unreadable document: %s", err.Error()), errcode.ParseFailed)
	}
	shape := measure(doc)
	switch {
	case shape.selections > MaxSelections:
		return refused(gqlerror.Errorf("the document selects %s fields and fragments (fragments expanded); at most %d are allowed",
			countText(shape.selections), MaxSelections), codeDocumentTooLarge)
	case shape.spreads > MaxSpreadsPerSelection:
		return refused(gqlerror.Errorf("a selection set spreads %d fragments; at most %d are allowed", shape.spreads, MaxSpreadsPerSelection), codeDocumentTooLarge)
	case shape.repeated > MaxRepeatedFields:
		return refused(gqlerror.Errorf("the document repeats a response name already selected in the same selection set %s times "+
			"(fragments expanded); at most %d are allowed", countText(shape.repeated), MaxRepeatedFields), codeDocumentTooLarge)
	}
	return nil
}

// countCap saturates counts: beyond it only "too many" matters (a fragment
// spread twice in each of 60 nested fragments expands to 2^60 selections).
const countCap = 1 << 40

func satAdd(a, b int) int { return min(a+b, countCap) }

func countText(n int) string {
	if n >= countCap {
		return "more than " + strconv.Itoa(countCap)
	}
	return strconv.Itoa(n)
}

// docShape is what measure finds.
type docShape struct {
	// selections: fields, inline fragments and spreads, fragments expanded.
	selections int
	// repeated: fields repeating a response name in their selection set.
	repeated int
	// spreads: the most fragment spreads of one selection set.
	spreads int
}

// measure walks every operation and fragment definition once; each
// fragment's figures are computed once and reused at each spread, so the
// walk is linear in the document. Repetitions are only counted when the
// expanded size is within MaxSelections, which bounds that second pass.
func measure(doc *ast.QueryDocument) docShape {
	m := newMeasurer(doc)
	var shape docShape
	for _, op := range doc.Operations {
		shape.selections = satAdd(shape.selections, m.size(op.SelectionSet))
	}
	for _, f := range doc.Fragments {
		shape.selections = satAdd(shape.selections, m.fragmentSize(f.Name))
	}
	shape.spreads = m.maxSpreads
	if shape.selections > MaxSelections || shape.spreads > MaxSpreadsPerSelection {
		return shape
	}
	for _, op := range doc.Operations {
		shape.repeated = satAdd(shape.repeated, m.level(op.SelectionSet).repeated)
	}
	for _, f := range doc.Fragments {
		shape.repeated = satAdd(shape.repeated, m.fragmentLevel(f.Name).repeated)
	}
	return shape
}

type measurer struct {
	fragments  map[string]*ast.FragmentDefinition
	sizes      map[string]int
	levels     map[string]*levelInfo
	onPath     map[string]bool
	maxSpreads int
}

func newMeasurer(doc *ast.QueryDocument) *measurer {
	fragments := make(map[string]*ast.FragmentDefinition, len(doc.Fragments))
	for _, f := range doc.Fragments {
		if _, dup := fragments[f.Name]; !dup {
			fragments[f.Name] = f
		}
	}
	return &measurer{fragments: fragments, sizes: map[string]int{}, levels: map[string]*levelInfo{}, onPath: map[string]bool{}}
}

// size counts set's selections with spreads expanded, and records the
// most spreads of one selection set.
func (m *measurer) size(set ast.SelectionSet) int {
	n, spreads := 0, 0
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			n = satAdd(n, 1)
			switch s := sel.(type) {
			case *ast.Field:
				n = satAdd(n, m.size(s.SelectionSet))
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				spreads++
				n = satAdd(n, m.fragmentSize(s.Name))
			}
		}
	}
	walk(set)
	m.maxSpreads = max(m.maxSpreads, spreads)
	return n
}

// fragmentSize is a fragment's expanded size; unknown fragments and cycles
// count nothing here (validation refuses them).
func (m *measurer) fragmentSize(name string) int {
	if n, ok := m.sizes[name]; ok {
		return n
	}
	f, ok := m.fragments[name]
	if !ok || m.onPath[name] {
		return 0
	}
	m.onPath[name] = true
	n := m.size(f.SelectionSet)
	delete(m.onPath, name)
	m.sizes[name] = n
	return n
}

// levelInfo is one selection set as validation merges it: the response
// names at its level (inline fragments and spreads merged in) and the
// repetitions within it and below it.
type levelInfo struct {
	names    map[string]int
	repeated int
}

// level merges set's level and counts repetitions, its own and those of
// every selection set below it.
func (m *measurer) level(set ast.SelectionSet) *levelInfo {
	info := &levelInfo{names: map[string]int{}}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				name := s.Alias
				if name == "" {
					name = s.Name
				}
				info.names[name]++
				if len(s.SelectionSet) > 0 {
					info.repeated = satAdd(info.repeated, m.level(s.SelectionSet).repeated)
				}
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				f := m.fragmentLevel(s.Name)
				for name, n := range f.names {
					info.names[name] += n
				}
				// The fragment's own level is merged here: only what lies
				// below it is added as it is.
				info.repeated = satAdd(info.repeated, f.repeated-f.ownRepeats())
			}
		}
	}
	walk(set)
	info.repeated = satAdd(info.repeated, info.ownRepeats())
	return info
}

// ownRepeats counts the repetitions of the level itself.
func (l *levelInfo) ownRepeats() int {
	n := 0
	for _, c := range l.names {
		n += c - 1
	}
	return n
}

func (m *measurer) fragmentLevel(name string) *levelInfo {
	if l, ok := m.levels[name]; ok {
		return l
	}
	f, ok := m.fragments[name]
	if !ok || m.onPath[name] {
		return &levelInfo{names: map[string]int{}}
	}
	m.onPath[name] = true
	l := m.level(f.SelectionSet)
	delete(m.onPath, name)
	m.levels[name] = l
	return l
}
