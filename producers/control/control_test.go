package control_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/control"
	"github.com/errata-dev/errata/projections/serving"
)

var clock = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// fakeState is the serving projection's control state in memory, applied
// from the appended events the way the design's rules say.
type fakeState struct {
	configs    map[string]control.Configuration // by id
	promotions []control.Promotion
	experiment *control.Experiment
	rank       int64
}

func newState() *fakeState {
	zero := int64(0)
	return &fakeState{configs: map[string]control.Configuration{
		events.DefaultConfigurationID: {ID: "", Name: events.DefaultConfigurationName, PromotionRank: &zero},
	}}
}

func (s *fakeState) apply(t *testing.T, ev events.Event) {
	t.Helper()
	switch p := ev.Payload.(type) {
	case *events.ConfigurationDeclaredV1:
		spec := p.Configuration
		s.configs[p.ConfigurationID] = control.Configuration{ID: p.ConfigurationID, Name: spec.Name, Spec: &spec}
	case *events.ConfigurationPromotedV1:
		s.rank++
		c := s.configs[p.ConfigurationID]
		rank := s.rank
		c.PromotionRank = &rank
		s.configs[p.ConfigurationID] = c
		s.promotions = append(s.promotions, control.Promotion{EventID: ev.ID, ConfigurationID: p.ConfigurationID,
			PreviousConfigurationID: p.PreviousConfigurationID, Rollback: p.Rollback, Rank: rank})
	case *events.ExperimentStartedV1:
		s.experiment = &control.Experiment{ID: p.ExperimentID, Name: p.Name, ControlConfigurationID: p.ControlConfigurationID,
			CandidateConfigurationID: p.CandidateConfigurationID, CandidateShareBP: p.CandidateShareBP}
	case *events.ExperimentStoppedV1:
		s.experiment = nil
	default:
		t.Fatalf("unexpected event %s", ev.Type())
	}
}

func (s *fakeState) ConfigurationByName(_ context.Context, name string) (control.Configuration, error) {
	for _, c := range s.configs {
		if c.Name == name {
			return c, nil
		}
	}
	return control.Configuration{}, serving.ErrNotFound
}

func (s *fakeState) ConfigurationByID(_ context.Context, id string) (control.Configuration, error) {
	if c, ok := s.configs[id]; ok {
		return c, nil
	}
	return control.Configuration{}, serving.ErrNotFound
}

func (s *fakeState) ActiveConfiguration(context.Context) (control.Configuration, error) {
	all := make([]control.Configuration, 0, len(s.configs))
	for _, c := range s.configs {
		if c.PromotionRank != nil {
			all = append(all, c)
		}
	}
	sort.Slice(all, func(i, j int) bool { return *all[i].PromotionRank > *all[j].PromotionRank })
	return all[0], nil
}

func (s *fakeState) Promotions(context.Context) ([]control.Promotion, error) {
	return s.promotions, nil
}

func (s *fakeState) RunningExperiment(context.Context) (*control.Experiment, error) {
	return s.experiment, nil
}

// appender applies what it appends to the state, so the next command sees it.
type appender struct {
	t     *testing.T
	reg   *events.Registry
	state *fakeState
	next  int
	log   []events.Event
}

func (a *appender) NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error) {
	return a.NewEventAt(p, clock, correlationID, causationID)
}

func (a *appender) NewEventAt(p events.Payload, at time.Time, correlationID, causationID string) (events.Event, error) {
	a.next++
	return a.reg.New(p, events.Meta{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", a.next), Time: at,
		CorrelationID: correlationID, CausationID: causationID})
}

func (a *appender) Append(_ context.Context, evs ...events.Event) ([]producers.Position, error) {
	pos := make([]producers.Position, len(evs))
	for i, ev := range evs {
		if a.state != nil {
			a.state.apply(a.t, ev)
		}
		a.log = append(a.log, ev)
		pos[i] = producers.Position{Topic: "errata.investigations", Offset: int64(len(a.log))}
	}
	return pos, nil
}

func setup(t *testing.T) (*control.Service, *fakeState, *appender) {
	t.Helper()
	st := newState()
	app := &appender{t: t, reg: events.NewCatalogRegistry(), state: st}
	return control.New(st, app, prompts.Default(), evidence.Policies()), st, app
}

var decision = control.Decision{Operator: "ops@host", Reason: "try the new model"}

func declaration(name string) control.Declaration {
	return control.Declaration{Name: name, Model: "gpt-5-mini", InvestigatorPrompt: "v1", ValidatorPrompt: "v1",
		Policy: "strict-v1", Decision: decision}
}

func TestDeclareResolvesThePolicyAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	svc, st, app := setup(t)
	out, err := svc.Declare(ctx, declaration("mini"))
	require.NoError(t, err)
	require.Len(t, app.log, 1)
	p := app.log[0].Payload.(*events.ConfigurationDeclaredV1)
	require.Equal(t, evidence.DefaultPolicy().Version(), p.Configuration.Policy, "the policy name is recorded as its version")
	require.Equal(t, events.ConfigurationID(p.Configuration), out.ID)
	require.Equal(t, "mini", st.configs[out.ID].Name)

	again, err := svc.Declare(ctx, declaration("mini"))
	require.NoError(t, err)
	require.True(t, again.Unchanged)
	require.Equal(t, out.ID, again.ID)
	require.Len(t, app.log, 1, "the same declaration again appends nothing")

	byVersion := declaration("mini")
	byVersion.Policy = evidence.DefaultPolicy().Version()
	same, err := svc.Declare(ctx, byVersion)
	require.NoError(t, err)
	require.True(t, same.Unchanged, "a policy version names the same configuration as its name")
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	type step func(*control.Service) error
	declare := func(d control.Declaration) step {
		return func(s *control.Service) error { _, err := s.Declare(ctx, d); return err }
	}
	with := func(edit func(*control.Declaration)) control.Declaration {
		d := declaration("mini")
		edit(&d)
		return d
	}
	promote := func(name string, d control.Decision) step {
		return func(s *control.Service) error { _, err := s.Promote(ctx, name, d); return err }
	}
	start := func(e control.ExperimentStart) step {
		return func(s *control.Service) error { _, err := s.StartExperiment(ctx, e); return err }
	}
	exp := control.ExperimentStart{Name: "mini-test", Candidate: "mini", ShareBP: 2000, Decision: decision}
	cases := []struct {
		name    string
		before  []step
		refused step
		want    string
	}{
		{"empty reason", nil, declare(with(func(d *control.Declaration) { d.Reason = "  " })), "reason is required"},
		{"empty operator", nil, declare(with(func(d *control.Declaration) { d.Operator = "" })), "operator is required"},
		{"control character in reason", nil, declare(with(func(d *control.Declaration) { d.Reason = "ok\x1b[2Jcleared" })), "control characters"},
		{"line break in operator", nil, declare(with(func(d *control.Declaration) { d.Operator = "a\nb" })), "control characters"},
		{"invalid UTF-8 in reason", nil, declare(with(func(d *control.Declaration) { d.Reason = "bad \xff" })), "control characters"},
		{"hostile name", nil, declare(with(func(d *control.Declaration) { d.Name = "../../etc; DROP TABLE" })), "configuration name"},
		{"uppercase name", nil, declare(with(func(d *control.Declaration) { d.Name = "Mini" })), "configuration name"},
		{"the default's name", nil, declare(with(func(d *control.Declaration) { d.Name = "default" })), "configuration name"},
		{"NUL in name", nil, declare(with(func(d *control.Declaration) { d.Name = "mini\x00" })), "configuration name"},
		{"unknown investigator prompt", nil, declare(with(func(d *control.Declaration) { d.InvestigatorPrompt = "v99" })), "investigator-fresh@v99"},
		{"malformed prompt version", nil, declare(with(func(d *control.Declaration) { d.ValidatorPrompt = "latest" })), "prompt versions"},
		{"unknown validator prompt", nil, declare(with(func(d *control.Declaration) { d.ValidatorPrompt = "v7" })), "validator@v7"},
		{"unknown policy", nil, declare(with(func(d *control.Declaration) { d.Policy = "lenient-v9" })), `evidence policy "lenient-v9" is unknown`},
		{"forged policy version", nil, declare(with(func(d *control.Declaration) { d.Policy = "strict-v1@000000000000" })), "version \"strict-v1@000000000000\" is unknown"},
		{"malformed model", nil, declare(with(func(d *control.Declaration) { d.Model = "gpt 5; rm -rf" })), "model"},
		{"name taken by other settings", []step{declare(declaration("mini"))},
			declare(with(func(d *control.Declaration) { d.Model = "gpt-5" })), `name "mini" is taken`},
		{"promote unknown", nil, promote("nope", decision), `"nope" is not declared`},
		{"promote hostile name", nil, promote("x\x1b]0;pwned\x07", decision), "configuration name is required"},
		{"promote the active one", nil, promote("default", decision), "already active"},
		{"promote without reason", []step{declare(declaration("mini"))}, promote("mini", control.Decision{Operator: "o"}), "reason is required"},
		{"rollback with nothing promoted", nil, func(s *control.Service) error { _, err := s.Rollback(ctx, decision); return err }, "no configuration was ever promoted"},
		{"start with an undeclared candidate", nil, start(exp), `"mini" is not declared`},
		{"start with the control as candidate", []step{declare(declaration("mini"))},
			start(control.ExperimentStart{Name: "e", Candidate: "mini", Control: "mini", ShareBP: 10, Decision: decision}), "is the control"},
		{"start with a zero share", []step{declare(declaration("mini"))},
			start(control.ExperimentStart{Name: "e", Candidate: "mini", ShareBP: 0, Decision: decision}), "share"},
		{"start with a full share", []step{declare(declaration("mini"))},
			start(control.ExperimentStart{Name: "e", Candidate: "mini", ShareBP: 10000, Decision: decision}), "share"},
		{"start with a hostile experiment name", []step{declare(declaration("mini"))},
			start(control.ExperimentStart{Name: "E<script>", Candidate: "mini", ShareBP: 10, Decision: decision}), "experiment name"},
		{"double start", []step{declare(declaration("mini")), start(exp)},
			start(control.ExperimentStart{Name: "other", Candidate: "mini", ShareBP: 10, Decision: decision}), `"mini-test" is running`},
		{"stop when none runs", nil, func(s *control.Service) error { _, err := s.StopExperiment(ctx, decision); return err }, "no experiment is running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc, _, app := setup(t)
			for _, b := range tc.before {
				require.NoError(t, b(svc))
			}
			n := len(app.log)
			err := tc.refused(svc)
			require.ErrorIs(t, err, control.ErrRefused)
			require.Contains(t, err.Error(), tc.want)
			require.Len(t, app.log, n, "a refused decision appends nothing")
		})
	}
}

func TestPromoteThenRollback(t *testing.T) {
	ctx := context.Background()
	svc, st, app := setup(t)
	mini, err := svc.Declare(ctx, declaration("mini"))
	require.NoError(t, err)
	_, err = svc.Promote(ctx, "mini", decision)
	require.NoError(t, err)
	active, _ := st.ActiveConfiguration(ctx)
	require.Equal(t, mini.ID, active.ID)
	promoted := app.log[len(app.log)-1].Payload.(*events.ConfigurationPromotedV1)
	require.Equal(t, events.ConfigurationPromotedV1{ConfigurationID: mini.ID, PreviousConfigurationID: "",
		Operator: decision.Operator, Reason: decision.Reason}, *promoted)

	back, err := svc.Rollback(ctx, control.Decision{Operator: "ops@host", Reason: "flag rate doubled"})
	require.NoError(t, err)
	require.Equal(t, events.DefaultConfigurationID, back.ID)
	rb := app.log[len(app.log)-1].Payload.(*events.ConfigurationPromotedV1)
	require.True(t, rb.Rollback)
	require.Equal(t, mini.ID, rb.PreviousConfigurationID)
	active, _ = st.ActiveConfiguration(ctx)
	require.Equal(t, events.DefaultConfigurationID, active.ID, "the default is active again")
}

func TestExperimentStartAndStop(t *testing.T) {
	ctx := context.Background()
	svc, st, app := setup(t)
	mini, err := svc.Declare(ctx, declaration("mini"))
	require.NoError(t, err)
	out, err := svc.StartExperiment(ctx, control.ExperimentStart{Name: "mini-test", Candidate: "mini", ShareBP: 2000, Decision: decision})
	require.NoError(t, err)
	require.Equal(t, events.ExperimentID("mini-test"), out.ID)
	started := app.log[len(app.log)-1].Payload.(*events.ExperimentStartedV1)
	require.Equal(t, "", started.ControlConfigurationID, "the control defaults to the active configuration")
	require.Equal(t, mini.ID, started.CandidateConfigurationID)
	require.Equal(t, 2000, started.CandidateShareBP)
	_, err = svc.StopExperiment(ctx, decision)
	require.NoError(t, err)
	require.Nil(t, st.experiment)
	stopped := app.log[len(app.log)-1].Payload.(*events.ExperimentStoppedV1)
	require.Equal(t, out.ID, stopped.ExperimentID)
	require.True(t, strings.HasPrefix(app.log[len(app.log)-1].CorrelationID, "control-"))
}
