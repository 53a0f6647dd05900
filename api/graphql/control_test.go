package graphql_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// controlLog is a post version investigated under the default
// configuration and re-processed under "strict" (promoted afterwards),
// with an experiment running, one claim retracted by an appeal and another
// appealed and still open.
type controlLog struct {
	evs                      []events.Event
	reg                      *events.PostVersionRegisteredV1
	strict                   events.AnalysisConfigurationV1
	defaultID, strictID      string
	alpha, beta, gamma       string
	retract, open            *events.AppealFiledV1
	experimentID, requesterK string
}

func newControlLog(t *testing.T) *controlLog {
	l := &controlLog{}
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	add := func(p events.Payload) {
		ev, err := events.NewCatalogRegistry().New(p, events.Meta{ID: fmt.Sprintf("00000000-0000-7000-8000-%012d", len(l.evs)+900), Time: at.Add(time.Duration(len(l.evs)) * time.Minute)})
		require.NoError(t, err)
		l.evs = append(l.evs, ev)
	}
	text := "A post whose claims were appealed."
	postID := events.PostID(events.PlatformX, "777")
	vh := sha("version:" + text)
	l.reg = &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, vh), Platform: events.PlatformX, ExternalID: "777",
		URL: "https://x.com/u/status/777", VersionHash: vh, ContentHash: sha(text), OccurrencesHash: sha("none"),
		ContentText: text, WordCount: 6, Provenance: events.ProvenanceServerVerified, ImageURLs: []string{},
		ImageOccurrences: []events.ImageOccurrenceV1{},
		X:                &events.XMetaV1{TweetID: "777", Text: text, AuthorHandle: "u", MediaURLs: []string{}},
	}
	l.strict = events.AnalysisConfigurationV1{Name: "strict", Model: "gpt-strict", InvestigatorPrompt: "v1", ValidatorPrompt: "v1",
		Policy: "default@0123456789ab"}
	strictCfg := events.ConfigurationID(l.strict)
	l.defaultID = events.InvestigationID(l.reg.PostVersionID)
	l.strictID = events.InvestigationIDFor(l.reg.PostVersionID, strictCfg)
	l.alpha, l.beta, l.gamma = events.ClaimID(l.defaultID, 0), events.ClaimID(l.defaultID, 1), events.ClaimID(l.strictID, 0)
	request := func(id, cfgID string, cfg *events.AnalysisConfigurationV1, supersedes string, source string) *events.InvestigationRequestedV1 {
		return &events.InvestigationRequestedV1{InvestigationID: id, PostID: postID, PostVersionID: l.reg.PostVersionID,
			Platform: events.PlatformX, ExternalID: "777", VersionHash: vh, Source: source, ConfigurationID: cfgID,
			Configuration: cfg, Supersedes: supersedes}
	}
	completed := func(id, cfgID string, summaries ...string) *events.InvestigationCompletedV1 {
		c := &events.InvestigationCompletedV1{InvestigationID: id, PostID: postID, PostVersionID: l.reg.PostVersionID,
			Provenance: events.ProvenanceServerVerified, PromptVersion: "investigator@2", Provider: "openai", Model: "gpt-test",
			Claims: []events.ClaimV1{}, Series: 1, Attempt: 1, ConfigurationID: cfgID}
		for i, s := range summaries {
			c.Claims = append(c.Claims, events.ClaimV1{ID: events.ClaimID(id, i), Text: "quoted " + s, Context: "context " + s,
				Summary: s, Reasoning: "Because of " + s + ".", Sources: []events.SourceV1{{URL: "https://example.org/" + s, Title: s, Snippet: s}}})
		}
		return c
	}
	l.requesterK = sha("requester:secret-client")
	file := func(claimID, reason string) *events.AppealFiledV1 {
		urls := []string{"https://example.org/evidence"}
		return &events.AppealFiledV1{AppealID: events.AppealID(claimID, l.requesterK, reason, urls), ClaimID: claimID,
			InvestigationID: l.defaultID, PostID: postID, PostVersionID: l.reg.PostVersionID, Role: events.AppealRoleAuthor,
			Reason: reason, URLs: urls, RequesterKey: l.requesterK}
	}
	l.retract, l.open = file(l.alpha, "I never wrote what this claim quotes."), file(l.beta, "The figure is from the 2024 report.")
	l.experimentID = events.ExperimentID("try-strict")

	add(l.reg)
	add(&events.ConfigurationDeclaredV1{ConfigurationID: strictCfg, Configuration: l.strict, Operator: "ops", Reason: "stricter model"})
	add(request(l.defaultID, "", nil, "", events.RequestSourceSelector))
	add(completed(l.defaultID, "", "alpha", "beta"))
	add(request(l.strictID, strictCfg, &l.strict, l.defaultID, events.RequestSourceReprocess))
	add(completed(l.strictID, strictCfg, "gamma"))
	add(l.retract)
	add(&events.AppealDecidedV1{AppealID: l.retract.AppealID, ClaimID: l.alpha, InvestigationID: l.defaultID,
		Outcome: events.AppealRetracted, Reason: "The quote is not in the post.", PolicyVersion: "default@0123456789ab"})
	add(l.open)
	add(&events.ExperimentStartedV1{ExperimentID: l.experimentID, Name: "try-strict", ControlConfigurationID: "",
		CandidateConfigurationID: strictCfg, CandidateShareBP: 2500, Operator: "ops", Reason: "compare"})
	return l
}

func controlRig(t *testing.T, evs []events.Event, control bool) *rig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := events.NewCatalogRegistry()
	var recs []*kgo.Record
	for _, ev := range evs {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		rec := &kgo.Record{Topic: "test.all", Offset: int64(len(recs)), Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
		for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		recs = append(recs, rec)
	}
	pool, err := postgres.Connect(ctx, testenv.Postgres(t), "serving")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgproj.Migrate(ctx, pool, "serving", serving.Migrations(), logging.Discard()))
	p := pgproj.NewProjector(serving.ProjectorName, pool, reg, serving.NewApplier(2), discardDeadLetters{t}, logging.Discard())
	require.NoError(t, p.Handle(ctx, kafka.Batch{Topic: "test.all", Records: recs}))
	reader := serving.NewReader(pool)
	deps := graphql.Deps{Serving: reader, Search: &fakeSearch{}, Metrics: &fakeMetrics{}}
	if control {
		deps.Control = reader
		auditPool, err := postgres.Connect(ctx, testenv.Postgres(t), audit.Schema)
		require.NoError(t, err)
		t.Cleanup(auditPool.Close)
		require.NoError(t, pgproj.Migrate(ctx, auditPool, audit.Schema, audit.Migrations(), logging.Discard()))
		ap := pgproj.NewProjector(audit.ProjectorName, auditPool, reg, audit.NewApplier(reg), discardDeadLetters{t}, logging.Discard())
		require.NoError(t, ap.Handle(ctx, kafka.Batch{Topic: "test.all", Records: recs}))
		deps.AppealTrails = audit.NewReader(auditPool, reg)
	}
	mux := http.NewServeMux()
	mux.Handle("/graphql", graphql.NewHandler(graphql.NewResolver(deps), graphql.Options{}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &rig{srv: srv}
}

// TestConfigurationsAndAppealsInGraphQL: the history shows every complete
// investigation with its configuration and which one is visible; current
// claims leave the retracted one out, includeRetracted shows it with the
// reason; appeals are listed without the requester's key.
func TestConfigurationsAndAppealsInGraphQL(t *testing.T) {
	t.Parallel()
	l := newControlLog(t)
	r := controlRig(t, l.evs, true)
	status, _, body := r.post(t, map[string]any{"query": `query($id: ID!) {
		postInvestigations(platform: X, externalId: "777") { investigations {
			id visible supersedes supersededBy configuration { id name active model promotionRank }
			claims { id }
			history: claims(includeRetracted: true) { id retracted retraction { reason appealId at }
				appeals { id role reason urls status decidedAt decisionReason auditTrail } } } }
		publicInvestigation(investigationId: $id) {
			investigation { visible supersedes experiment { id name } arm configuration { id name active policy } }
			claims { id } }
		analysisConfigurations { id name active promotionRank model declaredAt }
		configurationPromotions { configurationId rank }
		experiments { id name running candidateShareBp controlConfigurationId candidateConfigurationId stoppedAt } }`,
		"variables": map[string]any{"id": l.strictID}})
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, l.requesterK, "requester keys are never answered")
	type appeal struct {
		ID, Role, Reason, Status string
		Urls                     []string
		DecidedAt                *time.Time
		DecisionReason           *string
		AuditTrail               *struct {
			AppealID string `json:"appeal_id"`
			Status   string `json:"status"`
			Filed    *struct {
				Reason string `json:"reason"`
			} `json:"filed"`
			Decision *struct {
				Outcome string `json:"outcome"`
				Reason  string `json:"reason"`
			} `json:"decision"`
		}
	}
	type claim struct {
		ID         string
		Retracted  bool
		Retraction *struct {
			Reason, AppealID string
			At               time.Time
		}
		Appeals []appeal
	}
	type configuration struct {
		ID, Name      string
		Active        bool
		Model, Policy *string
		PromotionRank *int
		DeclaredAt    *time.Time
	}
	var out struct {
		Data struct {
			PostInvestigations struct {
				Investigations []struct {
					ID                       string
					Visible                  bool
					Supersedes, SupersededBy *string
					Configuration            configuration
					Claims                   []struct{ ID string }
					History                  []claim
				}
			}
			PublicInvestigation struct {
				Investigation struct {
					Visible       bool
					Supersedes    *string
					Experiment    *struct{ ID, Name string }
					Arm           *string
					Configuration configuration
				}
				Claims []struct{ ID string }
			}
			AnalysisConfigurations  []configuration
			ConfigurationPromotions []struct{ ConfigurationID string }
			Experiments             []struct {
				ID, Name                                         string
				Running                                          bool
				CandidateShareBp                                 int
				ControlConfigurationID, CandidateConfigurationID string
				StoppedAt                                        *time.Time
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	require.Empty(t, out.Errors, body)

	invs := out.Data.PostInvestigations.Investigations
	require.Len(t, invs, 2, "the history keeps every complete investigation")
	byID := map[string]int{invs[0].ID: 0, invs[1].ID: 1}
	def, re := invs[byID[l.defaultID]], invs[byID[l.strictID]]
	require.True(t, def.Visible)
	require.False(t, re.Visible, "a re-processing under a configuration never promoted is not visible")
	require.Equal(t, l.strictID, *def.SupersededBy)
	require.Nil(t, def.Supersedes)
	require.Equal(t, l.defaultID, *re.Supersedes)
	require.Equal(t, configuration{ID: "", Name: "default", Active: true, PromotionRank: ptrTo(0)}, def.Configuration)
	require.Equal(t, "strict", re.Configuration.Name)
	require.Equal(t, "gpt-strict", *re.Configuration.Model)
	require.Nil(t, re.Configuration.PromotionRank)

	require.Equal(t, []struct{ ID string }{{l.beta}}, def.Claims, "the retracted claim is not current")
	require.Len(t, def.History, 2)
	alpha, beta := def.History[0], def.History[1]
	require.Equal(t, l.alpha, alpha.ID)
	require.True(t, alpha.Retracted)
	require.Equal(t, "The quote is not in the post.", alpha.Retraction.Reason)
	require.Equal(t, l.retract.AppealID, alpha.Retraction.AppealID)
	require.Len(t, alpha.Appeals, 1)
	require.Equal(t, appeal{ID: l.retract.AppealID, Role: "AUTHOR", Reason: l.retract.Reason, Status: "RETRACTED",
		Urls: []string{"https://example.org/evidence"}, DecidedAt: alpha.Appeals[0].DecidedAt,
		DecisionReason: ptrTo("The quote is not in the post."), AuditTrail: alpha.Appeals[0].AuditTrail}, alpha.Appeals[0])
	require.NotNil(t, alpha.Appeals[0].DecidedAt)
	trail := alpha.Appeals[0].AuditTrail
	require.NotNil(t, trail, "the appeal's public trail")
	require.Equal(t, l.retract.AppealID, trail.AppealID)
	require.Equal(t, l.retract.Reason, trail.Filed.Reason)
	require.Equal(t, events.AppealRetracted, trail.Decision.Outcome)
	require.Equal(t, "The quote is not in the post.", trail.Decision.Reason)
	require.False(t, beta.Retracted)
	require.Nil(t, beta.Retraction)
	require.Len(t, beta.Appeals, 1)
	require.NotNil(t, beta.Appeals[0].AuditTrail)
	require.Nil(t, beta.Appeals[0].AuditTrail.Decision, "an open appeal's trail has no decision yet")
	beta.Appeals[0].AuditTrail = nil
	require.Equal(t, []appeal{{ID: l.open.AppealID, Role: "AUTHOR", Reason: l.open.Reason, Status: "OPEN",
		Urls: []string{"https://example.org/evidence"}}}, beta.Appeals)

	pi := out.Data.PublicInvestigation
	require.False(t, pi.Investigation.Visible)
	require.Equal(t, l.defaultID, *pi.Investigation.Supersedes)
	require.Nil(t, pi.Investigation.Experiment, "a re-processing was not chosen by an experiment")
	require.Nil(t, pi.Investigation.Arm)
	require.Equal(t, "strict", pi.Investigation.Configuration.Name)
	require.Equal(t, "default@0123456789ab", *pi.Investigation.Configuration.Policy)
	require.Equal(t, []struct{ ID string }{{l.gamma}}, pi.Claims)

	cfgs := out.Data.AnalysisConfigurations
	require.Len(t, cfgs, 2)
	require.Equal(t, []string{"default", "strict"}, []string{cfgs[0].Name, cfgs[1].Name})
	require.Nil(t, cfgs[0].DeclaredAt, "the default is not declared")
	require.NotNil(t, cfgs[1].DeclaredAt)
	require.Empty(t, out.Data.ConfigurationPromotions)
	require.Len(t, out.Data.Experiments, 1)
	e := out.Data.Experiments[0]
	require.Equal(t, []any{l.experimentID, "try-strict", true, 2500, "", events.ConfigurationID(l.strict)},
		[]any{e.ID, e.Name, e.Running, e.CandidateShareBp, e.ControlConfigurationID, e.CandidateConfigurationID})
	require.Nil(t, e.StoppedAt)
}

// TestControlQueriesLimits: the new lists are store fields (the sixth is
// refused) and an instance without the control reader says so rather
// than answering empty lists.
func TestControlQueriesLimits(t *testing.T) {
	t.Parallel()
	l := newControlLog(t)
	r := controlRig(t, l.evs, false)

	var aliases []string
	for i := range 6 {
		aliases = append(aliases, fmt.Sprintf("e%d: experiments { id }", i))
	}
	status, _, body := r.post(t, map[string]any{"query": "{ " + strings.Join(aliases, " ") + " }"})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "TOO_MANY_STORE_FIELDS")

	status, _, body = r.post(t, map[string]any{"query": `{ experiments { id } }`})
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "experiments is not served by this instance")

	// Without the control reader an investigation still names its
	// configuration, and claims have no appeals.
	status, _, body = r.post(t, map[string]any{"query": `query($id: ID!) { publicInvestigation(investigationId: $id) {
		investigation { configuration { id name active } } claims(includeRetracted: true) { id retracted appeals { id } } } }`,
		"variables": map[string]any{"id": l.defaultID}})
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, fmt.Sprintf(`{"data":{"publicInvestigation":{"investigation":{"configuration":{"id":"","name":"default","active":true}},
		"claims":[{"id":%q,"retracted":true,"appeals":[]},{"id":%q,"retracted":false,"appeals":[]}]}}}`, l.alpha, l.beta), body)

	// Hostile arguments are refused before they reach a store.
	status, _, body = r.post(t, map[string]any{"query": `query($id: ID!) { publicInvestigation(investigationId: $id) { claims { id } } }`,
		"variables": map[string]any{"id": "\x00' OR 1=1 --"}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "BAD_USER_INPUT")
}

func ptrTo[T any](v T) *T { return &v }
