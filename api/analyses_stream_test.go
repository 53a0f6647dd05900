package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/serving"
)

// analysisRun is the events of one analysis of text, as the analyst
// appends them, in order.
type analysisRun struct {
	id     string
	claim  string
	events []events.Payload
}

func newRun(text string) analysisRun {
	sum := sha256.Sum256([]byte(text))
	id := analysisIDOf(text)
	claim := events.AnalysisClaimID(id, 1, 0)
	ref := events.AnalysisRef{AnalysisID: id, Attempt: 1}
	prompt := events.PromptRefV1{Name: "verdict-extract", Version: "v1", SHA256: strings.Repeat("ab", 32)}
	src := events.AssessedSourceV1{URL: "https://www.toureiffel.paris/en/history", Domain: "toureiffel.paris", Tier: 1,
		Rule: "toureiffel.paris", Title: "History", Snippet: "completed in 1889", Origin: "search",
		Entail: 0.01, Contradict: 0.97, Neutral: 0.02, Recency: 0.5}
	return analysisRun{id: id, claim: claim, events: []events.Payload{
		&events.AnalysisRequestedV1{AnalysisID: id, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: testPromptVersion,
			InputKind: events.AnalysisInputText, Text: text, ContentSHA256: hex.EncodeToString(sum[:]),
			Source: events.AnalysisSourceWorkbench, RequesterKey: strings.Repeat("9", 64)},
		&events.AnalysisAttemptStartedV1{AnalysisRef: ref, Worker: "worker-1", Prompts: []events.PromptRefV1{prompt},
			Provider: "openai-responses", Model: "gpt-5", RegistryVersion: "starter-1", PolicyVersion: "strict-v1", RubricVersion: "factsocial-v1"},
		&events.AnalysisExchangeRecordedV1{AnalysisRef: ref, Step: "extract", Seq: 0, Prompt: prompt, Provider: "openai-responses",
			Model: "gpt-5", HTTPStatus: 200, DurationMS: 1200, RawRequest: `{"input":"the whole prompt"}`, RawResponse: `{"output":"…"}`,
			Usage: events.UsageV1{InputTokens: 100, OutputTokens: 20}},
		&events.AnalysisClaimExtractedV1{AnalysisRef: ref, ClaimID: claim, Index: 0,
			Text: `<script>alert("x")</script> The tower was completed in 1925.`, Context: text},
		&events.AnalysisClaimTriagedV1{AnalysisRef: ref, ClaimID: claim, Kind: events.TriageFactual, Specificity: 0.9,
			Numeric: true, Researched: true, Reason: "a dated fact"},
		&events.AnalysisQueryIssuedV1{AnalysisRef: ref, ClaimID: claim, Query: "Eiffel Tower completed", Kind: "keyword",
			Results: []events.SearchResultV1{{URL: src.URL, Title: "History", Snippet: "completed in 1889"}}},
		&events.AnalysisSourceAssessedV1{AnalysisRef: ref, ClaimID: claim, Source: src},
		&events.AnalysisClaimVerdictV1{AnalysisRef: ref, ClaimID: claim, EMax: 0.01, CMax: 0.97, Score: 5,
			Verdict: events.EvidenceRefuted, Gate4: "HIGH", TruthPercent: 5, Confidence: 85, Caps: []events.CapV1{},
			Label: events.LabelFalse, Band: events.BandFalse, Summary: "Completed in 1889."},
		&events.AnalysisPostVerdictV1{AnalysisRef: ref, TruthPercent: 5, Confidence: 85, Caps: []events.CapV1{},
			Label: events.LabelFalse, Band: events.BandFalse, Summary: "The tower was completed in 1889.", Caveats: []string{},
			Sources: []events.VerdictSourceV1{{URL: src.URL, Title: "History", Domain: src.Domain, Tier: 1}}, Claims: 1},
		&events.AnalysisCompletedV1{AnalysisRef: ref, Claims: 1, Researched: 1},
	}}
}

// wantData is the SSE data object of p at t: the payload less the
// requester's hash and the exchanges' raw bodies.
func wantData(t *testing.T, p events.Payload, at time.Time) string {
	t.Helper()
	raw, err := json.Marshal(p)
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	delete(m, "requester_key")
	delete(m, "raw_request")
	delete(m, "raw_response")
	data, err := json.Marshal(m)
	require.NoError(t, err)
	out, err := json.Marshal(map[string]any{"type": p.EventType(), "time": at.UTC().Format(isoMillis), "data": json.RawMessage(data)})
	require.NoError(t, err)
	return string(out)
}

// expectEvents reads the stream's next events and checks their framing
// and content: id the offset, event the type, data the payload at its time.
func expectEvents(t *testing.T, st *sseStream, ps []events.Payload, offsets []int64, at []time.Time) {
	t.Helper()
	for i, p := range ps {
		ev, ok := st.nextEvent(t)
		require.True(t, ok, "the stream ended before %s", p.EventType())
		require.Equal(t, fmt.Sprint(offsets[i]), ev.id)
		require.Equal(t, p.EventType(), ev.event)
		require.JSONEq(t, wantData(t, p, at[i]), ev.data)
		require.NotContains(t, ev.data, "requester_key")
		require.NotContains(t, ev.data, "the whole prompt")
	}
}

func times(at time.Time, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = at.Add(time.Duration(i) * time.Second).Truncate(time.Millisecond)
	}
	return out
}

func streamPath(id string) string { return "/api/v1/analyses/" + id + "/events" }

// A finished job's stream replays every event of the job, and only its,
// in order, then ends.
func TestStreamReplay(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 50 * time.Millisecond})
	run := newRun("The Eiffel Tower was completed in 1925.")
	other := newRun("Water boils at 90 degrees at sea level.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	// The other job's events are interleaved (they may share the partition).
	offsets := make([]int64, len(run.events))
	for i := range run.events {
		off := w.appendEvents(t, at.Add(time.Duration(i)*time.Second), run.events[i], other.events[min(i, len(other.events)-2)])
		offsets[i] = off[0]
	}
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusComplete, CreatedAt: at})

	resp, st := openStream(t, w.server, streamPath(run.id), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	first, ok := st.next(t)
	require.True(t, ok)
	require.Equal(t, sseEvent{retry: "3000"}, first)
	expectEvents(t, st, run.events, offsets, times(at, len(run.events)))
	_, ok = st.nextEvent(t)
	require.False(t, ok, "the stream ends after the job's last event")
}

// A running job's stream passes events on as they are appended, goes on
// past a failed attempt that is retried, and ends with the completion.
func TestStreamLive(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 50 * time.Millisecond})
	run := newRun("The Eiffel Tower was completed in 1925.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	off := w.appendEvents(t, at, run.events[:2]...)
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusRunning, CreatedAt: at})

	_, st := openStream(t, w.server, streamPath(run.id), nil)
	ev, ok := st.next(t)
	require.True(t, ok)
	require.Equal(t, "3000", ev.retry)
	expectEvents(t, st, run.events[:2], off, times(at, 2))

	later := at.Add(time.Minute)
	off = w.appendEvents(t, later, run.events[3])
	expectEvents(t, st, run.events[3:4], off, times(later, 1))

	failed := &events.AnalysisFailedV1{AnalysisRef: events.AnalysisRef{AnalysisID: run.id, Attempt: 1}, Reason: "provider timed out", Retryable: true}
	off = w.appendEvents(t, later, failed)
	expectEvents(t, st, []events.Payload{failed}, off, times(later, 1))

	done := &events.AnalysisCompletedV1{AnalysisRef: events.AnalysisRef{AnalysisID: run.id, Attempt: 2}, Claims: 0, Researched: 0}
	off = w.appendEvents(t, later, done, run.events[4])
	expectEvents(t, st, []events.Payload{done}, off[:1], times(later, 1))
	_, ok = st.nextEvent(t)
	require.False(t, ok, "the stream ends with the completion; nothing after it is sent")
}

// A failure without retry ends the stream too.
func TestStreamEndsOnFinalFailure(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 50 * time.Millisecond})
	run := newRun("A claim that fails.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	failed := &events.AnalysisFailedV1{AnalysisRef: events.AnalysisRef{AnalysisID: run.id, Attempt: 1}, Reason: "no provider key", Retryable: false}
	off := w.appendEvents(t, at, run.events[0], run.events[1], failed)
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusRunning, CreatedAt: at})
	_, st := openStream(t, w.server, streamPath(run.id), nil)
	expectEvents(t, st, []events.Payload{run.events[0], run.events[1], failed}, off, times(at, 3))
	_, ok := st.nextEvent(t)
	require.False(t, ok)
}

// A client that reconnects with Last-Event-ID gets what followed it; one
// that had everything gets nothing and the stream ends; a malformed id is
// ignored.
func TestStreamResume(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 50 * time.Millisecond})
	run := newRun("The Eiffel Tower was completed in 1925.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	offsets := w.appendEvents(t, at, run.events...)
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusComplete, CreatedAt: at})
	ts := times(at, len(run.events))

	_, st := openStream(t, w.server, streamPath(run.id), map[string]string{"Last-Event-ID": fmt.Sprint(offsets[2])})
	expectEvents(t, st, run.events[3:], offsets[3:], ts[3:])
	_, ok := st.nextEvent(t)
	require.False(t, ok)

	_, st = openStream(t, w.server, streamPath(run.id), map[string]string{"Last-Event-ID": fmt.Sprint(offsets[len(offsets)-1])})
	ev, ok := st.next(t)
	require.True(t, ok)
	require.Equal(t, "3000", ev.retry)
	_, ok = st.nextEvent(t)
	require.False(t, ok)

	_, st = openStream(t, w.server, streamPath(run.id), map[string]string{"Last-Event-ID": "-1; DROP TABLE"})
	expectEvents(t, st, run.events, offsets, ts)
}

// An idle stream carries keep-alive comments.
func TestStreamHeartbeat(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 20 * time.Millisecond})
	run := newRun("A claim nobody works on.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	off := w.appendEvents(t, at, run.events[0])
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusPending, CreatedAt: at})
	_, st := openStream(t, w.server, streamPath(run.id), nil)
	expectEvents(t, st, run.events[:1], off, times(at, 1))
	ev, ok := st.next(t)
	require.True(t, ok)
	require.Equal(t, sseEvent{comment: "keep-alive"}, ev)
}

// Open streams are bounded per client; a refused or ended stream frees
// its place.
func TestStreamLimits(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 20 * time.Millisecond, streamsPerClient: 1})
	run := newRun("A claim nobody works on.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	w.appendEvents(t, at, run.events[0])
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusPending, CreatedAt: at})

	// Refusals hold no place.
	for _, path := range []string{streamPath(analysisIDOf("unknown")), streamPath("nope")} {
		resp, _ := openStream(t, w.server, path, nil)
		require.NotEqual(t, http.StatusOK, resp.StatusCode)
	}
	resp, st := openStream(t, w.server, streamPath(run.id), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, ok := st.nextEvent(t)
	require.True(t, ok)

	second, _ := openStream(t, w.server, streamPath(run.id), nil)
	require.Equal(t, http.StatusTooManyRequests, second.StatusCode)
	var body map[string]map[string]string
	require.NoError(t, json.NewDecoder(second.Body).Decode(&body))
	require.Equal(t, "TOO_MANY_STREAMS", body["error"]["code"])
	require.Equal(t, "5", second.Header.Get("Retry-After"))

	// The first client leaves: the next keep-alive finds it gone.
	resp.Body.Close()
	testenv.Eventually(t, wbGuard, func() (bool, string) {
		r, _ := openStream(t, w.server, streamPath(run.id), nil)
		defer r.Body.Close()
		return r.StatusCode == http.StatusOK, fmt.Sprintf("HTTP %d", r.StatusCode)
	})
}

// Unknown and malformed ids are refused before any stream starts.
func TestStreamRefusals(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: 20 * time.Millisecond})
	for _, tc := range []struct {
		path, code string
		status     int
	}{
		{streamPath(analysisIDOf("unknown")), "NOT_FOUND", 404},
		{streamPath("../../etc"), "NOT_FOUND", 404},
		{streamPath("0000"), "INVALID_ID", 400},
	} {
		resp, _ := openStream(t, w.server, tc.path, nil)
		require.Equal(t, tc.status, resp.StatusCode, tc.path)
		var body map[string]map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		require.Equal(t, tc.code, body["error"]["code"], tc.path)
	}
}

// Shutting the server down ends open streams, so shutdown does not wait
// on them.
func TestStreamEndsAtShutdown(t *testing.T) {
	w := newBench(t, benchOpts{heartbeat: time.Hour})
	run := newRun("A claim nobody works on.")
	at := time.Now().UTC().Truncate(time.Millisecond)
	w.appendEvents(t, at, run.events[0])
	w.analyses.set(serving.Analysis{ID: run.id, Status: events.StatusPending, CreatedAt: at})
	_, st := openStream(t, w.server, streamPath(run.id), nil)
	_, ok := st.nextEvent(t)
	require.True(t, ok)
	w.server.stopStreams()
	_, ok = st.nextEvent(t)
	require.False(t, ok)
}

// Rendering one record of the log as a server-sent event (decode,
// validate, redact, encode).
func BenchmarkStreamEvent(b *testing.B) {
	w := newBench(b, benchOpts{})
	run := newRun("The Eiffel Tower was completed in 1925.")
	ev, err := w.appender.NewEventAt(run.events[5], time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), "", "")
	if err != nil {
		b.Fatal(err)
	}
	msg, err := w.registry.Encode(ev)
	if err != nil {
		b.Fatal(err)
	}
	rec := &kgo.Record{Key: []byte(run.id), Value: msg.Value}
	for b.Loop() {
		if _, ok := w.server.streamEventOf(rec, run.id); !ok {
			b.Fatal("not rendered")
		}
	}
}
