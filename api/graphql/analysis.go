package graphql

import (
	"context"
	"errors"
	"fmt"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// Verdict analyses: analysis, postAnalyses and searchAnalyses, each field
// of the job JSON, and Analysis.auditTrail.

// AnalysisReader reads analyses from the serving projection.
type AnalysisReader interface {
	Analysis(ctx context.Context, id string) (serving.Analysis, error)
	AnalysesOfPost(ctx context.Context, platform, externalID string, limit int) ([]serving.Analysis, error)
}

// AnalysisSearcher searches COMPLETE analyses (Elasticsearch).
type AnalysisSearcher interface {
	Search(ctx context.Context, q search.AnalysisQuery) (search.AnalysisResult, error)
}

// AnalysisTrails gives the public trails of analyses (the audit
// projection), many at once.
type AnalysisTrails interface {
	AnalysisTrails(ctx context.Context, ids []string) (map[string]*audit.AnalysisTrail, error)
}

// errNotWired is what a resolver whose store the server was started
// without logs.
var errNotWired = errors.New("not wired")

func (q queryResolver) Analysis(ctx context.Context, id string) (*Analysis, error) {
	if q.d.Analyses == nil {
		return nil, q.internal(ctx, "analysis", errNotWired)
	}
	a, err := q.d.Analyses.Analysis(ctx, id)
	if errors.Is(err, serving.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, q.internal(ctx, "analysis", err)
	}
	return analysisOf(a), nil
}

func (q queryResolver) PostAnalyses(ctx context.Context, platform Platform, externalID string) ([]Analysis, error) {
	if q.d.Analyses == nil {
		return nil, q.internal(ctx, "postAnalyses", errNotWired)
	}
	list, err := q.d.Analyses.AnalysesOfPost(ctx, string(platform), externalID, serving.MaxPostAnalyses)
	if err != nil {
		return nil, q.internal(ctx, "postAnalyses", err)
	}
	out := make([]Analysis, 0, len(list))
	for _, a := range list {
		out = append(out, *analysisOf(a))
	}
	return out, nil
}

func (q queryResolver) SearchAnalyses(ctx context.Context, text *string, label *VerdictLabel, limit, offset *int) (*SearchAnalysesResult, error) {
	if q.d.AnalysisSearch == nil {
		return nil, q.internal(ctx, "searchAnalyses", errNotWired)
	}
	query := search.AnalysisQuery{Limit: 20}
	if limit != nil {
		query.Limit = *limit
	}
	if offset != nil {
		query.Offset = *offset
	}
	if err := checkSearchArguments(&query.Limit, &query.Offset, nil, nil, nil); err != nil {
		return nil, gqlerror.Errorf("%s", err.Error())
	}
	if text != nil {
		query.Text = *text
	}
	if label != nil {
		query.Label = string(*label)
	}
	res, err := q.d.AnalysisSearch.Search(ctx, query)
	if errors.Is(err, search.ErrInvalidQuery) {
		return nil, gqlerror.Errorf("%s", err.Error())
	}
	if err != nil {
		return nil, q.internal(ctx, "searchAnalyses", err)
	}
	out := &SearchAnalysesResult{Analyses: make([]AnalysisSummary, 0, len(res.Hits)), Total: int(res.Total), HasMore: res.HasMore}
	for _, h := range res.Hits {
		s := AnalysisSummary{ID: h.AnalysisID, CompletedAt: h.CompletedAt.UTC(), InputKind: h.InputKind,
			ExternalID: optional(h.ExternalID), URL: optional(h.URL), Title: optional(h.Title), Label: VerdictLabel(h.Label),
			Band: h.Band, TruthPercent: h.TruthPercent, Confidence: h.Confidence, Summary: h.Summary, ClaimCount: h.ClaimCount,
			Claims: h.Claims, Highlights: h.Highlights}
		if h.Platform != "" {
			p := Platform(h.Platform)
			s.Platform = &p
		}
		if s.Claims == nil {
			s.Claims = []string{}
		}
		if s.Highlights == nil {
			s.Highlights = []string{}
		}
		out.Analyses = append(out.Analyses, s)
	}
	return out, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Analysis implements ResolverRoot.
func (r *Resolver) Analysis() AnalysisResolver { return analysisResolver{r} }

type analysisResolver struct{ *Resolver }

// AuditTrail is the analysis's public trail, batched across the analyses
// of the request (one query per batch).
func (a analysisResolver) AuditTrail(ctx context.Context, obj *Analysis) (RawJSON, error) {
	if a.d.AnalysisTrails == nil {
		return nil, nil
	}
	t, found, err := a.loadersOf(ctx).analysisTrails.load(ctx, obj.ID)
	if err != nil {
		return nil, a.internal(ctx, "auditTrail", err)
	}
	if !found {
		return nil, nil
	}
	b, err := audit.AnalysisJSON(t)
	if err != nil {
		return nil, a.internal(ctx, "auditTrail", fmt.Errorf("render: %w", err))
	}
	return RawJSON(b), nil
}

// analysisOf is the GraphQL form of the job JSON.
func analysisOf(a serving.Analysis) *Analysis {
	out := &Analysis{ID: a.ID, Status: AnalysisStatus(a.Status), Failure: a.Failure, CreatedAt: a.CreatedAt.UTC(),
		Input: &AnalysisInput{Kind: a.Input.Kind, URL: a.Input.URL, Title: a.Input.Title, ExternalID: a.Input.ExternalID,
			TextLength: a.Input.TextLength},
		Versions: &AnalysisVersions{Prompts: make([]PromptVersion, 0, len(a.Versions.Prompts)), Provider: a.Versions.Provider,
			Model: a.Versions.Model, Registry: a.Versions.Registry, Policy: a.Versions.Policy, Rubric: a.Versions.Rubric},
		Claims: make([]AnalysisClaim, 0, len(a.Claims))}
	if a.Input.Platform != nil {
		p := Platform(*a.Input.Platform)
		out.Input.Platform = &p
	}
	if a.CompletedAt != nil {
		t := a.CompletedAt.UTC()
		out.CompletedAt = &t
	}
	for _, p := range a.Versions.Prompts {
		out.Versions.Prompts = append(out.Versions.Prompts, PromptVersion{Name: p.Name, Version: p.Version, Sha256: p.SHA256})
	}
	for _, c := range a.Claims {
		gc := AnalysisClaim{ID: c.ID, Index: c.Index, Text: c.Text, Context: c.Context,
			Queries: make([]ClaimQuery, 0, len(c.Queries)), Sources: make([]AssessedSource, 0, len(c.Sources))}
		if t := c.Triage; t != nil {
			gc.Triage = &ClaimTriage{Kind: TriageKind(t.Kind), Specificity: t.Specificity, TimeSensitive: t.TimeSensitive,
				CurrentEvents: t.CurrentEvents, Numeric: t.Numeric, Researched: t.Researched, Reason: t.Reason}
		}
		for _, q := range c.Queries {
			gq := ClaimQuery{Query: q.Query, Kind: q.Kind, Error: q.Error, Results: make([]QueryResult, 0, len(q.Results))}
			for _, r := range q.Results {
				gq.Results = append(gq.Results, QueryResult{URL: r.URL, Title: r.Title, Snippet: r.Snippet, PublishedAt: r.PublishedAt})
			}
			gc.Queries = append(gc.Queries, gq)
		}
		for _, s := range c.Sources {
			gc.Sources = append(gc.Sources, AssessedSource{URL: s.URL, Domain: s.Domain, Tier: s.Tier, Rule: s.Rule,
				Origin: s.Origin, Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral})
		}
		if v := c.Verdict; v != nil {
			gv := &ClaimVerdict{Score: v.Score, TruthPercent: v.TruthPercent, Confidence: v.Confidence,
				Label: VerdictLabel(v.Label), Band: v.Band, Caps: capsOf(v.Caps), Summary: v.Summary}
			if v.Engine != nil {
				e := EvidenceVerdict(*v.Engine)
				gv.Engine = &e
			}
			if v.Gate4 != nil {
				g := EvidenceSufficiency(*v.Gate4)
				gv.Gate4 = &g
			}
			gc.Verdict = gv
		}
		out.Claims = append(out.Claims, gc)
	}
	if v := a.Verdict; v != nil {
		pv := &PostVerdict{Label: VerdictLabel(v.Label), Band: v.Band, TruthPercent: v.TruthPercent, Confidence: v.Confidence,
			Caps: capsOf(v.Caps), Summary: v.Summary, Caveats: v.Caveats, Sources: make([]VerdictSource, 0, len(v.Sources))}
		if pv.Caveats == nil {
			pv.Caveats = []string{}
		}
		for _, s := range v.Sources {
			pv.Sources = append(pv.Sources, VerdictSource{URL: s.URL, Title: s.Title, Domain: s.Domain, Tier: s.Tier,
				FromSearch: s.FromSearch})
		}
		out.Verdict = pv
	}
	return out
}

func capsOf(cs []serving.VerdictCap) []ConfidenceCap {
	out := make([]ConfidenceCap, 0, len(cs))
	for _, c := range cs {
		out = append(out, ConfidenceCap{Rule: c.Rule, Cap: c.Cap, Before: c.Before})
	}
	return out
}
