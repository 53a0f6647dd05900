package graphql_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

type discardDeadLetters struct{ t *testing.T }

func (d discardDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	d.t.Errorf("parked %d: %v", rec.Offset, cause)
	return nil
}

// TestAssessmentsFromTheProjections: the audit fixture (one claim
// published, one withheld by the evidence engine) projected into the real
// serving and audit projections answers GraphQL: the public claim with the
// assessment that published it, and the audit trail with both
// assessments, their query errors and stance notes as categories.
func TestAssessmentsFromTheProjections(t *testing.T) {
	t.Parallel()
	url := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := events.NewCatalogRegistry()
	f := audittest.Complete("graphql-assessments", "1860000000000000501")
	var recs []*kgo.Record
	for _, ev := range append(append([]events.Event{}, f.Posts...), f.Investigation...) {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		rec := &kgo.Record{Topic: "test.all", Offset: int64(len(recs)), Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
		for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		recs = append(recs, rec)
	}
	servingPool, err := postgres.Connect(ctx, url, "serving")
	require.NoError(t, err)
	defer servingPool.Close()
	require.NoError(t, pgproj.Migrate(ctx, servingPool, "serving", serving.Migrations(), logging.Discard()))
	auditPool, err := postgres.Connect(ctx, url, audit.Schema)
	require.NoError(t, err)
	defer auditPool.Close()
	require.NoError(t, pgproj.Migrate(ctx, auditPool, audit.Schema, audit.Migrations(), logging.Discard()))
	for _, p := range []*pgproj.Projector{
		pgproj.NewProjector(serving.ProjectorName, servingPool, reg, serving.NewApplier(2), discardDeadLetters{t}, logging.Discard()),
		pgproj.NewProjector(audit.ProjectorName, auditPool, reg, audit.NewApplier(reg), discardDeadLetters{t}, logging.Discard()),
	} {
		require.NoError(t, p.Handle(ctx, kafka.Batch{Topic: "test.all", Records: recs}))
	}

	res := graphql.NewResolver(graphql.Deps{Serving: serving.NewReader(servingPool), Search: &fakeSearch{}, Metrics: &fakeMetrics{},
		Trails: audit.NewReader(auditPool, reg)})
	mux := http.NewServeMux()
	mux.Handle("/graphql", graphql.NewHandler(res, graphql.Options{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	r := &rig{srv: srv}
	status, _, body := r.post(t, map[string]any{"query": `query($id: ID!) { publicInvestigation(investigationId: $id) {
		investigation { auditTrail }
		claims { text assessment { score verdict gate4 policyVersion registryVersion publishMode
			features { eMax cMax agreeDom relAvg } sources { domain tier rule origin contradict } } } } }`,
		"variables": map[string]any{"id": f.InvestigationID}})
	require.Equal(t, http.StatusOK, status, body)
	var out struct {
		Data struct {
			PublicInvestigation struct {
				Investigation struct {
					AuditTrail audit.Trail
				}
				Claims []struct {
					Text       string
					Assessment *struct {
						Score                                                       int
						Verdict, Gate4, PolicyVersion, RegistryVersion, PublishMode string
						Features                                                    struct {
							EMax, CMax, RelAvg float64
							AgreeDom           int
						}
						Sources []struct {
							Domain, Rule, Origin string
							Tier                 int
							Contradict           float64
						}
					}
				}
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	require.Empty(t, out.Errors)
	pi := out.Data.PublicInvestigation
	require.Len(t, pi.Claims, 1, "only the published claim is public")
	require.Equal(t, audittest.Claim, pi.Claims[0].Text)
	a := pi.Claims[0].Assessment
	require.NotNil(t, a)
	var published *events.InvestigationClaimAssessedV1
	for _, ev := range f.Investigation {
		if p, ok := ev.Payload.(*events.InvestigationClaimAssessedV1); ok && p.Published {
			published = p
		}
	}
	require.Equal(t, published.Score, a.Score)
	require.Equal(t, []string{"REFUTED", "HIGH", published.PolicyVersion, audittest.RegistryVersion, "strict"},
		[]string{a.Verdict, a.Gate4, a.PolicyVersion, a.RegistryVersion, a.PublishMode})
	require.Equal(t, published.CMax, a.Features.CMax)
	require.Equal(t, published.RelAvg, a.Features.RelAvg)
	require.Len(t, a.Sources, 3)
	require.Equal(t, []int{3, 2, 1}, []int{a.Sources[0].Tier, a.Sources[1].Tier, a.Sources[2].Tier})
	require.Equal(t, "wildcard:*.gouv.fr", a.Sources[2].Rule)

	trail := pi.Investigation.AuditTrail
	subs := trail.Attempts[1].Submissions
	require.Len(t, subs, 3)
	require.True(t, subs[0].Assessment.Published)
	held := subs[2].Assessment
	require.False(t, held.Published)
	require.Equal(t, audittest.WithheldFailed, held.Failed)
	require.Equal(t, audit.ReasonUnavailable, held.Queries[1].Error, "no raw provider error in the public trail")
	require.Equal(t, audit.StanceInvalidAnswer, held.Sources[2].StanceNote)
	require.Empty(t, subs[0].AssessorExchanges[0].RawRequest)
}
