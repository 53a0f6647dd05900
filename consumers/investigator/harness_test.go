package investigator_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/content"
	"github.com/errata-dev/errata/internal/fakeopenai"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testenv"
	"github.com/errata-dev/errata/internal/teststack"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/serving"
)

// instanceKey is the instance's provider key in these tests.
const instanceKey = "sk-test-instance-key-0123456789"

// harness is the whole investigation pipeline of one test on the real
// local Kafka and Postgres: the serving projection, the investigator's and
// the validator's run-state groups and executors, and a scripted fake of
// the OpenAI API.
type harness struct {
	t        testing.TB
	stack    *teststack.Stack
	fake     *fakeopenai.Server
	eventLog *investigator.EventLog
	requests *investigations.Service
	reader   *serving.Reader
	inv, val *runstate.Group
	cfg      investigator.Config
	// keys, when set, holds users' keys for the workers; log, when set,
	// receives the workers' logs.
	keys investigator.KeyStore
	log  *slog.Logger
}

func newHarness(t testing.TB, cfg investigator.Config) *harness {
	t.Helper()
	stack := teststack.Serving(t, teststack.Options{Partitions: 2})
	fake := fakeopenai.NewForTest(t)
	fake.RequireAPIKey(instanceKey)
	h := &harness{t: t, stack: stack, fake: fake, eventLog: investigator.NewEventLog(stack.Appender),
		requests: investigations.New(stack.Appender, nil, nil), reader: serving.NewReader(stack.Pool)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	open := func(name string) *runstate.Group {
		g, err := runstate.OpenGroup(ctx, runstate.GroupConfig{Name: name, DatabaseURL: stack.DBURL, Brokers: stack.Brokers,
			Topics: stack.Topics, Registry: stack.Registry}, logging.Discard())
		require.NoError(t, err)
		t.Cleanup(g.Close)
		done := make(chan error, 1)
		go func() { done <- g.Runner.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
		return g
	}
	h.inv, h.val = open(investigator.ProjectorName), open(investigator.ValidatorProjectorName)
	cfg.Worker, cfg.BaseURL, cfg.InstanceKey = "worker-1", fake.URL, instanceKey
	if cfg.RetryBase == 0 {
		cfg.RetryBase = 50 * time.Millisecond
	}
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
	}
	h.cfg = cfg
	return h
}

// startWorkers runs an investigator and a validator executor named owner
// until the returned stop is called (or the test ends).
func (h *harness) startWorkers(owner string) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := h.cfg
	cfg.Worker = owner
	log := h.log
	if log == nil {
		log = logging.Discard()
	}
	w := investigator.New(cfg, investigator.Deps{Store: h.inv.Store, Appender: h.eventLog, Sources: h.reader,
		Keys: h.keys, Provider: llm.OpenAIResponses{}, Log: log})
	v := investigator.NewValidator(investigator.ValidatorConfig{Worker: owner, Model: "gpt-test-validator", BaseURL: cfg.BaseURL,
		InstanceKey: cfg.InstanceKey, RetryBase: cfg.RetryBase}, h.val.Store, h.eventLog, h.keys, llm.OpenAIResponses{}, nil,
		log, nil)
	exCfg := runstate.ExecutorConfig{Owner: owner, Poll: 20 * time.Millisecond, LeaseTTL: 2 * time.Second}
	var wg sync.WaitGroup
	for _, ex := range []*runstate.Executor{
		runstate.NewExecutor(exCfg, h.inv.Store, w.List, w.Do, logging.Discard(), nil),
		runstate.NewExecutor(exCfg, h.val.Store, v.List, v.Do, logging.Discard(), nil),
	} {
		wg.Add(1)
		go func() { defer wg.Done(); _ = ex.Run(ctx) }()
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	h.t.Cleanup(stop)
	return stop
}

// post is a registered LessWrong version.
type post struct {
	versionID, investigationID string
	text                       string
}

// register appends a SERVER_VERIFIED (or CLIENT_FALLBACK) registration of
// a LessWrong post whose body is paragraphs.
func (h *harness) register(externalID string, verified bool, paragraphs ...string) post {
	h.t.Helper()
	var html strings.Builder
	for _, p := range paragraphs {
		html.WriteString("<p>" + p + "</p>")
	}
	text, err := content.LessWrongHTMLToText(html.String())
	require.NoError(h.t, err)
	id, err := content.ComputeVersionIdentity(text, nil)
	require.NoError(h.t, err)
	postID := events.PostID(events.PlatformLessWrong, externalID)
	reg := &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, id.VersionHash), Platform: events.PlatformLessWrong,
		ExternalID: externalID, URL: "https://www.lesswrong.com/posts/" + externalID + "/a-post",
		VersionHash: id.VersionHash, ContentHash: id.ContentHash, OccurrencesHash: id.OccurrencesHash,
		ContentText: text, WordCount: content.WordCount(text), Provenance: events.ProvenanceClientFallback,
		ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{}, ClientHTML: html.String(),
		LessWrong: &events.LessWrongMetaV1{Slug: "a-post", Tags: []string{}},
	}
	if verified {
		reg.Provenance, reg.ServerHTML = events.ProvenanceServerVerified, html.String()
	}
	ev, err := h.stack.Appender.NewEvent(reg, "test", "")
	require.NoError(h.t, err)
	h.stack.AppendAndWait(h.t, ev)
	return post{versionID: reg.PostVersionID, investigationID: events.InvestigationID(reg.PostVersionID), text: text}
}

// request asks for the investigation of p as investigateNow does.
func (h *harness) request(p post, source string) {
	h.t.Helper()
	v, err := h.reader.VersionByID(context.Background(), p.versionID)
	require.NoError(h.t, err)
	_, err = h.requests.Request(context.Background(), investigations.Request{
		Version: investigations.Version{PostID: v.PostID, PostVersionID: v.ID, Platform: v.Platform,
			ExternalID: v.ExternalID, VersionHash: v.VersionHash},
		Source: source, CorrelationID: "test"})
	require.NoError(h.t, err)
}

// waitStatus waits until the serving projection shows the investigation in
// one of the wanted states and returns it.
func (h *harness) waitStatus(p post, timeout time.Duration, want ...string) serving.VersionStatus {
	h.t.Helper()
	var got serving.VersionStatus
	testenv.Eventually(h.t, timeout, func() (bool, string) {
		var err error
		got, err = h.reader.VersionStatusByID(context.Background(), p.versionID)
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if got.InvestigationStatus == w {
				return true, ""
			}
		}
		msg := "status " + got.InvestigationStatus
		if got.InvestigationStatus == serving.InvestigationFailed {
			for _, ev := range h.trail(p.investigationID) {
				if f, ok := ev.Payload.(*events.InvestigationAttemptFailedV1); ok {
					msg += "; attempt failed: " + f.Kind + ": " + f.Message
				}
			}
		}
		return false, msg
	})
	return got
}

// trail reads every event of an investigation from the log, in order.
func (h *harness) trail(investigationID string) []events.Event {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	topic := h.stack.Topics.Name(events.TopicInvestigations)
	cl, err := kafka.NewClient(h.stack.Brokers, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(h.t, err)
	defer cl.Close()
	adm := kafkaEnds(ctx, h.t, cl, topic)
	var out []events.Event
	seen := map[int32]int64{}
	for !caughtUp(seen, adm) {
		fs := cl.PollFetches(ctx)
		require.NoError(h.t, ctx.Err(), "reading the log")
		fs.EachRecord(func(r *kgo.Record) {
			seen[r.Partition] = r.Offset + 1
			if string(r.Key) != investigationID {
				return
			}
			ev, err := h.stack.Registry.Decode(r.Value)
			require.NoError(h.t, err)
			out = append(out, ev)
		})
	}
	return out
}

func caughtUp(seen, ends map[int32]int64) bool {
	for p, end := range ends {
		if seen[p] < end {
			return false
		}
	}
	return true
}

// types lists the event types of a trail.
func types(trail []events.Event) []string {
	out := make([]string, len(trail))
	for i, ev := range trail {
		out[i] = strings.TrimPrefix(strings.TrimSuffix(ev.Payload.EventType(), ".v1"), "investigation.")
	}
	return out
}

// brain scripts the fake OpenAI API: stage-1 requests (no structured
// output) submit the planned corrections on the first turn and end on the
// next; validator requests (a JSON schema answer) approve the claims whose
// text is in approve. failFirst answers the first n stage-1 turns instead.
type brain struct {
	mu          sync.Mutex
	submit      []tools.Correction
	retain      []string
	approve     map[string]bool
	failFirst   []fakeopenai.Step
	finalDelay  time.Duration
	firstDelay  time.Duration
	stage1Turns int
	validations int
	finalAt     time.Time
	validatedAt []time.Time
}

func (b *brain) install(f *fakeopenai.Server) {
	f.HandleFunc(fakeopenai.Responses, func(req fakeopenai.Request) fakeopenai.Step {
		b.mu.Lock()
		defer b.mu.Unlock()
		body := req.JSON()
		if _, structured := body["text"]; structured {
			b.validations++
			b.validatedAt = append(b.validatedAt, time.Now())
			approved := false
			for text := range b.approve {
				// The candidate section holds the claim as indented JSON.
				if strings.Contains(string(req.Body), `\"text\": \"`+text+`\"`) {
					approved = true
				}
			}
			verdict, _ := json.Marshal(map[string]any{"approved": approved, "reason": "checked against the cited source"})
			return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(string(verdict)))}})
		}
		b.stage1Turns++
		if len(b.failFirst) > 0 {
			step := b.failFirst[0]
			b.failFirst = b.failFirst[1:]
			return step
		}
		if prev, _ := body["previous_response_id"].(string); prev == "" {
			var out []any
			for i, c := range b.submit {
				out = append(out, fakeopenai.FunctionCall("call_s"+string(rune('a'+i)), tools.SubmitCorrectionName, c))
			}
			for i, id := range b.retain {
				out = append(out, fakeopenai.FunctionCall("call_r"+string(rune('a'+i)), tools.RetainCorrectionName, tools.Retain{ID: id}))
			}
			if len(out) == 0 {
				out = append(out, fakeopenai.Message(fakeopenai.Text("Nothing to flag.")))
			}
			return fakeopenai.Reply(fakeopenai.Response{Output: out, Usage: &fakeopenai.Usage{InputTokens: 900, OutputTokens: 120}}).WithDelay(b.firstDelay)
		}
		b.finalAt = time.Now().Add(b.finalDelay)
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("Submitted my findings."))}}).WithDelay(b.finalDelay)
	})
}

func correction(text, summary string) tools.Correction {
	return tools.Correction{Text: text, Context: text, Summary: summary, Reasoning: "The cited reference states otherwise.",
		Sources: []tools.Source{{URL: "https://example.org/reference", Title: "Reference", Snippet: "The reference value."}}}
}

func kafkaEnds(ctx context.Context, t testing.TB, cl *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends
}
