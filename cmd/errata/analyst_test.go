package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/analyst"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// analysisTrail reads the events of one analysis from the log, in order.
func analysisTrail(t *testing.T, ctx context.Context, brokers []string, topic, id string) []events.Event {
	t.Helper()
	cl, err := kafka.NewClient(brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	reg := events.NewCatalogRegistry()
	seen := map[int32]int64{}
	var out []events.Event
	for {
		done := true
		for p, end := range ends {
			done = done && seen[p] >= end
		}
		if done {
			return out
		}
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			seen[r.Partition] = r.Offset + 1
			if string(r.Key) == id {
				ev, err := reg.Decode(r.Value)
				require.NoError(t, err)
				out = append(out, ev)
			}
		})
	}
}

// `errata worker --stages analyst` killed with SIGKILL in the middle of an
// analysis (its extraction call in flight): a second worker records the
// attempt as lost once the lease lapses and completes the analysis in a
// second attempt, once; a duplicate request changes nothing.
func TestAnalystStageKill9(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fake := fakeopenai.NewForTest(t)
	sc, err := fakeopenai.LoadScript(filepath.Join("..", "..", "consumers", "analyst", "testdata", "script.json"))
	require.NoError(t, err)
	fake.Play(sc, nil)
	// The first extraction call hangs: the worker is killed while it waits.
	fake.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(
		fakeopenai.Text(`{"claims":[]}`))}}).WithDelay(10*time.Minute))
	rig := newWorkerRig(t, ctx, 10, "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=sk-analyst-stage-test",
		"ERRATA_WORK_LEASE_TTL=2s", "ERRATA_INVESTIGATION_RETRY_BASE=100ms", "ERRATA_ANALYST_MODEL=gpt-test",
		"ERRATA_VALIDATOR_MODEL=gpt-test")
	var brokers []string
	var prefix string
	for _, kv := range rig.env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "ERRATA_KAFKA_BROKERS":
			brokers = strings.Split(v, ",")
		case "ERRATA_KAFKA_TOPIC_PREFIX":
			prefix = v
		}
	}
	topic := events.Topics{Prefix: prefix}.Name(events.TopicAnalyses)

	text := "Fun fact: the Eiffel Tower was completed in 1925 for the World Fair. It is the most beautiful building in Paris."
	sum := sha256.Sum256([]byte(text))
	version, err := analyst.PromptVersion(nil)
	require.NoError(t, err)
	req := &events.AnalysisRequestedV1{AnalysisType: events.AnalysisTypeVerdict, PromptVersion: version,
		InputKind: events.AnalysisInputText, Text: text, ContentSHA256: hex.EncodeToString(sum[:]), Source: events.AnalysisSourceAPI}
	req.AnalysisID = events.AnalysisID(events.AnalysisContentKey(req.InputKind, "", req.ContentSHA256), req.AnalysisType, version)
	request := func() {
		ev, err := rig.appender.NewEvent(req, "test", "")
		require.NoError(t, err)
		_, err = rig.appender.Append(ctx, ev)
		require.NoError(t, err)
	}

	logs := t.TempDir()
	first := startErrata(t, rig.env, filepath.Join(logs, "worker-1.log"), "worker", "--projectors=", "--stages=analyst")
	request()
	testenv.Eventually(t, 60*time.Second, func() (bool, string) {
		return len(fake.RequestsTo(fakeopenai.Responses)) == 1, "waiting for the extraction call"
	})
	first.kill9(t)

	second := startErrata(t, rig.env, filepath.Join(logs, "worker-2.log"), "worker", "--projectors=", "--stages=analyst")
	t.Cleanup(func() {
		if second.cmd.ProcessState == nil {
			second.stop(t)
		}
	})
	var trail []events.Event
	testenv.Eventually(t, 90*time.Second, func() (bool, string) {
		trail = analysisTrail(t, ctx, brokers, topic, req.AnalysisID)
		return len(trail) > 0 && trail[len(trail)-1].Payload.EventType() == events.TypeAnalysisCompletedV1, "waiting for completed"
	})
	request() // a duplicate after completion
	second.stop(t)

	var types []string
	for _, ev := range analysisTrail(t, ctx, brokers, topic, req.AnalysisID) {
		types = append(types, strings.TrimSuffix(strings.TrimPrefix(ev.Payload.EventType(), "analysis."), ".v1"))
	}
	require.Equal(t, []string{"requested", "attempt_started", "failed", "attempt_started", "exchange_recorded",
		"claim_extracted", "claim_triaged", "claim_extracted", "claim_triaged", "claim_verdict", "claim_verdict",
		"exchange_recorded", "post_verdict", "completed", "requested"}, types)
	failed := trail[2].Payload.(*events.AnalysisFailedV1)
	require.Equal(t, []any{1, true}, []any{failed.Attempt, failed.Retryable})
	require.True(t, strings.HasPrefix(failed.Reason, "worker_lost: "), failed.Reason)
	started := trail[3].Payload.(*events.AnalysisAttemptStartedV1)
	require.Equal(t, 2, started.Attempt)
	require.Equal(t, analyst.SearchNone, started.Search, "no ERRATA_SEARCH_PROVIDER")
	post, err := json.Marshal(trail[len(trail)-2].Payload)
	require.NoError(t, err)
	require.Contains(t, string(post), `"label":"Unverifiable"`, "the factual claim could not be searched")
}
