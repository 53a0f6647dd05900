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

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/internal/testkit/teststack"
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
	// policy is the evidence policy (default: the strict one); fetcher and
	// search, when set, are stage 1's fetch_url and the assessor's search.
	policy  evidence.Policy
	fetcher investigator.URLFetcher
	search  websearch.Searcher
	// assessMaxFailures, when set, is the validator's AssessMaxFailures.
	assessMaxFailures int
}

func newHarness(t testing.TB, cfg investigator.Config) *harness {
	t.Helper()
	// The database holds the run-state groups' schemas already migrated.
	stack := teststack.Serving(t, teststack.Options{Partitions: 2, Schemas: []teststack.Schema{
		{Name: investigator.ProjectorName, Migrations: runstate.Migrations()},
		{Name: investigator.ValidatorProjectorName, Migrations: runstate.Migrations()},
	}})
	fake := fakeopenai.NewForTest(t)
	fake.RequireAPIKey(instanceKey)
	h := &harness{t: t, stack: stack, fake: fake, eventLog: investigator.NewEventLog(stack.Appender),
		requests: investigations.New(stack.Appender, nil, nil), reader: serving.NewReader(stack.Pool),
		policy: evidence.DefaultPolicy()}
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
		Keys: h.keys, Provider: llm.OpenAIResponses{}, Log: log, Tools: &investigator.Toolbox{Fetcher: h.fetcher, Authors: h.reader}})
	assessor := investigator.NewAssessor(investigator.AssessorConfig{}, sources.Default(), h.policy,
		stance.New(llm.OpenAIResponses{}, stance.Config{Model: "gpt-test-stance"}), h.search, nil)
	v := investigator.NewValidator(investigator.ValidatorConfig{Worker: owner, Model: "gpt-test-validator", BaseURL: cfg.BaseURL,
		InstanceKey: cfg.InstanceKey, RetryBase: cfg.RetryBase, AssessMaxFailures: h.assessMaxFailures}, h.val.Store, h.eventLog, h.keys, llm.OpenAIResponses{}, nil,
		assessor, log, nil)
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
	return h.registerBy(nil, externalID, verified, paragraphs...)
}

// registerBy is register of a post by author (nil: none known).
func (h *harness) registerBy(author *events.AuthorV1, externalID string, verified bool, paragraphs ...string) post {
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
		LessWrong: &events.LessWrongMetaV1{Slug: "a-post", Tags: []string{}}, Author: author,
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
		if got.InvestigationStatus == events.StatusFailed {
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
// output) fetch the pages in fetch and submit the planned corrections on the
// first turn and end on the next; validator requests (a JSON schema
// answer) approve the claims whose text is in approve, citing cite; stance
// requests judge each passage by the first phrase of stances it contains
// (default: the snippets of correction's sources refute the claim),
// neutral otherwise. failFirst answers the first n stage-1 turns instead.
type brain struct {
	mu        sync.Mutex
	submit    []tools.Correction
	retain    []string
	fetch     []string
	approve   map[string]bool
	cite      []fakeopenai.URLCitation
	verdict   string
	stances   []phraseStance
	failFirst []fakeopenai.Step
	// authorContext: the first stage-1 turn also calls author_context.
	authorContext bool
	finalDelay    time.Duration
	firstDelay    time.Duration
	stanceDelay   time.Duration
	stage1Turns   int
	validations   int
	stanceCalls   int
	finalAt       time.Time
	validatedAt   []time.Time
}

// phraseStance is the stance of the passages that contain a phrase.
type phraseStance struct {
	phrase string
	stance fakeopenai.ScriptStance
}

// Stances the brain gives.
var (
	refutes  = fakeopenai.ScriptStance{Entail: 0.05, Contradict: 0.9, Neutral: 0.05}
	supports = fakeopenai.ScriptStance{Entail: 0.9, Contradict: 0.05, Neutral: 0.05}
)

func (b *brain) stanceOf(passage string) fakeopenai.ScriptStance {
	script := b.stances
	if script == nil {
		script = []phraseStance{{phrase: officialSnippet, stance: refutes}, {phrase: wireSnippet, stance: refutes}}
	}
	for _, s := range script {
		if strings.Contains(passage, s.phrase) {
			return s.stance
		}
	}
	return fakeopenai.ScriptStance{Neutral: 1}
}

func (b *brain) install(f *fakeopenai.Server) { f.HandleFunc(fakeopenai.Responses, b.answer) }

// answer answers one request to the fake.
func (b *brain) answer(req fakeopenai.Request) fakeopenai.Step {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, passages, ok, err := req.Stance(); ok {
		if err != nil {
			return fakeopenai.BadStanceRequest(err)
		}
		b.stanceCalls++
		out := make([]fakeopenai.ScriptStance, len(passages))
		for i, p := range passages {
			out[i] = b.stanceOf(p)
		}
		return fakeopenai.StanceReply(fakeopenai.Responses, out).WithDelay(b.stanceDelay)
	}
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
		reason := b.verdict
		if reason == "" {
			reason = "checked against the cited source"
		}
		verdict, _ := json.Marshal(map[string]any{"approved": approved, "reason": reason})
		return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(string(verdict), b.cite...))}})
	}
	b.stage1Turns++
	if len(b.failFirst) > 0 {
		step := b.failFirst[0]
		b.failFirst = b.failFirst[1:]
		return step
	}
	if prev, _ := body["previous_response_id"].(string); prev == "" {
		var out []any
		if b.authorContext {
			out = append(out, fakeopenai.FunctionCall("call_ac", investigator.AuthorContextToolName, map[string]string{}))
		}
		for i, u := range b.fetch {
			out = append(out, fakeopenai.FunctionCall("call_f"+string(rune('a'+i)), "fetch_url", map[string]string{"url": u}))
		}
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
}

// Snippets of the sources correction cites, on a tier-1 domain (loc.gov,
// by the starter registry's *.gov) and a tier-2 one (reuters.com): the
// brain judges both to refute the claim by default, so an approved claim
// passes the strict policy.
const (
	officialSnippet = "The official record gives another value."
	wireSnippet     = "The wire report gives another value."
)

func correction(text, summary string) tools.Correction {
	return tools.Correction{Text: text, Context: text, Summary: summary, Reasoning: "The cited references state otherwise.",
		Sources: []tools.Source{
			{URL: "https://www.loc.gov/reference", Title: "Official record", Snippet: officialSnippet},
			{URL: "https://www.reuters.com/reference", Title: "Wire report", Snippet: wireSnippet},
		}}
}

func kafkaEnds(ctx context.Context, t testing.TB, cl *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	listed, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	require.NoError(t, err)
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends
}
