package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers/analyses"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// The workbench against real Kafka and Postgres, wired as `errata serve`
// wires it: a submission is appended and readable at once (the serving
// projection has applied it when 202 is answered), its stream replays and
// follows the real log, and the job the projection folds is what the API
// and the report show.
func TestIntegrationWorkbench(t *testing.T) {
	b := setup(t, setupOpts{})
	registry := events.NewCatalogRegistry()
	svc, err := analyses.New(b.appender, testPromptVersion)
	require.NoError(t, err)
	client, err := httpsafe.New()
	require.NoError(t, err)
	follower, err := kafka.NewKeyReader(b.brokers)
	require.NoError(t, err)
	t.Cleanup(follower.Close)
	reader := serving.NewReader(b.pool)
	srv, err := New(Config{MinExtensionVersion: "0.2.0", ReadYourWritesTimeout: 15 * time.Second, OpenAIBaseURL: unreachableOpenAI},
		ingest.NewService(b.appender), reader, pgproj.NewWatermark(b.pool, serving.ProjectorName),
		ingest.NewHasher(testHashSecret), testLogger(t), WithAnalyses(Analyses{
			Requests: svc, Pages: analyses.NewPageFetcher(client, 0, 0), Reader: reader, Versions: reader,
			Log: follower, Topic: b.topics.Name(events.TopicAnalyses), Registry: registry, Heartbeat: 100 * time.Millisecond,
		}))
	require.NoError(t, err)

	text := `The Eiffel Tower was completed in 1925. <script>alert("x")</script>`
	body, _ := json.Marshal(map[string]string{"text": text})
	r := submit(t, srv, string(body), map[string]string{HeaderClient: "workbench"})
	require.Equal(t, http.StatusAccepted, r.status, "body: %s", r.body)
	run := newRun(text)
	require.JSONEq(t, `{"id":"`+run.id+`"}`, string(r.body))

	// Read your writes: the job exists as soon as the submission is answered.
	r = do(t, srv, request{method: http.MethodGet, path: "/api/v1/analyses/" + run.id, noVersion: true})
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	var job serving.Analysis
	require.NoError(t, json.Unmarshal(r.body, &job))
	require.Equal(t, events.StatusPending, job.Status)
	require.Equal(t, "TEXT", job.Input.Kind)
	require.Equal(t, len([]rune(text)), job.Input.TextLength)

	// The analyst's first steps, then a stream from the start.
	at := time.Now().UTC().Truncate(time.Millisecond)
	steps := run.events[1:]
	first := appendAt(t, b.appender, at, steps[:3]...)
	_, st := openStream(t, srv, streamPath(run.id), nil)
	ev, ok := st.nextEvent(t)
	require.True(t, ok)
	require.Equal(t, events.TypeAnalysisRequestedV1, ev.event)
	var data struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.data), &data))
	require.Equal(t, text, data.Data["text"])
	require.Equal(t, "WORKBENCH", data.Data["source"])
	require.NotContains(t, data.Data, "requester_key")
	expectEvents(t, st, steps[:3], first, times(at, 3))
	// Live: the rest as it is appended.
	rest := appendAt(t, b.appender, at.Add(10*time.Second), steps[3:]...)
	expectEvents(t, st, steps[3:], rest, times(at.Add(10*time.Second), len(steps)-3))
	_, ok = st.nextEvent(t)
	require.False(t, ok, "the stream ends with the completion")

	// The projection's job: complete, with the claim and the verdict.
	testenv.Eventually(t, 15*time.Second, func() (bool, string) {
		r = do(t, srv, request{method: http.MethodGet, path: "/api/v1/analyses/" + run.id, noVersion: true})
		job = serving.Analysis{}
		_ = json.Unmarshal(r.body, &job)
		return job.Status == events.StatusComplete, fmt.Sprintf("status %q", job.Status)
	})
	require.Len(t, job.Claims, 1)
	require.Equal(t, `<script>alert("x")</script> The tower was completed in 1925.`, job.Claims[0].Text)
	require.NotNil(t, job.Verdict)
	require.Equal(t, "False", job.Verdict.Label)

	r = do(t, srv, request{method: http.MethodGet, path: "/api/v1/analyses/" + run.id + "/report", noVersion: true})
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; The tower was completed in 1925.")
	require.NotContains(t, string(r.body), "<script>")

	// The same text again: the same job, nothing appended.
	ends := totalEnd(t, b, b.topics.Name(events.TopicAnalyses))
	r = submit(t, srv, string(body), nil)
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"id":"`+run.id+`"}`, string(r.body))
	require.Equal(t, ends, totalEnd(t, b, b.topics.Name(events.TopicAnalyses)))
}

func totalEnd(t *testing.T, b *bundle, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := b.admin.ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	var n int64
	for _, ps := range listed {
		for _, o := range ps {
			require.NoError(t, o.Err)
			n += o.Offset
		}
	}
	return n
}
