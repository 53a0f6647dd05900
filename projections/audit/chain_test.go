package audit_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/pgproj"
)

// A re-investigation's trail names its configuration with every setting
// and the investigation it supersedes; the old one's trail is unchanged
// but for the link back.
func TestChainTrail(t *testing.T) {
	t.Parallel()
	old := audittest.Complete("chain-old", "1860000000000000201")
	re := audittest.Reprocessed("chain-new", old)
	trail, err := audit.Build(re.InvestigationID, positioned("errata.investigations", 0, re.Investigation), nil)
	require.NoError(t, err)
	spec := audittest.Configuration
	require.Equal(t, audit.Configuration{ID: events.ConfigurationID(spec), Name: "mini-v2", Spec: &spec}, trail.Configuration)
	require.Equal(t, old.InvestigationID, trail.Supersedes)
	require.Empty(t, trail.ExperimentID)
	require.Equal(t, events.RequestSourceReprocess, trail.Requests[0].Source)
	require.Equal(t, old.InvestigationID, trail.Requests[0].Supersedes)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	for _, want := range []string{"name:         mini-v2 (" + events.ConfigurationID(spec) + ")", "model:        gpt-5-mini",
		"prompts:      investigator v1, validator v1", "policy:       strict-v1@a176a28a7d06", "author context: true",
		"supersedes:   " + old.InvestigationID} {
		require.Contains(t, text.String(), want)
	}

	oldTrail, err := audit.Build(old.InvestigationID, positioned("errata.investigations", 1, old.Investigation), nil)
	require.NoError(t, err)
	require.Equal(t, audit.Configuration{Name: events.DefaultConfigurationName}, oldTrail.Configuration)
	require.Empty(t, oldTrail.Supersedes)
	require.Equal(t, []string{}, oldTrail.SupersededBy, "Build alone cannot know what re-does it: the readers fill it")
}

// An experiment's request records the arm in the trail.
func TestChainTrailExperimentArm(t *testing.T) {
	t.Parallel()
	f := audittest.Pending("chain-arm", "1860000000000000202")
	req := f.Investigation[0]
	p := *req.Payload.(*events.InvestigationRequestedV1)
	p.ExperimentID, p.Arm = events.ExperimentID("mini-test"), events.ArmControl
	ev, err := events.NewCatalogRegistry().New(&p, events.Meta{ID: req.ID, Time: req.Time, CorrelationID: req.CorrelationID})
	require.NoError(t, err)
	trail, err := audit.Build(f.InvestigationID, positioned("errata.investigations", 2, append([]events.Event{ev}, f.Investigation[1:]...)), nil)
	require.NoError(t, err)
	require.Equal(t, events.ExperimentID("mini-test"), trail.ExperimentID)
	require.Equal(t, events.ArmControl, trail.Arm)
	js, err := audit.JSON(trail)
	require.NoError(t, err)
	require.Contains(t, string(js), `"arm": "CONTROL"`)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	require.Contains(t, text.String(), "experiment:   "+events.ExperimentID("mini-test")+", arm CONTROL")
}

// The chain both ways, from the log and from the projection, identically.
func TestChainFromLogAndProjection(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := events.NewCatalogRegistry()
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()
	app := producers.NewAppender(producer, reg, topics, nil)

	old := audittest.Complete("chain-log-old", "1860000000000000301")
	re := audittest.Reprocessed("chain-log-new", old)
	var all []events.Event
	all = append(all, old.Posts...)
	all = append(all, old.Investigation...)
	all = append(all, re.Control...)
	all = append(all, re.Investigation...)
	// The same request appended again (a retried append) links once.
	all = append(all, re.Investigation[0])
	positions, err := app.Append(ctx, all...)
	require.NoError(t, err)

	src := audit.LogSource{Brokers: brokers, Topics: topics, Registry: reg, Timeout: time.Minute}
	oldFromLog, err := audit.ReadLog(ctx, src, old.InvestigationID)
	require.NoError(t, err)
	require.Equal(t, []string{re.InvestigationID}, oldFromLog.SupersededBy)
	require.Equal(t, events.StatusComplete, oldFromLog.Status, "the old investigation is unchanged")
	reFromLog, err := audit.ReadLog(ctx, src, re.InvestigationID)
	require.NoError(t, err)
	require.Equal(t, old.InvestigationID, reFromLog.Supersedes)
	require.Equal(t, []string{}, reFromLog.SupersededBy)
	require.Equal(t, "mini-v2", reFromLog.Configuration.Name)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, oldFromLog))
	require.Contains(t, text.String(), "superseded by: "+re.InvestigationID)

	dbURL := testenv.Postgres(t)
	pool, err := postgres.Connect(ctx, dbURL, audit.Schema)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgproj.Migrate(ctx, pool, audit.Schema, audit.Migrations(), logging.Discard()))
	proj := pgproj.NewProjector(audit.ProjectorName, pool, reg, audit.NewApplier(reg),
		kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), "audit-chain-test", logging.Discard()), logging.Discard())
	runCtx, stop := context.WithCancel(ctx)
	r, err := kafka.NewRunner(kafka.RunnerConfig{Brokers: brokers, Group: topics.Prefix + "projector.audit",
		Topics: []string{topics.Name(events.TopicInvestigations), topics.Name(events.TopicPosts)}, Positions: proj}, proj, logging.Discard())
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(runCtx) }()
	wm := pgproj.NewWatermark(pool, audit.ProjectorName)
	for _, p := range positions {
		require.NoError(t, wm.WaitFor(ctx, p.Topic, p.Partition, p.Offset, time.Minute))
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		require.NoError(t, err)
	}
	reader := audit.NewReader(pool, reg)
	oldFull, err := reader.FullTrail(ctx, old.InvestigationID)
	require.NoError(t, err)
	requireSameJSON(t, oldFromLog, oldFull, "the projection links the chain as the log does")
	reFull, err := reader.FullTrail(ctx, re.InvestigationID)
	require.NoError(t, err)
	requireSameJSON(t, reFromLog, reFull, "and the other way")
}
