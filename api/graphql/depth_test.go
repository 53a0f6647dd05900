package graphql

import (
	"testing"

	gqlgen "github.com/99designs/gqlgen/graphql"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// selectionDepth counts field nesting through fragments (once per path),
// ignores introspection, and stops on fragment cycles.
func TestSelectionDepth(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  int
	}{
		{"flat", `{ a b }`, 1},
		{"nested", `{ a { b { c } } }`, 3},
		{"inline fragment adds nothing", `{ a { ... on T { b { c } } } }`, 3},
		{"fragments", `{ a { ...F } } fragment F on T { b { ...G } } fragment G on U { c { d } }`, 4},
		{"introspection ignored", `{ __schema { types { fields { type { ofType { ofType { ofType { name } } } } } } } a }`, 1},
		{"cycle", `{ a { ...F } } fragment F on T { b { ...F } }`, 2},
		{"deepest branch", `{ a { b } c { d { e { f { g { h { i { j { k } } } } } } } } }`, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parser.ParseQuery(&ast.Source{Input: tc.query})
			require.NoError(t, err)
			require.Equal(t, tc.want, selectionDepth(doc.Operations[0].SelectionSet, doc, 0, map[string]bool{}))
		})
	}
}

// The limit refuses an operation one level deeper than allowed, with a
// message that says so.
func TestDepthLimitRefuses(t *testing.T) {
	doc, err := parser.ParseQuery(&ast.Source{Input: `{ a { b { c { d { e { f { g { h { i } } } } } } } } }`})
	require.NoError(t, err)
	oc := &gqlgen.OperationContext{Operation: doc.Operations[0], Doc: doc}
	gerr := depthLimit{max: MaxDepth}.MutateOperationContext(t.Context(), oc)
	require.NotNil(t, gerr)
	require.Equal(t, "operation is nested 9 levels deep; at most 8 are allowed", gerr.Message)
	doc, err = parser.ParseQuery(&ast.Source{Input: `{ a { b { c { d { e { f { g { h } } } } } } } }`})
	require.NoError(t, err)
	require.Nil(t, depthLimit{max: MaxDepth}.MutateOperationContext(t.Context(), &gqlgen.OperationContext{Operation: doc.Operations[0], Doc: doc}))
}
