package graphql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

// Serving is what the resolvers read from the serving projection (Postgres).
type Serving interface {
	PublicInvestigation(ctx context.Context, id string) (serving.PublicInvestigation, error)
	PublicPostInvestigations(ctx context.Context, platform, externalID string) (serving.PublicPost, []serving.PublicInvestigation, error)
	ClaimsOfInvestigations(ctx context.Context, ids []string) (map[string][]serving.Claim, error)
	AuthorsOfPosts(ctx context.Context, postIDs []string) (map[string]serving.PublicAuthor, error)
	AssessmentsOfClaims(ctx context.Context, claimIDs []string) (map[string]serving.Assessment, error)
}

// Searcher is the corpus search (Elasticsearch).
type Searcher interface {
	Search(ctx context.Context, q search.Query) (search.Result, error)
}

// Metrics answers publicMetrics (ClickHouse).
type Metrics interface {
	Incidence(ctx context.Context, f analytics.Filter) (analytics.Incidence, error)
}

// Trails gives the public audit trail of a complete investigation (nil
// when there is none).
type Trails interface {
	Trail(ctx context.Context, investigationID string) (*audit.Trail, error)
}

// Deps are the read models behind the API.
type Deps struct {
	Serving Serving
	Search  Searcher
	Metrics Metrics
	Trails  Trails
	// Control serves configurations, experiments and appeals; without it
	// their queries answer that they are unavailable, an investigation's
	// configuration is what its row knows and claims have no appeals.
	Control Control
	// Analyses, AnalysisSearch and AnalysisTrails serve the verdict
	// analyses (analysis, postAnalyses, searchAnalyses, auditTrail); a
	// field whose store is nil answers that it is unavailable.
	Analyses       AnalysisReader
	AnalysisSearch AnalysisSearcher
	AnalysisTrails AnalysisTrails
	// AppealTrails serves Appeal.auditTrail (null without it).
	AppealTrails AppealTrails
	Log          *slog.Logger
	// BatchWait is how long a loader collects keys before it fetches
	// (default 2 ms).
	BatchWait time.Duration
}

// Resolver is the root resolver.
type Resolver struct{ d Deps }

// NewResolver returns the root resolver over deps.
func NewResolver(d Deps) *Resolver {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.BatchWait <= 0 {
		d.BatchWait = 2 * time.Millisecond
	}
	return &Resolver{d: d}
}

// Query implements ResolverRoot.
func (r *Resolver) Query() QueryResolver { return queryResolver{r} }

// PublicPost implements ResolverRoot.
func (r *Resolver) PublicPost() PublicPostResolver { return postResolver{r} }

// PublicInvestigation implements ResolverRoot.
func (r *Resolver) PublicInvestigation() PublicInvestigationResolver { return investigationResolver{r} }

// PostInvestigationSummary implements ResolverRoot.
func (r *Resolver) PostInvestigationSummary() PostInvestigationSummaryResolver {
	return summaryResolver{r}
}

// PublicClaim implements ResolverRoot.
func (r *Resolver) PublicClaim() PublicClaimResolver { return claimResolver{r} }

// loaders are one request's batching loaders.
type loaders struct {
	claims      *loader[string, []serving.Claim]
	authors     *loader[string, serving.PublicAuthor]
	assessments *loader[string, serving.Assessment]
	// appeals is nil without Deps.Control.
	appeals *loader[string, []serving.Appeal]
	control *controlSnapshot
	// analysisTrails is nil-safe: without AnalysisTrails it is never used.
	analysisTrails *loader[string, *audit.AnalysisTrail]
	// appealTrails is nil-safe: without AppealTrails it is never used.
	appealTrails *loader[string, *audit.AppealTrail]
}

type loadersKey struct{}

// withLoaders gives the request in ctx its own loaders.
func (r *Resolver) withLoaders(ctx context.Context) context.Context {
	l := &loaders{
		claims:      newLoader(r.d.BatchWait, 200, r.d.Serving.ClaimsOfInvestigations),
		authors:     newLoader(r.d.BatchWait, 200, r.d.Serving.AuthorsOfPosts),
		assessments: newLoader(r.d.BatchWait, 200, r.d.Serving.AssessmentsOfClaims),
		control:     &controlSnapshot{},
	}
	if r.d.Control != nil {
		l.appeals = newLoader(r.d.BatchWait, 200, r.d.Control.AppealsOfClaims)
	}
	if r.d.AnalysisTrails != nil {
		l.analysisTrails = newLoader(r.d.BatchWait, 200, r.d.AnalysisTrails.AnalysisTrails)
	}
	if r.d.AppealTrails != nil {
		l.appealTrails = newLoader(r.d.BatchWait, 200, r.d.AppealTrails.AppealTrails)
	}
	return context.WithValue(ctx, loadersKey{}, l)
}

func (r *Resolver) loadersOf(ctx context.Context) *loaders {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l
	}
	// Outside a request (tests calling resolvers directly): unbatched.
	return r.withLoaders(ctx).Value(loadersKey{}).(*loaders)
}

// internal logs err and returns the error the client sees: no details. A
// request that ran out of time says so (and is no server error).
func (r *Resolver) internal(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.d.Log.WarnContext(ctx, "graphql request out of time", "field", what, "err", err)
		return gqlerror.Errorf("%s was stopped: the request took longer than its time limit", what)
	}
	r.d.Log.ErrorContext(ctx, "graphql resolver failed", "field", what, "err", err)
	return gqlerror.Errorf("%s is unavailable right now; try again later", what)
}

type queryResolver struct{ *Resolver }

func (q queryResolver) PublicInvestigation(ctx context.Context, id string) (*PublicInvestigationResult, error) {
	pi, err := q.d.Serving.PublicInvestigation(ctx, id)
	if errors.Is(err, serving.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, q.internal(ctx, "publicInvestigation", err)
	}
	// The claims are resolved by PublicInvestigationResult.claims.
	return &PublicInvestigationResult{
		Investigation: publicInvestigation(pi),
		Post:          &PublicPost{Platform: Platform(pi.Platform), ExternalID: pi.ExternalID, URL: pi.URL, PostID: pi.PostID},
	}, nil
}

func (q queryResolver) PostInvestigations(ctx context.Context, platform Platform, externalID string) (*PostInvestigationsResult, error) {
	post, invs, err := q.d.Serving.PublicPostInvestigations(ctx, string(platform), externalID)
	if errors.Is(err, serving.ErrNotFound) {
		return &PostInvestigationsResult{Investigations: []PostInvestigationSummary{}}, nil
	}
	if err != nil {
		return nil, q.internal(ctx, "postInvestigations", err)
	}
	out := &PostInvestigationsResult{
		Post:           &PublicPost{Platform: Platform(post.Platform), ExternalID: post.ExternalID, URL: post.URL, PostID: post.ID},
		Investigations: make([]PostInvestigationSummary, 0, len(invs)),
	}
	for _, pi := range invs {
		out.Investigations = append(out.Investigations, PostInvestigationSummary{
			ID: pi.ID, ContentHash: pi.ContentHash, Origin: origin(pi.Provenance, pi.ServerVerifiedAt),
			CorroborationCount: pi.CorroborationCount, CheckedAt: pi.CheckedAt.UTC(), ClaimCount: pi.ClaimCount,
			ConfigurationID: pi.ConfigurationID, ConfigurationName: pi.ConfigurationName, ConfigurationActive: pi.ConfigurationActive,
			Supersedes: optional(pi.Supersedes), SupersededBy: optional(pi.SupersededBy), Visible: pi.Visible,
		})
	}
	return out, nil
}

// Search limits (spec 3.4).
const (
	minLimit = 1
	maxLimit = 100
)

func (q queryResolver) SearchInvestigations(ctx context.Context, text *string, platform *Platform, limit, offset *int,
	authorID *string, provenance *ContentProvenance, minClaimCount *int, checkedAfter, checkedBefore *time.Time,
) (*SearchInvestigationsResult, error) {
	query := search.Query{Limit: 20}
	if limit != nil {
		query.Limit = *limit
	}
	if offset != nil {
		query.Offset = *offset
	}
	// The argument check refused bad ranges before execution; this keeps
	// resolvers called directly just as strict.
	if err := checkSearchArguments(&query.Limit, &query.Offset, minClaimCount, checkedAfter, checkedBefore); err != nil {
		return nil, gqlerror.Errorf("%s", err.Error())
	}
	if minClaimCount != nil {
		query.MinClaimCount = *minClaimCount
	}
	if text != nil {
		query.Text = *text
	}
	if platform != nil {
		query.Platform = string(*platform)
	}
	if authorID != nil {
		query.AuthorID = *authorID
	}
	if provenance != nil {
		query.Provenance = string(*provenance)
	}
	query.CheckedFrom, query.CheckedTo = checkedAfter, checkedBefore
	res, err := q.d.Search.Search(ctx, query)
	if errors.Is(err, search.ErrInvalidQuery) {
		return nil, gqlerror.Errorf("%s", err.Error())
	}
	if err != nil {
		return nil, q.internal(ctx, "searchInvestigations", err)
	}
	out := &SearchInvestigationsResult{
		Investigations: make([]SearchInvestigationSummary, 0, len(res.Hits)),
		Total:          int(res.Total),
		HasMore:        res.HasMore,
	}
	for _, h := range res.Hits {
		s := SearchInvestigationSummary{
			ID: h.InvestigationID, ContentHash: h.ContentHash, CheckedAt: h.CheckedAt.UTC(), Platform: Platform(h.Platform),
			ExternalID: h.ExternalID, URL: h.URL, Origin: origin(h.Provenance, h.ServerVerifiedAt),
			CorroborationCount: h.CorroborationCount, ClaimCount: h.ClaimCount,
			Claims: make([]ClaimSummary, 0, len(h.Claims)), Highlights: h.Highlights,
		}
		if s.Highlights == nil {
			s.Highlights = []string{}
		}
		if h.Author != nil {
			s.Author = &PublicAuthor{ID: h.Author.ID, Platform: Platform(h.Platform), DisplayName: h.Author.DisplayName}
		}
		for _, c := range h.Claims {
			s.Claims = append(s.Claims, ClaimSummary{ID: c.ID, Text: c.Text, Summary: c.Summary})
		}
		out.Investigations = append(out.Investigations, s)
	}
	return out, nil
}

func (q queryResolver) PublicMetrics(ctx context.Context, platform *Platform, authorID *string, windowStart, windowEnd *time.Time) (*PublicMetrics, error) {
	f := analytics.Filter{WindowStart: windowStart, WindowEnd: windowEnd}
	if platform != nil {
		f.Platform = string(*platform)
	}
	if authorID != nil {
		f.AuthorID = *authorID
	}
	inc, err := q.d.Metrics.Incidence(ctx, f)
	if errors.Is(err, analytics.ErrInvalidFilter) {
		return nil, gqlerror.Errorf("%s", err.Error())
	}
	if err != nil {
		return nil, q.internal(ctx, "publicMetrics", err)
	}
	return &PublicMetrics{
		TotalInvestigatedPosts:     int(inc.TotalInvestigatedPosts),
		InvestigatedPostsWithFlags: int(inc.InvestigatedPostsWithFlags),
		FactCheckIncidence:         inc.FactCheckIncidence,
	}, nil
}

type postResolver struct{ *Resolver }

func (p postResolver) Author(ctx context.Context, obj *PublicPost) (*PublicAuthor, error) {
	if obj.PostID == "" {
		return nil, nil
	}
	a, found, err := p.loadersOf(ctx).authors.load(ctx, obj.PostID)
	if err != nil {
		return nil, p.internal(ctx, "author", err)
	}
	if !found {
		return nil, nil
	}
	return &PublicAuthor{ID: a.ID, Platform: Platform(a.Platform), DisplayName: a.DisplayName}, nil
}

type investigationResolver struct{ *Resolver }

func (i investigationResolver) AuditTrail(ctx context.Context, obj *PublicInvestigation) (RawJSON, error) {
	if i.d.Trails == nil {
		return nil, nil
	}
	t, err := i.d.Trails.Trail(ctx, obj.ID)
	if err != nil {
		return nil, i.internal(ctx, "auditTrail", err)
	}
	if t == nil {
		return nil, nil
	}
	b, err := audit.JSON(t)
	if err != nil {
		return nil, i.internal(ctx, "auditTrail", fmt.Errorf("render: %w", err))
	}
	return RawJSON(b), nil
}

type summaryResolver struct{ *Resolver }

func (s summaryResolver) Claims(ctx context.Context, obj *PostInvestigationSummary, includeRetracted *bool) ([]PublicClaim, error) {
	return s.claimsOf(ctx, obj.ID, includeRetracted)
}

type claimResolver struct{ *Resolver }

// Assessment is the assessment that published the claim, batched across
// every claim of the request; nil for a claim without one.
func (c claimResolver) Assessment(ctx context.Context, obj *PublicClaim) (*ClaimAssessment, error) {
	a, found, err := c.loadersOf(ctx).assessments.load(ctx, obj.ID)
	if err != nil {
		return nil, c.internal(ctx, "assessment", err)
	}
	if !found {
		return nil, nil
	}
	out := &ClaimAssessment{Score: a.Score, Verdict: EvidenceVerdict(a.Verdict), Gate4: EvidenceSufficiency(a.Gate4),
		PolicyVersion: a.PolicyVersion, RegistryVersion: a.RegistryVersion, PublishMode: a.PublishMode,
		Features: &AssessmentFeatures{EMax: a.Features.EMax, EMean3: a.Features.EMean3, CMax: a.Features.CMax,
			AgreeDom: a.Features.AgreeDom, RelAvg: a.Features.RelAvg, RecMax: a.Features.RecMax, NumOk: a.Features.NumOK},
		Sources: make([]AssessedSource, 0, len(a.Sources))}
	for _, s := range a.Sources {
		out.Sources = append(out.Sources, AssessedSource{URL: s.URL, Domain: s.Domain, Tier: s.Tier, Rule: s.Rule,
			Origin: s.Origin, Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral})
	}
	return out, nil
}

func publicInvestigation(pi serving.PublicInvestigation) *PublicInvestigation {
	return &PublicInvestigation{
		ID: pi.ID, Origin: origin(pi.Provenance, pi.ServerVerifiedAt), CorroborationCount: pi.CorroborationCount,
		CheckedAt: pi.CheckedAt.UTC(), PromptVersion: pi.PromptVersion, Provider: pi.Provider, Model: pi.Model,
		ConfigurationID: pi.ConfigurationID, ConfigurationName: pi.ConfigurationName, ConfigurationActive: pi.ConfigurationActive,
		Supersedes: optional(pi.Supersedes), SupersededBy: optional(pi.SupersededBy), ExperimentID: pi.ExperimentID,
		Arm: optional(pi.Arm), Visible: pi.Visible,
	}
}

func origin(provenance string, verifiedAt *time.Time) *InvestigationOrigin {
	o := &InvestigationOrigin{Provenance: ContentProvenance(provenance)}
	if !o.Provenance.IsValid() {
		o.Provenance = ContentProvenanceClientFallback
	}
	if verifiedAt != nil {
		t := verifiedAt.UTC()
		o.ServerVerifiedAt = &t
	}
	return o
}

func publicClaims(cs []serving.Claim) []PublicClaim {
	out := make([]PublicClaim, 0, len(cs))
	for _, c := range cs {
		pc := PublicClaim{ID: c.ID, Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning,
			Sources: make([]PublicSource, 0, len(c.Sources))}
		for _, s := range c.Sources {
			pc.Sources = append(pc.Sources, PublicSource{URL: s.URL, Title: s.Title, Snippet: s.Snippet})
		}
		if r := c.Retraction; r != nil {
			pc.Retracted = true
			pc.Retraction = &ClaimRetraction{Reason: r.Reason, AppealID: r.AppealID, At: r.At.UTC()}
		}
		out = append(out, pc)
	}
	return out
}
