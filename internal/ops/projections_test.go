package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/ops"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// groupMember joins group on topic and polls until it has consumed want
// records, committing them when commit is set; it stays a member until the
// test ends.
func groupMember(t *testing.T, brokers []string, group, topic string, want int, commit bool) {
	t.Helper()
	cl, err := kafka.NewClient(brokers, append(kafka.ConsumerOpts(), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.DisableAutoCommit())...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "consumed %d of %d", got, want)
		fs.EachRecord(func(*kgo.Record) { got++ })
		if commit {
			require.NoError(t, cl.CommitUncommittedOffsets(ctx))
		}
	}
}

// TestProjectionsCheck reads projector health from a real broker: a
// projector that never ran is stopped and lags by its whole topics; one
// whose member consumed without committing is running and lagging over the
// threshold; one that committed everything is clean. The API stays ready
// (200) while /readyz names the degraded check, its header says so, and the
// gauges carry the same numbers.
func TestProjectionsCheck(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 2)
	posts, investigations := topics.Name(events.TopicPosts), topics.Name(events.TopicInvestigations)
	cl, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range 7 {
		recs = append(recs, &kgo.Record{Topic: posts, Key: []byte(fmt.Sprint(i)), Value: []byte("p")})
	}
	for i := range 3 {
		recs = append(recs, &kgo.Record{Topic: investigations, Key: []byte(fmt.Sprint(i)), Value: []byte("i")})
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())

	never := ops.ProjectorGroup{Name: "never", Group: topics.Prefix + "projector.never", Topics: []string{posts, investigations}}
	member := ops.ProjectorGroup{Name: "member", Group: topics.Prefix + "projector.member", Topics: []string{posts}}
	caught := ops.ProjectorGroup{Name: "caught", Group: topics.Prefix + "projector.caught", Topics: []string{posts}}
	groupMember(t, brokers, member.Group, posts, 7, false)
	groupMember(t, brokers, caught.Group, posts, 7, true)
	adm := kadm.NewClient(cl)

	all := ops.NewProjections(adm, []ops.ProjectorGroup{never, member, caught}, 5)
	want := []ops.ProjectorState{
		{Projector: "never", Running: false, Lag: 10, Lagging: true},
		{Projector: "member", Running: true, Lag: 7, Lagging: true},
		{Projector: "caught", Running: true, Lag: 0, Lagging: false},
	}
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := ops.NewProjections(adm, []ops.ProjectorGroup{never, member, caught}, 5).States(ctx)
		return err == nil && fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("states %+v (err %v)", got, err)
	})
	got, err := all.States(ctx)
	require.NoError(t, err)
	require.Equal(t, want, got)

	ready := ops.NewReadiness([]ops.Check{ops.KafkaCheck(cl), all.Check()}, 3*time.Second, logging.Discard())
	app := fiber.New()
	app.Get("/readyz", ready.Readyz)
	code, body, hdr := do(t, app, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusOK, code, "a lagging projection leaves the API serving")
	require.Equal(t, "projections", hdr.Get(ops.HeaderDegraded))
	var rep struct {
		Ready    bool     `json:"ready"`
		Degraded []string `json:"degraded"`
		Checks   []struct {
			Name     string               `json:"name"`
			OK       bool                 `json:"ok"`
			Degraded bool                 `json:"degraded"`
			Detail   []ops.ProjectorState `json:"detail"`
		} `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &rep))
	require.True(t, rep.Ready)
	require.Equal(t, []string{"projections"}, rep.Degraded)
	require.Len(t, rep.Checks, 2)
	require.Equal(t, "kafka", rep.Checks[0].Name)
	require.True(t, rep.Checks[0].OK)
	require.Equal(t, "projections", rep.Checks[1].Name)
	require.False(t, rep.Checks[1].OK)
	require.True(t, rep.Checks[1].Degraded)
	require.Equal(t, want, rep.Checks[1].Detail)
	require.NotContains(t, body, "127.0.0.1", "the public body names projectors, not hosts")

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(all.Collector())
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP errata_projector_lag Records of the projector's topics it has not consumed (the whole log when it never ran).
# TYPE errata_projector_lag gauge
errata_projector_lag{projector="caught"} 0
errata_projector_lag{projector="member"} 7
errata_projector_lag{projector="never"} 10
# HELP errata_projector_running 1 when the projector's consumer group has a member, else 0.
# TYPE errata_projector_running gauge
errata_projector_running{projector="caught"} 1
errata_projector_running{projector="member"} 1
errata_projector_running{projector="never"} 0
`)))

	// Only caught-up running projectors: clean, nothing degraded.
	clean := ops.NewReadiness([]ops.Check{ops.KafkaCheck(cl), ops.NewProjections(adm, []ops.ProjectorGroup{caught}, 5).Check()},
		3*time.Second, logging.Discard())
	app = fiber.New()
	app.Get("/readyz", clean.Readyz)
	code, body, hdr = do(t, app, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, hdr.Get(ops.HeaderDegraded))
	require.JSONEq(t, `{"ready":true,"checks":[{"name":"kafka","ok":true,"durationMs":0},{"name":"projections","ok":true,"durationMs":0}]}`,
		zeroDurations(t, body))
}
