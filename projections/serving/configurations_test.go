package serving_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving"
)

// spec is a valid analysis configuration named name.
func spec(name, model string) events.AnalysisConfigurationV1 {
	return events.AnalysisConfigurationV1{Name: name, Model: model, InvestigatorPrompt: "v1", ValidatorPrompt: "v1",
		Policy: "default@0123456789ab"}
}

func declared(c events.AnalysisConfigurationV1) *events.ConfigurationDeclaredV1 {
	return &events.ConfigurationDeclaredV1{ConfigurationID: events.ConfigurationID(c), Configuration: c,
		Operator: "ops", Reason: "declare " + c.Name}
}

func promoted(id, previous string, rollback bool) *events.ConfigurationPromotedV1 {
	return &events.ConfigurationPromotedV1{ConfigurationID: id, PreviousConfigurationID: previous, Rollback: rollback,
		Operator: "ops", Reason: "promote " + id}
}

func started(name, control, candidate string, shareBP int) *events.ExperimentStartedV1 {
	return &events.ExperimentStartedV1{ExperimentID: events.ExperimentID(name), Name: name, ControlConfigurationID: control,
		CandidateConfigurationID: candidate, CandidateShareBP: shareBP, Operator: "ops", Reason: "try " + name}
}

func stopped(name string) *events.ExperimentStoppedV1 {
	return &events.ExperimentStoppedV1{ExperimentID: events.ExperimentID(name), Operator: "ops", Reason: "enough"}
}

// requestUnder is investigationOf under a configuration (nil: the default).
func requestUnder(r *events.PostVersionRegisteredV1, c *events.AnalysisConfigurationV1, supersedes, experiment, arm string) *events.InvestigationRequestedV1 {
	p := investigationOf(r)
	if c != nil {
		p.ConfigurationID, p.Configuration = events.ConfigurationID(*c), c
		p.InvestigationID = events.InvestigationIDFor(r.PostVersionID, p.ConfigurationID)
		p.Source = events.RequestSourceReprocess
	}
	p.Supersedes, p.ExperimentID, p.Arm = supersedes, experiment, arm
	return p
}

// completedUnder is completedWith under a configuration (nil: the default).
func completedUnder(r *events.PostVersionRegisteredV1, c *events.AnalysisConfigurationV1, summaries ...string) *events.InvestigationCompletedV1 {
	p := completedWith(r, summaries...)
	if c != nil {
		p.ConfigurationID = events.ConfigurationID(*c)
		p.InvestigationID = events.InvestigationIDFor(r.PostVersionID, p.ConfigurationID)
		for i := range p.Claims {
			p.Claims[i].ID = events.ClaimID(p.InvestigationID, i)
		}
	}
	return p
}

func filed(claimID, investigationID string, r *events.PostVersionRegisteredV1, who, reason string, urls ...string) *events.AppealFiledV1 {
	key := hex64("requester:" + who)
	if urls == nil {
		urls = []string{}
	}
	return &events.AppealFiledV1{
		AppealID: events.AppealID(claimID, key, reason, urls), ClaimID: claimID, InvestigationID: investigationID,
		PostID: r.PostID, PostVersionID: r.PostVersionID, Role: events.AppealRoleReader, Reason: reason, URLs: urls,
		RequesterKey: key,
	}
}

func decided(f *events.AppealFiledV1, outcome, reason string) *events.AppealDecidedV1 {
	return &events.AppealDecidedV1{AppealID: f.AppealID, ClaimID: f.ClaimID, InvestigationID: f.InvestigationID,
		Outcome: outcome, Reason: reason, PolicyVersion: "default@0123456789ab"}
}

// encoded turns events made once (so their ids stay the same) into the
// records of one partition.
func encoded(t *testing.T, partition int32, evs []events.Event) []*kgo.Record {
	t.Helper()
	out := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		out[i] = record(t, postsTopic, partition, int64(i), ev)
	}
	return out
}

// controlWorld is a log of configurations, investigations and appeals in
// groups that live in different partitions: each group keeps its order,
// the groups may apply in any order.
type controlWorld struct {
	v1, v2, v3                 *events.PostVersionRegisteredV1
	strict, clash, cand        events.AnalysisConfigurationV1
	defaultV1, strictV1        string // investigation ids
	alpha, beta, gamma         string // claim ids
	retractAlpha, upholdBeta   *events.AppealFiledV1
	laterAlpha                 *events.AppealFiledV1
	registrations, investigs   []events.Event
	control, appeals, appeals2 []events.Event
}

func newControlWorld(t *testing.T) *controlWorld {
	w := &controlWorld{}
	w.v1 = registration(events.PlatformX, "500", "The first text, investigated twice.")
	w.v2 = registration(events.PlatformX, "500", "The edited text of the post.")
	w.v3 = registration(events.PlatformLessWrong, "lw9", "Another post entirely.")
	w.strict, w.clash, w.cand = spec("strict", "gpt-strict"), spec("strict", "gpt-other"), spec("cand", "gpt-cand")
	w.defaultV1 = events.InvestigationID(w.v1.PostVersionID)
	w.strictV1 = events.InvestigationIDFor(w.v1.PostVersionID, events.ConfigurationID(w.strict))
	w.alpha, w.beta, w.gamma = events.ClaimID(w.defaultV1, 0), events.ClaimID(w.defaultV1, 1), events.ClaimID(w.strictV1, 0)
	at := func(m int) time.Time { return base.Add(time.Duration(m) * time.Minute) }
	ev := func(p events.Payload, m int) events.Event { return newEvent(t, p, at(m)) }

	w.registrations = []events.Event{ev(w.v1, 0), ev(w.v2, 1), ev(w.v3, 2)}
	w.control = []events.Event{ev(declared(w.strict), 3), ev(declared(w.clash), 4), ev(declared(w.cand), 5)}
	w.investigs = []events.Event{
		ev(requestUnder(w.v1, nil, "", "", ""), 6), ev(completedUnder(w.v1, nil, "alpha", "beta"), 7),
		ev(requestUnder(w.v1, &w.strict, w.defaultV1, "", ""), 8), ev(completedUnder(w.v1, &w.strict, "gamma"), 9),
		ev(requestUnder(w.v3, nil, "", "", ""), 10),
	}
	w.retractAlpha = filed(w.alpha, w.defaultV1, w.v1, "r1", "The source says the opposite.", "https://example.org/a")
	w.upholdBeta = filed(w.beta, w.defaultV1, w.v1, "r2", "I disagree with this one.")
	w.laterAlpha = filed(w.alpha, w.defaultV1, w.v1, "r3", "Also wrong, for another reason.")
	w.appeals = []events.Event{
		ev(w.retractAlpha, 11), ev(decided(w.retractAlpha, events.AppealRetracted, "The claim misread its source."), 12),
		ev(w.upholdBeta, 13), ev(decided(w.upholdBeta, events.AppealUpheld, "The sources still refute the post."), 14),
	}
	// A second retraction of alpha, decided later: alpha stays retracted
	// by the first.
	w.appeals2 = []events.Event{
		ev(w.laterAlpha, 15), ev(decided(w.laterAlpha, events.AppealRetracted, "Wrong as well."), 16),
	}
	return w
}

func (w *controlWorld) all() []events.Event {
	return slices.Concat(w.registrations, w.control, w.investigs, w.appeals, w.appeals2)
}

func claimIDs(cs []serving.Claim) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func visibleOf(t *testing.T, rd *serving.Reader, r *events.PostVersionRegisteredV1) serving.VersionStatus {
	t.Helper()
	v, err := rd.VersionStatusByID(context.Background(), r.PostVersionID)
	require.NoError(t, err)
	return v
}

// TestConfigurationsVisibilityAndAppeals walks one post version through a
// re-processing, its promotion, a rollback and an experiment, with
// appeals retracting and upholding claims, checking what the extension
// and the history see at each step.
func TestConfigurationsVisibilityAndAppeals(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)
	w := newControlWorld(t)
	p.handle(t, encoded(t, 0, w.all())...)
	strictID, candID := events.ConfigurationID(w.strict), events.ConfigurationID(w.cand)

	// The re-processing under "strict" is not promoted: the default result
	// stays visible, less its retracted claim.
	v := visibleOf(t, rd, w.v1)
	require.Equal(t, w.defaultV1, v.InvestigationID)
	require.Equal(t, events.StatusComplete, v.InvestigationStatus)
	require.Empty(t, v.InvestigationConfigurationID)
	require.Equal(t, []string{w.beta}, claimIDs(v.Claims))
	batch, err := rd.BatchStatuses(ctx, []serving.BatchKey{{Platform: "X", ExternalID: "500", VersionHash: w.v1.VersionHash}})
	require.NoError(t, err)
	require.Equal(t, []serving.BatchStatus{{Investigated: true, IncorrectClaimCount: 1}}, batch)
	// The edited version's prior is the visible result of the first.
	v2 := visibleOf(t, rd, w.v2)
	require.NotNil(t, v2.Prior)
	require.Equal(t, serving.Prior{InvestigationID: w.defaultV1, ConfigurationID: "", Claims: v2.Prior.Claims}, *v2.Prior)
	require.Equal(t, []string{w.beta}, claimIDs(v2.Prior.Claims))

	history, err := rd.InvestigationHistory(ctx, w.v1.PostVersionID)
	require.NoError(t, err)
	require.Len(t, history, 2)
	require.Equal(t, serving.InvestigationHistoryEntry{
		ID: w.defaultV1, ConfigurationID: "", ConfigurationName: "default", Status: events.StatusComplete,
		Source: events.RequestSourceSelector, SupersededBy: w.strictV1, Visible: true,
		QueuedAt: history[0].QueuedAt, UpdatedAt: history[0].UpdatedAt,
	}, history[0])
	require.Equal(t, serving.InvestigationHistoryEntry{
		ID: w.strictV1, ConfigurationID: strictID, ConfigurationName: "strict", Status: events.StatusComplete,
		Source: events.RequestSourceReprocess, Supersedes: w.defaultV1, Visible: false,
		QueuedAt: history[1].QueuedAt, UpdatedAt: history[1].UpdatedAt,
	}, history[1])

	// The public history keeps both results and every claim, the
	// retracted one with its reason.
	_, invs, err := rd.PublicPostInvestigations(ctx, "X", "500")
	require.NoError(t, err)
	byID := map[string]serving.PublicInvestigation{}
	for _, pi := range invs {
		byID[pi.ID] = pi
	}
	require.Len(t, byID, 2)
	def, re := byID[w.defaultV1], byID[w.strictV1]
	require.Equal(t, [6]any{"", "default", true, true, w.strictV1, 1},
		[6]any{def.ConfigurationID, def.ConfigurationName, def.ConfigurationActive, def.Visible, def.SupersededBy, def.ClaimCount})
	require.Equal(t, [6]any{strictID, "strict", false, false, w.defaultV1, 1},
		[6]any{re.ConfigurationID, re.ConfigurationName, re.ConfigurationActive, re.Visible, re.Supersedes, re.ClaimCount})
	claims, err := rd.ClaimsOfInvestigations(ctx, []string{w.defaultV1})
	require.NoError(t, err)
	require.Equal(t, []string{w.alpha, w.beta}, claimIDs(claims[w.defaultV1]))
	require.NotNil(t, claims[w.defaultV1][0].Retraction)
	require.Equal(t, w.retractAlpha.AppealID, claims[w.defaultV1][0].Retraction.AppealID)
	require.Equal(t, "The claim misread its source.", claims[w.defaultV1][0].Retraction.Reason)
	require.True(t, base.Add(12*time.Minute).Equal(claims[w.defaultV1][0].Retraction.At))
	require.Nil(t, claims[w.defaultV1][1].Retraction)

	// The first declaration of "strict" won; the clash changed nothing.
	byName, err := rd.ConfigurationByName(ctx, "strict")
	require.NoError(t, err)
	require.Equal(t, strictID, byName.ID)
	require.Equal(t, w.strict, *byName.Spec)
	require.Nil(t, byName.PromotionRank)
	_, err = rd.ConfigurationByID(ctx, events.ConfigurationID(w.clash))
	require.ErrorIs(t, err, serving.ErrNotFound)

	// Promote "strict": its result becomes visible everywhere.
	n := int64(len(w.all()))
	p.handle(t, records(t, 0, n, timed{promoted(strictID, "", false), base.Add(20 * time.Minute)})...)
	v = visibleOf(t, rd, w.v1)
	require.Equal(t, w.strictV1, v.InvestigationID)
	require.Equal(t, strictID, v.InvestigationConfigurationID)
	require.Equal(t, []string{w.gamma}, claimIDs(v.Claims))
	v2 = visibleOf(t, rd, w.v2)
	require.Equal(t, w.strictV1, v2.Prior.InvestigationID)
	require.Equal(t, strictID, v2.Prior.ConfigurationID)
	active, err := rd.ActiveConfiguration(ctx)
	require.NoError(t, err)
	require.Equal(t, "strict", active.Name)
	require.True(t, active.Active)

	// Roll back to the default.
	p.handle(t, records(t, 0, n+1, timed{promoted("", strictID, true), base.Add(21 * time.Minute)})...)
	require.Equal(t, w.defaultV1, visibleOf(t, rd, w.v1).InvestigationID)
	promotions, err := rd.Promotions(ctx)
	require.NoError(t, err)
	require.Len(t, promotions, 2)
	require.Equal(t, []int64{1, 2}, []int64{promotions[0].Rank, promotions[1].Rank})
	require.Equal(t, strictID, promotions[0].ConfigurationID)
	require.True(t, promotions[1].Rollback)
	require.Equal(t, strictID, promotions[1].PreviousConfigurationID)
	configs, err := rd.Configurations(ctx)
	require.NoError(t, err)
	names := []string{}
	for _, c := range configs {
		names = append(names, c.Name)
		require.Equal(t, c.Name == "default", c.Active, c.Name)
	}
	require.Equal(t, []string{"default", "strict", "cand"}, names)
	require.Equal(t, int64(2), *configs[0].PromotionRank)
	require.Equal(t, int64(1), *configs[1].PromotionRank)
	require.Nil(t, configs[2].PromotionRank)

	// An experiment: a running arm is eligible while the experiment runs,
	// and preferred over a result that is not complete.
	p.handle(t, records(t, 0, n+2,
		timed{started("try-cand", "", candID, 5000), base.Add(22 * time.Minute)},
		timed{started("second", "", strictID, 100), base.Add(23 * time.Minute)}, // ignored: one runs
		timed{stopped("never-started"), base.Add(23 * time.Minute)},             // no-op
	)...)
	running, err := rd.RunningExperiment(ctx)
	require.NoError(t, err)
	require.NotNil(t, running)
	require.Equal(t, "try-cand", running.Name)
	exps, err := rd.Experiments(ctx)
	require.NoError(t, err)
	require.Len(t, exps, 1)
	for _, r := range []*events.PostVersionRegisteredV1{w.v1, w.v2, w.v3} {
		a, err := rd.Assign(ctx, r.PostVersionID)
		require.NoError(t, err)
		arm := events.ExperimentArm(running.ID, r.PostVersionID, 5000)
		require.Equal(t, arm, a.Arm)
		require.Equal(t, running.ID, a.ExperimentID)
		if arm == events.ArmCandidate {
			require.Equal(t, candID, a.ConfigurationID)
			require.Equal(t, w.cand, *a.Configuration)
		} else {
			require.Equal(t, serving.Assignment{ExperimentID: running.ID, Arm: events.ArmControl}, a)
		}
	}
	candV3 := requestUnder(w.v3, &w.cand, "", running.ID, events.ArmCandidate)
	candV3.Source = events.RequestSourceSelector
	p.handle(t, records(t, 0, n+5, timed{candV3, base.Add(24 * time.Minute)})...)
	v3 := visibleOf(t, rd, w.v3)
	require.Equal(t, candV3.InvestigationID, v3.InvestigationID, "the running arm beats a pending default")
	p.handle(t, records(t, 0, n+6, timed{stopped("try-cand"), base.Add(25 * time.Minute)})...)
	require.Equal(t, events.InvestigationID(w.v3.PostVersionID), visibleOf(t, rd, w.v3).InvestigationID,
		"a stopped experiment's unpromoted arm is not visible")
	running, err = rd.RunningExperiment(ctx)
	require.NoError(t, err)
	require.Nil(t, running)
	a, err := rd.Assign(ctx, w.v3.PostVersionID)
	require.NoError(t, err)
	require.Equal(t, serving.Assignment{}, a, "the active configuration: the default")
}

// TestAppealReads: appeals never show the requester key, retractions keep
// the first decision, and hostile ids read as not found.
func TestAppealReads(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)
	w := newControlWorld(t)
	p.handle(t, encoded(t, 0, w.all())...)

	got, err := rd.Appeal(ctx, w.retractAlpha.AppealID)
	require.NoError(t, err)
	require.NotNil(t, got.DecidedAt)
	require.Equal(t, serving.Appeal{
		ID: w.retractAlpha.AppealID, ClaimID: w.alpha, InvestigationID: w.defaultV1, PostVersionID: w.v1.PostVersionID,
		Role: events.AppealRoleReader, Reason: "The source says the opposite.", URLs: []string{"https://example.org/a"},
		Status: events.AppealRetracted, FiledAt: got.FiledAt, DecidedAt: got.DecidedAt,
		DecisionReason: "The claim misread its source.", PolicyVersion: "default@0123456789ab",
	}, got)
	require.True(t, base.Add(11*time.Minute).Equal(got.FiledAt))

	ofAlpha, err := rd.AppealsOfClaim(ctx, w.alpha)
	require.NoError(t, err)
	require.Len(t, ofAlpha, 2)
	require.Equal(t, []string{w.retractAlpha.AppealID, w.laterAlpha.AppealID}, []string{ofAlpha[0].ID, ofAlpha[1].ID})

	// The retraction recorded on the claim is the first decision's.
	require.Equal(t, []string{w.retractAlpha.AppealID + " The claim misread its source."},
		p.texts(t, `SELECT retracted_by_appeal::text || ' ' || retraction_reason FROM claims WHERE id = $1`, w.alpha))

	ref, err := rd.PublishedClaim(ctx, w.alpha)
	require.NoError(t, err)
	require.Equal(t, serving.ClaimRef{ClaimID: w.alpha, InvestigationID: w.defaultV1, PostID: w.v1.PostID,
		PostVersionID: w.v1.PostVersionID, Retracted: true, Visible: true}, ref)
	ref, err = rd.PublishedClaim(ctx, w.gamma)
	require.NoError(t, err)
	require.Equal(t, serving.ClaimRef{ClaimID: w.gamma, InvestigationID: w.strictV1, PostID: w.v1.PostID,
		PostVersionID: w.v1.PostVersionID}, ref, "a claim of an unpromoted re-processing is published, not visible")

	open, since, err := rd.AppealCounts(ctx, w.beta, w.upholdBeta.RequesterKey, base)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 1}, [2]int{open, since})
	open, since, err = rd.AppealCounts(ctx, w.beta, w.upholdBeta.RequesterKey, base.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{open, since})

	hostile := []string{"", "not-a-uuid", "'; DROP TABLE appeals; --", "00000000-0000-0000-0000-00000000000g",
		"00000000-0000-0000-0000-000000000000", w.alpha + " ", "\x00"}
	for _, id := range hostile {
		_, err := rd.Appeal(ctx, id)
		require.ErrorIs(t, err, serving.ErrNotFound, "%q", id)
		_, err = rd.PublishedClaim(ctx, id)
		require.ErrorIs(t, err, serving.ErrNotFound, "%q", id)
		as, err := rd.AppealsOfClaim(ctx, id)
		require.NoError(t, err, "%q", id)
		require.Empty(t, as)
		_, _, err = rd.AppealCounts(ctx, id, id, base)
		require.NoError(t, err, "%q", id)
		h, err := rd.InvestigationHistory(ctx, id)
		require.NoError(t, err, "%q", id)
		require.Empty(t, h)
		_, err = rd.ConfigurationByID(ctx, id)
		if id != "" {
			require.ErrorIs(t, err, serving.ErrNotFound, "%q", id)
		}
		_, err = rd.ConfigurationByName(ctx, id)
		require.ErrorIs(t, err, serving.ErrNotFound, "%q", id)
	}
	def, err := rd.ConfigurationByID(ctx, "")
	require.NoError(t, err)
	require.Equal(t, "default", def.Name)
	require.Nil(t, def.Spec)
	// A decision with no filing yet is not an appeal anyone can read.
	lone := filed(w.beta, w.defaultV1, w.v1, "r9", "Filed on another partition.")
	p.handle(t, records(t, 1, 0, timed{decided(lone, events.AppealUpheld, "Stands."), base.Add(time.Hour)})...)
	_, err = rd.Appeal(ctx, lone.AppealID)
	require.ErrorIs(t, err, serving.ErrNotFound)
	p.handle(t, records(t, 1, 1, timed{lone, base.Add(30 * time.Minute)})...)
	got, err = rd.Appeal(ctx, lone.AppealID)
	require.NoError(t, err)
	require.Equal(t, events.AppealUpheld, got.Status)
}

// TestControlAndAppealsApplyInAnyOrder: the groups that live in different
// partitions (registrations, control, investigations, appeals) applied
// in log order and in reverse order, and an appeal's decision applied
// before its filing (and before the claim it retracts), give the same
// rows; a promotion applied before its configuration's declaration too.
func TestControlAndAppealsApplyInAnyOrder(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	w := newControlWorld(t)
	promote := newEvent(t, promoted(events.ConfigurationID(w.strict), "", false), base.Add(30*time.Minute))
	w.control = append(w.control, promote)

	inOrder := newProjection(t, url, "order_log", 2)
	inOrder.handle(t, encoded(t, 0, w.all())...)

	reversed := newProjection(t, url, "order_reversed", 2)
	// Decisions first (each alone in its partition), then the promotion
	// before every declaration, then the filings, investigations and
	// registrations.
	var decisions, filings []events.Event
	for _, ev := range slices.Concat(w.appeals, w.appeals2) {
		if ev.Type() == events.TypeAppealDecidedV1 {
			decisions = append(decisions, ev)
		} else {
			filings = append(filings, ev)
		}
	}
	slices.Reverse(decisions)
	groups := [][]events.Event{decisions, {promote}, w.control[:len(w.control)-1], filings, w.investigs, w.registrations}
	for i, g := range groups {
		reversed.handle(t, encoded(t, int32(i), g)...)
	}
	require.Equal(t, dumpSchema(t, inOrder.pool, "projection_checkpoints"), dumpSchema(t, reversed.pool, "projection_checkpoints"))
	require.Equal(t, []string{"strict 1"}, reversed.texts(t,
		`SELECT name || ' ' || promotion_rank FROM analysis_configurations WHERE promotion_rank > 0`))
	require.Equal(t, []string{w.alpha}, reversed.texts(t, `SELECT id::text FROM claims WHERE retracted_at IS NOT NULL`))
}

// TestReprocessCandidates: the filters and keyset paging over versions
// whose visible investigation has ended.
func TestReprocessCandidates(t *testing.T) {
	t.Parallel()
	p := newServing(t, 2)
	ctx := context.Background()
	rd := serving.NewReader(p.pool)
	w := newControlWorld(t)
	n := int64(len(w.all()))
	p.handle(t, encoded(t, 0, w.all())...)
	p.handle(t, records(t, 0, n,
		timed{requestUnder(w.v2, nil, "", "", ""), base.Add(40 * time.Minute)},
		timed{completedUnder(w.v2, nil, "delta"), base.Add(41 * time.Minute)})...)
	strictID, candID := events.ConfigurationID(w.strict), events.ConfigurationID(w.cand)
	defV2 := events.InvestigationID(w.v2.PostVersionID)
	c1 := serving.ReprocessCandidate{PostVersionID: w.v1.PostVersionID, PostID: w.v1.PostID, Platform: "X", ExternalID: "500",
		VersionHash: w.v1.VersionHash, Supersedes: w.defaultV1}
	c2 := serving.ReprocessCandidate{PostVersionID: w.v2.PostVersionID, PostID: w.v2.PostID, Platform: "X", ExternalID: "500",
		VersionHash: w.v2.VersionHash, Supersedes: defV2}
	both := []serving.ReprocessCandidate{c1, c2}
	slices.SortFunc(both, func(a, b serving.ReprocessCandidate) int { return strings.Compare(a.PostVersionID, b.PostVersionID) })

	for _, tc := range []struct {
		name string
		f    serving.ReprocessFilter
		want []serving.ReprocessCandidate
	}{
		{"versions with an investigation under the target are left out", serving.ReprocessFilter{Target: strictID},
			[]serving.ReprocessCandidate{c2}},
		{"all ended visible investigations", serving.ReprocessFilter{Target: candID}, both},
		{"platform", serving.ReprocessFilter{Target: candID, Platforms: []string{"LESSWRONG"}}, []serving.ReprocessCandidate{}},
		{"prompt version of the result", serving.ReprocessFilter{Target: candID, PromptVersions: []string{"investigator@2"}}, both},
		{"another prompt version", serving.ReprocessFilter{Target: candID, PromptVersions: []string{"v9"}}, []serving.ReprocessCandidate{}},
		{"policy version without assessments", serving.ReprocessFilter{Target: candID, PolicyVersions: []string{"default@0123456789ab"}},
			[]serving.ReprocessCandidate{}},
		{"post version ids", serving.ReprocessFilter{Target: candID, PostVersionIDs: []string{w.v1.PostVersionID}},
			[]serving.ReprocessCandidate{c1}},
		{"unknown author", serving.ReprocessFilter{Target: candID, AuthorIDs: []string{events.AuthorID("X", "nobody")}},
			[]serving.ReprocessCandidate{}},
		{"since after every request", serving.ReprocessFilter{Target: candID, Since: base.Add(time.Hour)}, []serving.ReprocessCandidate{}},
		{"until before the second request", serving.ReprocessFilter{Target: candID, Until: base.Add(30 * time.Minute)},
			[]serving.ReprocessCandidate{c1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rd.ReprocessCandidates(ctx, tc.f, "", 100)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	t.Run("keyset paging", func(t *testing.T) {
		first, err := rd.ReprocessCandidates(ctx, serving.ReprocessFilter{Target: candID}, "", 1)
		require.NoError(t, err)
		require.Equal(t, both[:1], first)
		second, err := rd.ReprocessCandidates(ctx, serving.ReprocessFilter{Target: candID}, first[0].PostVersionID, 1)
		require.NoError(t, err)
		require.Equal(t, both[1:], second)
		rest, err := rd.ReprocessCandidates(ctx, serving.ReprocessFilter{Target: candID}, second[0].PostVersionID, 1)
		require.NoError(t, err)
		require.Empty(t, rest)
	})

	t.Run("hostile input is refused, never sent as SQL", func(t *testing.T) {
		for _, tc := range []struct {
			f     serving.ReprocessFilter
			after string
			limit int
		}{
			{serving.ReprocessFilter{PostVersionIDs: []string{"'; DROP TABLE claims; --"}}, "", 10},
			{serving.ReprocessFilter{AuthorIDs: []string{"\x00"}}, "", 10},
			{serving.ReprocessFilter{}, "not-a-uuid", 10},
			{serving.ReprocessFilter{}, "", 0},
			{serving.ReprocessFilter{}, "", 1001},
		} {
			_, err := rd.ReprocessCandidates(ctx, tc.f, tc.after, tc.limit)
			require.ErrorIs(t, err, serving.ErrInvalidFilter)
		}
		// Text filters are parameters: a hostile platform matches nothing.
		got, err := rd.ReprocessCandidates(ctx, serving.ReprocessFilter{Platforms: []string{"X' OR '1'='1"}}, "", 10)
		require.NoError(t, err)
		require.Empty(t, got)
	})
}
