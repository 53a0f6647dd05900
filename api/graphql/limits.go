package graphql

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"

	gqlgen "github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/internal/ratelimit"
)

// Bounds on one request, checked in this order: the document's size and
// shape (document.go) before gqlgen validates it, since validation is not
// linear and runs before the complexity limit; then the store fields,
// complexity, depth and arguments of the operation; then its cost against
// the client's budget. Resolvers stop at the request's deadline.
const (
	// MaxDocumentBytes bounds the query text (GraphiQL's introspection
	// query is about 2 KiB).
	MaxDocumentBytes = 32 << 10
	// MaxTokens bounds the lexical tokens of the document.
	MaxTokens = 4000
	// MaxStoreFields bounds the fields of one operation that read a store
	// (storeFields): each is one query (postInvestigations two).
	MaxStoreFields = 5
	// RequestTimeout bounds one request; resolvers stop at its deadline.
	RequestTimeout = 10 * time.Second

	// storeFieldCost is what a store-reaching field adds to the estimated
	// cost, on top of its selections.
	storeFieldCost = 50
	// requestCost is charged to the client's budget for every request,
	// before anything is parsed; an admitted operation is then charged its
	// estimated cost (the complexity figure) before it runs, and the time
	// it took (one point per timeUnit) after it ran: introspection, which
	// the complexity figure does not count, is paid for that way.
	requestCost = 10
	timeUnit    = time.Millisecond
)

// storeFields are the fields whose resolvers query a store: the serving
// projection, the search index, ClickHouse or the audit projection. Claims
// and authors are loaded by the request's batching loaders (at most one
// batch of each per store field, 200 keys a batch) and are not counted.
var storeFields = map[string]map[string]bool{
	"Query": {"publicInvestigation": true, "postInvestigations": true, "searchInvestigations": true, "publicMetrics": true,
		"analysis": true, "postAnalyses": true, "searchAnalyses": true,
		"analysisConfigurations": true, "configurationPromotions": true, "experiments": true},
	"PublicInvestigation": {"auditTrail": true},
	// An investigation's configuration and experiment come from one
	// snapshot per request (two queries at most) and a claim's appeals are
	// batched like claims: neither is counted.
	// An analysis's audit trail is batched across the analyses of a
	// request (at most one query per 200), like claims and authors.
	"Analysis": {"auditTrail": true},
}

// Error codes of refused operations (extensions.code). Refusals are HTTP
// 400; a client over its rate limit gets 429 with Retry-After.
const (
	codeDocumentTooLarge   = "DOCUMENT_TOO_LARGE"
	codeTooManyStoreFields = "TOO_MANY_STORE_FIELDS"
	codeTooDeep            = "DEPTH_LIMIT_EXCEEDED"
	codeBadUserInput       = "BAD_USER_INPUT"
	codeRateLimited        = "RATE_LIMITED"
	codeComplexity         = "COMPLEXITY_LIMIT_EXCEEDED"
)

var registerCodes sync.Once

// registerRefusals makes gqlgen answer these codes as refusals of the
// request (its 422, which statusWriter turns into 400 or 429), like parse
// and validation errors, instead of 200.
func registerRefusals() {
	registerCodes.Do(func() {
		for _, code := range []string{codeDocumentTooLarge, codeTooManyStoreFields, codeTooDeep, codeBadUserInput, codeRateLimited, codeComplexity} {
			errcode.RegisterErrorType(code, errcode.KindProtocol)
		}
	})
}

// refused marks err as a refusal of the whole operation (an HTTP 400).
func refused(err *gqlerror.Error, code string) *gqlerror.Error {
	errcode.Set(err, code)
	return err
}

// documentLimit refuses documents over MaxDocumentBytes, MaxTokens or
// MaxSelections before gqlgen parses and validates them. It runs before
// automatic persisted queries, so no oversized query is ever stored.
type documentLimit struct {
	// validated holds documents that passed validation already (gqlgen's
	// query cache): they are not scanned again.
	validated gqlgen.Cache[*ast.QueryDocument]
}

var _ interface {
	gqlgen.HandlerExtension
	gqlgen.OperationParameterMutator
} = documentLimit{}

func (documentLimit) ExtensionName() string                  { return "DocumentLimit" }
func (documentLimit) Validate(gqlgen.ExecutableSchema) error { return nil }

func (d documentLimit) MutateOperationParameters(ctx context.Context, p *gqlgen.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil
	}
	if len(p.Query) > MaxDocumentBytes {
		return refused(gqlerror.Errorf("the document is %d bytes; at most %d are allowed", len(p.Query), MaxDocumentBytes), codeDocumentTooLarge)
	}
	if _, ok := d.validated.Get(ctx, p.Query); ok {
		return nil
	}
	return checkDocument(p.Query)
}

// storeFieldLimit refuses an operation selecting more than MaxStoreFields
// store-reaching fields (aliases and fragments included), before any of
// them runs.
type storeFieldLimit struct{}

var _ interface {
	gqlgen.HandlerExtension
	gqlgen.OperationContextMutator
} = storeFieldLimit{}

func (storeFieldLimit) ExtensionName() string                  { return "StoreFieldLimit" }
func (storeFieldLimit) Validate(gqlgen.ExecutableSchema) error { return nil }

func (storeFieldLimit) MutateOperationContext(_ context.Context, oc *gqlgen.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if n := countStoreFields(oc.Operation.SelectionSet, oc.Doc, map[string]bool{}); n > MaxStoreFields {
		return refused(gqlerror.Errorf("the operation selects %d fields that read a store (publicInvestigation, postInvestigations, "+
			"searchInvestigations, publicMetrics, analysis, postAnalyses, searchAnalyses, auditTrail, aliases included); at most %d are allowed",
			n, MaxStoreFields), codeTooManyStoreFields)
	}
	return nil
}

// countStoreFields counts store-reaching fields under set. The document was
// bounded by MaxSelections, so the walk is too.
func countStoreFields(set ast.SelectionSet, doc *ast.QueryDocument, visiting map[string]bool) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.ObjectDefinition != nil && storeFields[s.ObjectDefinition.Name][s.Name] {
				n++
			}
			n += countStoreFields(s.SelectionSet, doc, visiting)
		case *ast.InlineFragment:
			n += countStoreFields(s.SelectionSet, doc, visiting)
		case *ast.FragmentSpread:
			inner, leave, ok := enterFragment(s, doc, visiting)
			if !ok {
				continue
			}
			n += countStoreFields(inner, doc, visiting)
			leave()
		}
	}
	return n
}

// requestState is what the HTTP layer and the extensions share about one
// request: who the client is and, when its budget ran out, how long it
// must wait.
type requestState struct {
	client     string
	retryAfter time.Duration
}

type requestStateKey struct{}

func stateOf(ctx context.Context) *requestState {
	s, _ := ctx.Value(requestStateKey{}).(*requestState)
	return s
}

// costCharge charges an admitted operation's estimated cost to its
// client's budget before any resolver runs; it is the last check.
type costCharge struct{ limiter *ratelimit.Limiter }

var _ interface {
	gqlgen.HandlerExtension
	gqlgen.OperationContextMutator
} = costCharge{}

func (costCharge) ExtensionName() string                  { return "CostCharge" }
func (costCharge) Validate(gqlgen.ExecutableSchema) error { return nil }

func (c costCharge) MutateOperationContext(ctx context.Context, _ *gqlgen.OperationContext) *gqlerror.Error {
	st := stateOf(ctx)
	stats := extension.GetComplexityStats(ctx)
	if st == nil || stats == nil {
		return nil
	}
	ok, wait := c.limiter.Allow(st.client, stats.Complexity)
	if ok {
		return nil
	}
	st.retryAfter = wait
	return rateLimitedError(stats.Complexity, wait)
}

func rateLimitedError(cost int, wait time.Duration) *gqlerror.Error {
	secs := ratelimit.RetryAfterSeconds(wait)
	var err *gqlerror.Error
	if cost > 0 {
		err = gqlerror.Errorf("rate limit: this operation costs %d and your budget is spent; retry in %d s", cost, secs)
	} else {
		err = gqlerror.Errorf("rate limit: too many requests; retry in %d s", secs)
	}
	err.Extensions = map[string]any{"code": codeRateLimited, "retryAfterSeconds": secs}
	return err
}

// Options tune the handler; zero values take the defaults.
type Options struct {
	// Timeout bounds one request (default RequestTimeout).
	Timeout time.Duration
	// RateLimit rations each client's requests and operation costs (nil:
	// no limit): requestCost per request, an admitted operation's estimated
	// cost, and one point per millisecond of each request.
	RateLimit *ratelimit.Limiter
	// ClientKey names a request's client for RateLimit.
	ClientKey func(*http.Request) string
	// Now is the clock that times each request for RateLimit (nil:
	// time.Now); tests pass RateLimit's own clock.
	Now func() time.Time
}

// bounded applies the per-request bounds around the GraphQL server: the
// deadline, the client's request budget, and the HTTP status of refusals
// (400 instead of gqlgen's 422; 429 with Retry-After when the budget is
// spent).
func bounded(next http.Handler, o Options) http.Handler {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = RequestTimeout
	}
	limited := o.RateLimit != nil && o.ClientKey != nil
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		st := &requestState{}
		if limited && req.Method != http.MethodOptions {
			st.client = o.ClientKey(req)
			if ok, wait := o.RateLimit.Allow(st.client, requestCost); !ok {
				writeRateLimited(w, wait)
				return
			}
			start := now()
			defer func() { o.RateLimit.Take(st.client, int(now().Sub(start)/timeUnit)) }()
		}
		ctx, cancel := context.WithTimeout(context.WithValue(req.Context(), requestStateKey{}, st), timeout)
		defer cancel()
		next.ServeHTTP(&statusWriter{ResponseWriter: w, state: st}, req.WithContext(ctx))
	})
}

// writeRateLimited answers 429 with Retry-After and a GraphQL errors body.
func writeRateLimited(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.RetryAfterSeconds(wait)))
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(gqlgen.Response{Errors: gqlerror.List{rateLimitedError(0, wait)}})
}

// statusWriter rewrites the status of refused operations: gqlgen answers
// 422 to a document it will not run; Errata answers 400, or 429 with
// Retry-After when the refusal was the client's budget.
type statusWriter struct {
	http.ResponseWriter
	state       *requestState
	wroteHeader bool
}

func (s *statusWriter) WriteHeader(status int) {
	if s.wroteHeader {
		return
	}
	s.wroteHeader = true
	switch {
	case s.state.retryAfter > 0:
		s.Header().Set("Retry-After", strconv.Itoa(ratelimit.RetryAfterSeconds(s.state.retryAfter)))
		status = http.StatusTooManyRequests
	case status == http.StatusUnprocessableEntity:
		status = http.StatusBadRequest
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.wroteHeader {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}
