package graphql

import (
	"context"
	"fmt"
	"sync"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/serving"
)

// Control is what the resolvers read about analysis configurations,
// experiments and appeals (the serving projection). Requester keys are
// never part of it.
type Control interface {
	Configurations(ctx context.Context) ([]serving.Configuration, error)
	Promotions(ctx context.Context) ([]serving.Promotion, error)
	Experiments(ctx context.Context) ([]serving.Experiment, error)
	AppealsOfClaims(ctx context.Context, claimIDs []string) (map[string][]serving.Appeal, error)
}

// controlSnapshot is one request's view of the configurations and
// experiments, read once (at most two queries) however many
// investigations ask for theirs.
type controlSnapshot struct {
	once           sync.Once
	configurations map[string]serving.Configuration
	experiments    map[string]serving.Experiment
	err            error
}

func (r *Resolver) snapshot(ctx context.Context) (*controlSnapshot, error) {
	s := r.loadersOf(ctx).control
	s.once.Do(func() {
		s.configurations, s.experiments = map[string]serving.Configuration{}, map[string]serving.Experiment{}
		if r.d.Control == nil {
			return
		}
		cs, err := r.d.Control.Configurations(ctx)
		if err != nil {
			s.err = err
			return
		}
		for _, c := range cs {
			s.configurations[c.ID] = c
		}
		es, err := r.d.Control.Experiments(ctx)
		if err != nil {
			s.err = err
			return
		}
		for _, e := range es {
			s.experiments[e.ID] = e
		}
	})
	return s, s.err
}

// configurationOf answers an investigation's configuration: the declared
// one, or what the investigation's row knows when it is not declared yet.
func (r *Resolver) configurationOf(ctx context.Context, id, name string, active bool) (*AnalysisConfiguration, error) {
	s, err := r.snapshot(ctx)
	if err != nil {
		return nil, r.internal(ctx, "configuration", err)
	}
	if c, ok := s.configurations[id]; ok {
		return analysisConfiguration(c), nil
	}
	return &AnalysisConfiguration{ID: id, Name: name, Active: active}, nil
}

func (i investigationResolver) Configuration(ctx context.Context, obj *PublicInvestigation) (*AnalysisConfiguration, error) {
	return i.configurationOf(ctx, obj.ConfigurationID, obj.ConfigurationName, obj.ConfigurationActive)
}

func (i investigationResolver) Experiment(ctx context.Context, obj *PublicInvestigation) (*Experiment, error) {
	if obj.ExperimentID == "" {
		return nil, nil
	}
	s, err := i.snapshot(ctx)
	if err != nil {
		return nil, i.internal(ctx, "experiment", err)
	}
	e, ok := s.experiments[obj.ExperimentID]
	if !ok {
		// Not applied yet (a rebuild in progress): what the request says.
		return &Experiment{ID: obj.ExperimentID}, nil
	}
	return experiment(e), nil
}

func (s summaryResolver) Configuration(ctx context.Context, obj *PostInvestigationSummary) (*AnalysisConfiguration, error) {
	return s.configurationOf(ctx, obj.ConfigurationID, obj.ConfigurationName, obj.ConfigurationActive)
}

type resultResolver struct{ *Resolver }

// PublicInvestigationResult implements ResolverRoot.
func (r *Resolver) PublicInvestigationResult() PublicInvestigationResultResolver {
	return resultResolver{r}
}

func (r resultResolver) Claims(ctx context.Context, obj *PublicInvestigationResult, includeRetracted *bool) ([]PublicClaim, error) {
	return r.claimsOf(ctx, obj.Investigation.ID, includeRetracted)
}

// claimsOf loads an investigation's claims (batched across the request):
// the current ones, and the retracted ones too when asked.
func (r *Resolver) claimsOf(ctx context.Context, investigationID string, includeRetracted *bool) ([]PublicClaim, error) {
	claims, _, err := r.loadersOf(ctx).claims.load(ctx, investigationID)
	if err != nil {
		return nil, r.internal(ctx, "claims", err)
	}
	all := includeRetracted != nil && *includeRetracted
	kept := make([]serving.Claim, 0, len(claims))
	for _, c := range claims {
		if all || c.Retraction == nil {
			kept = append(kept, c)
		}
	}
	return publicClaims(kept), nil
}

// Appeals lists the appeals of a claim, batched across the request's
// claims; none when the instance does not serve them.
func (c claimResolver) Appeals(ctx context.Context, obj *PublicClaim) ([]Appeal, error) {
	l := c.loadersOf(ctx).appeals
	if l == nil {
		return []Appeal{}, nil
	}
	as, _, err := l.load(ctx, obj.ID)
	if err != nil {
		return nil, c.internal(ctx, "appeals", err)
	}
	out := make([]Appeal, 0, len(as))
	for _, a := range as {
		pa := Appeal{ID: a.ID, Role: a.Role, Reason: a.Reason, Urls: a.URLs, Status: AppealStatus(a.Status),
			FiledAt: a.FiledAt.UTC(), DecisionReason: optional(a.DecisionReason)}
		if pa.Urls == nil {
			pa.Urls = []string{}
		}
		if a.DecidedAt != nil {
			at := a.DecidedAt.UTC()
			pa.DecidedAt = &at
		}
		out = append(out, pa)
	}
	return out, nil
}

func (q queryResolver) AnalysisConfigurations(ctx context.Context) ([]AnalysisConfiguration, error) {
	if q.d.Control == nil {
		return nil, gqlerror.Errorf("analysisConfigurations is not served by this instance")
	}
	cs, err := q.d.Control.Configurations(ctx)
	if err != nil {
		return nil, q.internal(ctx, "analysisConfigurations", err)
	}
	out := make([]AnalysisConfiguration, 0, len(cs))
	for _, c := range cs {
		out = append(out, *analysisConfiguration(c))
	}
	return out, nil
}

func (q queryResolver) ConfigurationPromotions(ctx context.Context) ([]ConfigurationPromotion, error) {
	if q.d.Control == nil {
		return nil, gqlerror.Errorf("configurationPromotions is not served by this instance")
	}
	ps, err := q.d.Control.Promotions(ctx)
	if err != nil {
		return nil, q.internal(ctx, "configurationPromotions", err)
	}
	out := make([]ConfigurationPromotion, 0, len(ps))
	for _, p := range ps {
		out = append(out, ConfigurationPromotion{ConfigurationID: p.ConfigurationID, PreviousConfigurationID: p.PreviousConfigurationID,
			Rollback: p.Rollback, Operator: p.Operator, Reason: p.Reason, At: p.At.UTC(), Rank: int(p.Rank)})
	}
	return out, nil
}

func (q queryResolver) Experiments(ctx context.Context) ([]Experiment, error) {
	if q.d.Control == nil {
		return nil, gqlerror.Errorf("experiments is not served by this instance")
	}
	es, err := q.d.Control.Experiments(ctx)
	if err != nil {
		return nil, q.internal(ctx, "experiments", err)
	}
	out := make([]Experiment, 0, len(es))
	for _, e := range es {
		out = append(out, *experiment(e))
	}
	return out, nil
}

func analysisConfiguration(c serving.Configuration) *AnalysisConfiguration {
	out := &AnalysisConfiguration{ID: c.ID, Name: c.Name, Active: c.Active, Operator: optional(c.Operator), Reason: optional(c.Reason)}
	if c.PromotionRank != nil {
		rank := int(*c.PromotionRank)
		out.PromotionRank = &rank
	}
	if c.ID != events.DefaultConfigurationID {
		at := c.DeclaredAt.UTC()
		out.DeclaredAt = &at
	}
	if s := c.Spec; s != nil {
		authorContext := s.AuthorContext
		out.Provider, out.Model, out.ValidatorModel = optional(s.Provider), optional(s.Model), optional(s.ValidatorModel)
		out.InvestigatorPrompt, out.ValidatorPrompt, out.Policy = optional(s.InvestigatorPrompt), optional(s.ValidatorPrompt), optional(s.Policy)
		out.AuthorContext = &authorContext
	}
	return out
}

func experiment(e serving.Experiment) *Experiment {
	out := &Experiment{ID: e.ID, Name: e.Name, ControlConfigurationID: e.ControlConfigurationID,
		CandidateConfigurationID: e.CandidateConfigurationID, CandidateShareBp: e.CandidateShareBP, Running: e.StoppedAt == nil,
		Operator: e.Operator, Reason: e.Reason, StartedAt: e.StartedAt.UTC(), StopReason: optional(e.StopReason)}
	if e.StoppedAt != nil {
		at := e.StoppedAt.UTC()
		out.StoppedAt = &at
	}
	return out
}

// AppealTrails gives the public trails of appeals (the audit projection),
// many at once.
type AppealTrails interface {
	AppealTrails(ctx context.Context, ids []string) (map[string]*audit.AppealTrail, error)
}

type appealResolver struct{ *Resolver }

// AuditTrail is the appeal's public trail, batched across the appeals of
// the request (one query per batch).
func (a appealResolver) AuditTrail(ctx context.Context, obj *Appeal) (RawJSON, error) {
	if a.d.AppealTrails == nil {
		return nil, nil
	}
	t, found, err := a.loadersOf(ctx).appealTrails.load(ctx, obj.ID)
	if err != nil {
		return nil, a.internal(ctx, "auditTrail", err)
	}
	if !found {
		return nil, nil
	}
	b, err := audit.AppealJSON(t)
	if err != nil {
		return nil, a.internal(ctx, "auditTrail", fmt.Errorf("render: %w", err))
	}
	return RawJSON(b), nil
}

// Appeal returns the Appeal resolvers.
func (r *Resolver) Appeal() AppealResolver { return appealResolver{r} }
