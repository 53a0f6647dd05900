package graphql

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gqlgen "github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/projections/serving"
)

// Limits of one operation (see also limits.go: document size, store
// fields, time, rate).
const (
	// MaxDepth bounds the nesting of selections (introspection excepted).
	MaxDepth = 8
	// MaxComplexity bounds the estimated cost: one per field, list fields
	// multiplied by the number of items they can return, plus
	// storeFieldCost per field that reads a store.
	MaxComplexity = 2000
	// CacheMaxAge is how long GET (persisted) query answers may be cached.
	CacheMaxAge = 30 * time.Second
	// postInvestigationsEstimate is the assumed number of investigations
	// per post when estimating complexity (one per version).
	postInvestigationsEstimate = 10
	// controlListEstimate is the assumed length of the lists of
	// configurations, promotions and experiments, and appealsEstimate of
	// a claim's appeals, when estimating complexity.
	controlListEstimate = 20
	appealsEstimate     = 5
)

// NewHandler returns the GraphQL endpoint as a net/http handler: POST and
// GET (GET for persisted and cacheable queries), automatic persisted
// queries, document, depth, complexity and store-field limits, a deadline
// per request, per-client rate limits (o.RateLimit), per-request batching
// loaders, caching headers. No subscriptions.
func NewHandler(r *Resolver, o Options) http.Handler {
	registerRefusals()
	cfg := Config{Resolvers: r}
	cfg.Complexity.Query.SearchInvestigations = func(child int, _ *string, _ *Platform, limit, _ *int, _ *string, _ *ContentProvenance, _ *int, _, _ *time.Time) int {
		n := 20
		if limit != nil && *limit > 0 {
			n = *limit
		}
		return storeFieldCost + 1 + n*child
	}
	cfg.Complexity.Query.PostInvestigations = func(child int, _ Platform, _ string) int {
		return storeFieldCost + 1 + postInvestigationsEstimate*child
	}
	cfg.Complexity.Query.PublicInvestigation = func(child int, _ string) int { return storeFieldCost + 1 + child }
	cfg.Complexity.Query.PublicMetrics = func(child int, _ *Platform, _ *string, _, _ *time.Time) int {
		return storeFieldCost + 1 + child
	}
	cfg.Complexity.PublicInvestigation.AuditTrail = func(child int) int { return storeFieldCost + 1 + child }
	cfg.Complexity.Query.Analysis = func(child int, _ string) int { return storeFieldCost + 1 + child }
	cfg.Complexity.Query.PostAnalyses = func(child int, _ Platform, _ string) int {
		return storeFieldCost + 1 + serving.MaxPostAnalyses*child
	}
	cfg.Complexity.Query.SearchAnalyses = func(child int, _ *string, _ *VerdictLabel, limit, _ *int) int {
		n := 20
		if limit != nil && *limit > 0 {
			n = *limit
		}
		return storeFieldCost + 1 + n*child
	}
	cfg.Complexity.Analysis.AuditTrail = func(child int) int { return storeFieldCost + 1 + child }
	controlList := func(child int) int { return storeFieldCost + 1 + controlListEstimate*child }
	cfg.Complexity.Query.AnalysisConfigurations = controlList
	cfg.Complexity.Query.ConfigurationPromotions = controlList
	cfg.Complexity.Query.Experiments = controlList
	cfg.Complexity.PublicClaim.Appeals = func(child int) int { return 1 + appealsEstimate*child }
	queries := lru.New[*ast.QueryDocument](1000)
	srv := handler.New(NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(queries)
	srv.SetParserTokenLimit(MaxTokens)
	// Before persisted queries: nothing oversized is ever stored.
	srv.Use(documentLimit{validated: queries})
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(storeFieldLimit{})
	srv.Use(extension.FixedComplexityLimit(MaxComplexity))
	srv.Use(depthLimit{max: MaxDepth})
	srv.Use(argumentCheck{})
	if o.RateLimit != nil {
		// Last: only an operation that passed every check is charged.
		srv.Use(costCharge{limiter: o.RateLimit})
	}
	srv.AroundOperations(func(ctx context.Context, next gqlgen.OperationHandler) gqlgen.ResponseHandler {
		return next(r.withLoaders(ctx))
	})
	srv.SetRecoverFunc(func(ctx context.Context, err any) error {
		r.d.Log.ErrorContext(ctx, "graphql panic", "err", fmt.Sprint(err))
		return gqlerror.Errorf("internal error")
	})
	return caching(bounded(srv, o))
}

// depthLimit refuses operations nested deeper than max.
type depthLimit struct{ max int }

var _ interface {
	gqlgen.HandlerExtension
	gqlgen.OperationContextMutator
} = depthLimit{}

func (depthLimit) ExtensionName() string                  { return "DepthLimit" }
func (depthLimit) Validate(gqlgen.ExecutableSchema) error { return nil }
func (d depthLimit) MutateOperationContext(_ context.Context, oc *gqlgen.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, oc.Doc, 0, map[string]bool{}); depth > d.max {
		return refused(gqlerror.Errorf("operation is nested %d levels deep; at most %d are allowed", depth, d.max), codeTooDeep)
	}
	return nil
}

// selectionDepth is the deepest field nesting under set; introspection
// fields (__schema, __type) do not count.
func selectionDepth(set ast.SelectionSet, doc *ast.QueryDocument, depth int, visiting map[string]bool) int {
	deepest := depth
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			d = selectionDepth(s.SelectionSet, doc, depth+1, visiting)
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, doc, depth, visiting)
		case *ast.FragmentSpread:
			inner, leave, ok := enterFragment(s, doc, visiting)
			if !ok {
				continue
			}
			d = selectionDepth(inner, doc, depth, visiting)
			leave()
		}
		deepest = max(deepest, d)
	}
	return deepest
}

// caching sets the caching headers: POST answers are never stored; a GET
// answer without errors is public for CacheMaxAge with a strong ETag, and
// If-None-Match gets 304 Not Modified.
func caching(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			w.Header().Set("Cache-Control", "no-store")
			next.ServeHTTP(w, req)
			return
		}
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		next.ServeHTTP(rec, req)
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		body := rec.body.Bytes()
		cacheable := rec.status == http.StatusOK && !bytes.Contains(body, []byte(`"errors":`))
		if !cacheable {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(rec.status)
			_, _ = w.Write(body)
			return
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:]) + `"`
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(CacheMaxAge.Seconds())))
		w.Header().Add("Vary", "Accept-Encoding")
		if match := req.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

func etagMatches(header, etag string) bool {
	for _, part := range strings.Split(header, ",") {
		p := strings.TrimSpace(part)
		p = strings.TrimPrefix(p, "W/")
		if p == etag || p == "*" {
			return true
		}
	}
	return false
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

//go:embed assets/*.gz
var assets embed.FS

// assetTypes are the vendored GraphiQL files (stored gzipped).
var assetTypes = map[string]string{
	"graphiql.min.js":             "text/javascript; charset=utf-8",
	"graphiql.min.css":            "text/css; charset=utf-8",
	"react.production.min.js":     "text/javascript; charset=utf-8",
	"react-dom.production.min.js": "text/javascript; charset=utf-8",
}

// contentSecurityPolicy keeps the explorer to this origin: no CDN, no
// inline script (GraphiQL's editor needs inline styles and data: fonts).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// explorerPage is the GraphiQL page; its script is /graphiql/init.js.
const explorerPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Errata public GraphQL explorer</title>
<link rel="stylesheet" href="/graphiql/graphiql.min.css">
<style>html, body, #explorer { height: 100%; margin: 0; }</style>
</head>
<body>
<div id="explorer">Loading the explorer…</div>
<script src="/graphiql/react.production.min.js"></script>
<script src="/graphiql/react-dom.production.min.js"></script>
<script src="/graphiql/graphiql.min.js"></script>
<script src="/graphiql/init.js"></script>
</body>
</html>
`

// explorerInit starts GraphiQL against this server's /graphql with a
// researcher's first query.
const explorerInit = `(function () {
  var fetcher = GraphiQL.createFetcher({ url: new URL("/graphql", window.location.href).toString() });
  var firstQuery = [
    "# Search complete investigations by words from their claims and reasoning.",
    "query Search($q: String, $platform: Platform) {",
    "  searchInvestigations(query: $q, platform: $platform, limit: 10) {",
    "    total",
    "    hasMore",
    "    investigations {",
    "      id checkedAt platform url claimCount",
    "      origin { provenance serverVerifiedAt }",
    "      claims { text summary }",
    "      highlights",
    "    }",
    "  }",
    "  publicMetrics { totalInvestigatedPosts investigatedPostsWithFlags factCheckIncidence }",
    "}"
  ].join("\n");
  var root = ReactDOM.createRoot(document.getElementById("explorer"));
  root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultQuery: firstQuery, variables: "{\"q\": \"\"}" }));
})();
`

// ExplorerHandler serves the self-hosted GraphiQL page and its assets under
// /graphiql: nothing is loaded from outside this server.
func ExplorerHandler(log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		name := strings.TrimPrefix(strings.TrimPrefix(req.URL.Path, "/graphiql"), "/")
		switch name {
		case "":
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write([]byte(explorerPage))
			return
		case "init.js":
			h.Set("Content-Type", "text/javascript; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write([]byte(explorerInit))
			return
		}
		ctype, ok := assetTypes[name]
		if !ok {
			http.NotFound(w, req)
			return
		}
		gz, err := assets.ReadFile("assets/" + name + ".gz")
		if err != nil {
			log.Error("graphiql asset missing", "asset", name, "err", err)
			http.NotFound(w, req)
			return
		}
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", "public, max-age=86400")
		h.Add("Vary", "Accept-Encoding")
		if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				log.Error("graphiql asset unreadable", "asset", name, "err", err)
				http.Error(w, "asset unavailable", http.StatusInternalServerError)
				return
			}
			_, _ = io.Copy(w, zr) //nolint:gosec // G110: an asset embedded in the binary, chosen from assetTypes, not a client's upload
			return
		}
		h.Set("Content-Encoding", "gzip")
		_, _ = w.Write(gz) //nolint:gosec // G705: an asset embedded in the binary, chosen from assetTypes; nothing of the request is in it
	})
}

// acceptsGzip reports whether an Accept-Encoding header admits gzip.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			continue
		}
		return true
	}
	return false
}
