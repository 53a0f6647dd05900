package graphql

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	gqlgen "github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/search"
)

// argumentCheck refuses an operation whose arguments are unusable before
// any field of it executes, so a bad page request never half-runs an
// operation that also asks for other fields: searchInvestigations' ranges,
// and every String and ID argument (checkString).
type argumentCheck struct{}

var _ interface {
	gqlgen.HandlerExtension
	gqlgen.OperationContextMutator
} = argumentCheck{}

func (argumentCheck) ExtensionName() string                  { return "ArgumentCheck" }
func (argumentCheck) Validate(gqlgen.ExecutableSchema) error { return nil }

func (argumentCheck) MutateOperationContext(_ context.Context, oc *gqlgen.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	var gerr *gqlerror.Error
	refuse := func(f *ast.Field, err error) bool {
		gerr = refused(gqlerror.ErrorPosf(f.Position, "%s", err.Error()), codeBadUserInput)
		gerr.Path = ast.Path{ast.PathName(f.Alias)}
		return false
	}
	eachRootField(oc.Operation.SelectionSet, oc.Doc, map[string]bool{}, func(f *ast.Field) bool {
		if f.Definition == nil {
			return true
		}
		args := f.ArgumentMap(oc.Variables)
		for _, def := range f.Definition.Arguments {
			if v, ok := args[def.Name].(string); ok {
				if err := checkString(f.Name, def.Name, v); err != nil {
					return refuse(f, err)
				}
			}
		}
		if f.Name != "searchInvestigations" && f.Name != "searchAnalyses" {
			return true
		}
		var limit, offset, minClaims *int
		for name, dst := range map[string]**int{"limit": &limit, "offset": &offset, "minClaimCount": &minClaims} {
			n, ok := intArg(args[name])
			if ok {
				*dst = &n
			}
		}
		if err := checkSearchArguments(limit, offset, minClaims, timeArg(args["checkedAfter"]), timeArg(args["checkedBefore"])); err != nil {
			return refuse(f, err)
		}
		return true
	})
	return gerr
}

// Longest String and ID arguments, in characters. An externalId longer than
// registration accepts can never be found; the search text is bounded by
// the index query; the other arguments are ids (UUIDs have 36 characters).
var maxArgumentChars = map[string]int{
	"externalId": ingest.MaxExternalIDChars,
	"query":      search.MaxTextRunes,
}

const maxIDChars = 64

// checkString refuses what no store can take or hold: invalid UTF-8 (a GET
// query string can carry raw bytes), NUL (Postgres refuses it in text; the
// document's "\u0000" escape produces it), and values longer than any
// stored one.
func checkString(field, arg, v string) error {
	limit, ok := maxArgumentChars[arg]
	if !ok {
		limit = maxIDChars
	}
	switch {
	case !utf8.ValidString(v):
		return fmt.Errorf("%s: argument %s is not valid UTF-8", field, arg)
	case strings.IndexByte(v, 0) >= 0:
		return fmt.Errorf("%s: argument %s must not contain NUL (U+0000)", field, arg)
	case utf8.RuneCountInString(v) > limit:
		return fmt.Errorf("%s: argument %s is longer than %d characters", field, arg, limit)
	}
	return nil
}

// eachRootField calls fn with every field selected at the operation's
// root (through fragments) until fn returns false.
func eachRootField(set ast.SelectionSet, doc *ast.QueryDocument, visiting map[string]bool, fn func(*ast.Field) bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if !fn(s) {
				return false
			}
		case *ast.InlineFragment:
			if !eachRootField(s.SelectionSet, doc, visiting, fn) {
				return false
			}
		case *ast.FragmentSpread:
			inner, leave, ok := enterFragment(s, doc, visiting)
			if !ok {
				continue
			}
			more := eachRootField(inner, doc, visiting, fn)
			leave()
			if !more {
				return false
			}
		}
	}
	return true
}

// enterFragment resolves a fragment spread to the fragment's selections and
// marks the fragment as on the current path until leave is called; ok is
// false for an unknown fragment or one already on the path (a cycle).
func enterFragment(s *ast.FragmentSpread, doc *ast.QueryDocument, visiting map[string]bool) (set ast.SelectionSet, leave func(), ok bool) {
	if doc == nil || visiting[s.Name] {
		return nil, nil, false
	}
	f := doc.Fragments.ForName(s.Name)
	if f == nil {
		return nil, nil, false
	}
	visiting[s.Name] = true
	return f.SelectionSet, func() { delete(visiting, s.Name) }, true
}

// checkSearchArguments holds the ranges of searchInvestigations' arguments
// (spec 3.4: limit 1..100, offset >= 0). nil means the argument's default.
func checkSearchArguments(limit, offset, minClaimCount *int, checkedAfter, checkedBefore *time.Time) error {
	if limit != nil && (*limit < minLimit || *limit > maxLimit) {
		return fmt.Errorf("limit must be between %d and %d, got %d", minLimit, maxLimit, *limit)
	}
	if offset != nil && *offset < 0 {
		return fmt.Errorf("offset must be >= 0, got %d", *offset)
	}
	if minClaimCount != nil && *minClaimCount < 0 {
		return fmt.Errorf("minClaimCount must be >= 0, got %d", *minClaimCount)
	}
	if checkedAfter != nil && checkedBefore != nil && !checkedAfter.Before(*checkedBefore) {
		return fmt.Errorf("checkedAfter must be before checkedBefore")
	}
	return nil
}

// intArg reads an Int argument as literal or variable value; values that
// do not fit are reported as the nearest out-of-range int.
func intArg(v any) (int, bool) {
	clamp := func(f float64) int {
		switch {
		case f > math.MaxInt32:
			return math.MaxInt32
		case f < math.MinInt32:
			return math.MinInt32
		}
		return int(f)
	}
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return clamp(float64(n)), true
	case float64:
		return clamp(n), true
	case json.Number:
		f, err := n.Float64()
		return clamp(f), err == nil
	}
	return 0, false
}

// timeArg reads a DateTime argument; anything unreadable is left to the
// scalar's own error.
func timeArg(v any) *time.Time {
	switch t := v.(type) {
	case time.Time:
		return &t
	case string:
		if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return &p
		}
	}
	return nil
}
