package analyst

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

var update = flag.Bool("update", false, "rewrite the golden trails under testdata/")

// testKey is the instance's provider key in these tests.
const testKey = "sk-analyst-test-key-0123456789"

// t0 is the time of every recorded event (the attempt's time).
var t0 = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

// Texts of the script's rules (testdata/script.json).
const (
	falsePost   = "Fun fact: the Eiffel Tower was completed in 1925 for the World Fair. It is the most beautiful building in Paris."
	opinionPost = "Honestly, pineapple belongs on pizza. Anyone who disagrees has no taste."
)

// recorder is an in-memory event log: it builds each event as the real
// appender does (validated by the registry, encoded and decoded again) at
// t0, and keeps them in order.
type recorder struct {
	reg *events.Registry
	mu  sync.Mutex
	evs []events.Event
	n   int
	// failAfter, when positive, fails every append once that many events
	// are recorded (a broker that went away).
	failAfter int
}

func (r *recorder) AppendEvents(_ context.Context, key string, payloads ...events.Payload) ([]events.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failAfter > 0 && len(r.evs) >= r.failAfter {
		return nil, fmt.Errorf("append: the broker is away")
	}
	out := make([]events.Event, 0, len(payloads))
	for _, p := range payloads {
		r.n++
		ev, err := r.reg.New(p, events.Meta{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", r.n), Time: t0, CorrelationID: key})
		if err != nil {
			return nil, err
		}
		msg, err := r.reg.Encode(ev)
		if err != nil {
			return nil, err
		}
		if msg.Key != key {
			return nil, fmt.Errorf("event %s keyed %q, appended under %q", p.EventType(), msg.Key, key)
		}
		back, err := r.reg.Decode(msg.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, back)
	}
	r.evs = append(r.evs, out...)
	return out, nil
}

func (r *recorder) events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.evs...)
}

// bundle is one test's analyst: the real fake OpenAI server playing the
// script, the script's search stand-in behind the real SearXNG client, the
// real registry, policy, rubric and stance provider, and a recorder.
type bundle struct {
	fake   *fakeopenai.Server
	script *fakeopenai.Script
	log    *recorder
	w      *Worker
	cfg    Config
	deps   Deps
	search *httptest.Server
}

func setup(t testing.TB) *bundle {
	t.Helper()
	sc, err := fakeopenai.LoadScript(filepath.Join("testdata", "script.json"))
	require.NoError(t, err)
	fake := fakeopenai.NewForTest(t)
	fake.Play(sc, nil)
	fake.RequireAPIKey(testKey)
	b := &bundle{fake: fake, script: sc, log: &recorder{reg: events.NewCatalogRegistry()}}
	b.search = httptest.NewServer(sc.SearchHandler())
	t.Cleanup(b.search.Close)
	client, err := httpsafe.New(httpsafe.AllowLoopbackForTests())
	require.NoError(t, err)
	searcher, err := websearch.NewSearXNG(client, b.search.URL)
	require.NoError(t, err)
	b.cfg = Config{Worker: "worker-1", Model: "gpt-test", BaseURL: fake.URL, InstanceKey: testKey, RetryBase: time.Minute}
	b.deps = Deps{Appender: b.log, Provider: llm.OpenAIResponses{},
		Stance: stance.New(llm.OpenAIResponses{}, stance.Config{Model: "gpt-test-stance"}), Search: searcher,
		Registry: sources.Default(), Policy: evidence.DefaultPolicy(), Rubric: verdict.DefaultRubric(),
		Now: func() time.Time { return t0 }}
	b.w = New(b.cfg, b.deps)
	return b
}

// rebuild makes the worker again after a change of cfg or deps.
func (b *bundle) rebuild() { b.w = New(b.cfg, b.deps) }

// request is a TEXT analysis request of text.
func request(text string) events.AnalysisRequestedV1 {
	sum := sha256.Sum256([]byte(text))
	hexSum := hex.EncodeToString(sum[:])
	version, err := PromptVersion(nil)
	if err != nil {
		panic(err)
	}
	return events.AnalysisRequestedV1{
		AnalysisID:   events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", hexSum), events.AnalysisTypeVerdict, version),
		AnalysisType: events.AnalysisTypeVerdict, PromptVersion: version, InputKind: events.AnalysisInputText,
		Text: text, ContentSHA256: hexSum, Source: events.AnalysisSourceAPI,
	}
}

// runAttempt runs attempt n of an analysis of text (n-1 attempts before
// it) and returns the events it appended.
func (b *bundle) runAttempt(t testing.TB, text string, n int) []events.Event {
	t.Helper()
	req := request(text)
	before := len(b.log.events())
	require.NoError(t, b.w.attempt(context.Background(), Run{AnalysisID: req.AnalysisID, Request: req, Status: events.StatusPending, Attempt: n - 1}))
	return b.log.events()[before:]
}

// typesOf lists the short event types of a trail.
func typesOf(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(ev.Payload.EventType(), "analysis."), ".v1")
	}
	return out
}

func payloadsOf[T events.Payload](evs []events.Event) []T {
	var out []T
	for _, ev := range evs {
		if p, ok := ev.Payload.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

// goldenTrail compares a trail with testdata/<name>.golden.json: every
// payload, exchanges reduced to what does not vary between runs (the raw
// bodies carry random fence tokens and the response ids of the fake).
func goldenTrail(t *testing.T, name string, evs []events.Event) {
	t.Helper()
	type entry struct {
		Type    string `json:"type"`
		Payload any    `json:"payload"`
	}
	out := make([]entry, len(evs))
	for i, ev := range evs {
		var p any = ev.Payload
		if ex, ok := ev.Payload.(*events.AnalysisExchangeRecordedV1); ok {
			p = map[string]any{"step": ex.Step, "seq": ex.Seq, "prompt": ex.Prompt.Name + "@" + ex.Prompt.Version,
				"provider": ex.Provider, "model": ex.Model, "http_status": ex.HTTPStatus, "error": ex.Error,
				"request_bytes": ex.RawRequest != "" && ex.RawRequest != "null", "response_bytes": ex.RawResponse != ""}
		}
		out[i] = entry{Type: ev.Payload.EventType(), Payload: p}
	}
	got, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./consumers/analyst -run %s -update writes it", t.Name())
	require.Equal(t, string(want), string(got))
}

// A false post: the factual claim is researched (every query with its top
// results, each source's tier and stance), refuted by three independent
// domains, and the post is False, its confidence capped by the model's
// own and the cap recorded. The opinion is triaged out with its Opinion
// verdict at once. The whole trail is pinned.
func TestFalsePost(t *testing.T) {
	b := setup(t)
	trail := b.runAttempt(t, falsePost, 1)
	require.Equal(t, []string{"attempt_started", "exchange_recorded",
		"claim_extracted", "claim_triaged", "claim_extracted", "claim_triaged", "claim_verdict",
		"query_issued", "query_issued",
		"exchange_recorded", "source_assessed", "source_assessed", "source_assessed", "claim_verdict",
		"exchange_recorded", "post_verdict", "completed"}, typesOf(trail))

	started := trail[0].Payload.(*events.AnalysisAttemptStartedV1)
	require.Equal(t, events.AnalysisRef{AnalysisID: request(falsePost).AnalysisID, Attempt: 1}, started.AnalysisRef)
	require.Equal(t, []string{"verdict-extract", "verdict-summary", "stance"},
		[]string{started.Prompts[0].Name, started.Prompts[1].Name, started.Prompts[2].Name})
	require.Equal(t, sources.Default().Version(), started.RegistryVersion)
	require.Equal(t, evidence.DefaultPolicy().Version(), started.PolicyVersion)
	require.Equal(t, verdict.DefaultRubric().Version(), started.RubricVersion)
	require.Equal(t, "searxng", started.Search)

	exchanges := payloadsOf[*events.AnalysisExchangeRecordedV1](trail)
	require.Equal(t, []string{"extract", "stance", "verdict"}, []string{exchanges[0].Step, exchanges[1].Step, exchanges[2].Step})
	require.Equal(t, []int{0, 1, 2}, []int{exchanges[0].Seq, exchanges[1].Seq, exchanges[2].Seq})
	for _, ex := range exchanges {
		require.Equal(t, http.StatusOK, ex.HTTPStatus)
		require.Contains(t, ex.RawRequest, `"model":"gpt-test`)
		require.Contains(t, ex.RawResponse, `"status":"completed"`)
	}

	for _, q := range payloadsOf[*events.AnalysisQueryIssuedV1](trail) {
		require.Empty(t, q.Error)
		require.Len(t, q.Results, 3, q.Query)
		require.Equal(t, "2021-05-01T00:00:00Z", q.Results[0].PublishedAt)
	}
	srcs := payloadsOf[*events.AnalysisSourceAssessedV1](trail)
	require.Equal(t, []int{1, 2, 2}, []int{srcs[0].Source.Tier, srcs[1].Source.Tier, srcs[2].Source.Tier})
	require.Equal(t, 0.95, srcs[0].Source.Contradict)

	verdicts := payloadsOf[*events.AnalysisClaimVerdictV1](trail)
	opinion, factual := verdicts[0], verdicts[1]
	require.Equal(t, events.LabelOpinion, opinion.Label)
	require.Equal(t, "", opinion.Verdict)
	require.Equal(t, events.EvidenceRefuted, factual.Verdict)
	require.Equal(t, events.LabelFalse, factual.Label)
	require.Equal(t, events.BandFalse, factual.Band)
	require.Equal(t, []events.CapV1{}, factual.Caps, "the sources' year settles the claim's")

	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Equal(t, events.LabelFalse, post.Label)
	require.Equal(t, 2, post.Claims)
	require.Equal(t, []events.CapV1{{Rule: verdict.CapModelConfidence, Cap: 90, Before: factual.Confidence}}, post.Caps,
		"the summary's confidence (90) is below the evidence's")
	require.Equal(t, "https://loc.gov/item/eiffel-tower", post.Sources[0].URL, "normalized like the registry")
	require.Equal(t, &events.AnalysisCompletedV1{AnalysisRef: started.AnalysisRef, Claims: 2, Researched: 1}, trail[len(trail)-1].Payload)
	goldenTrail(t, "false_post", trail)
}

// An opinion-only text: both claims are triaged as opinions, nothing is
// searched (no query event, no search request, no stance or summary call)
// and the post is Opinion.
func TestOpinionOnly(t *testing.T) {
	b := setup(t)
	searched := 0
	b.search.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		searched++
		b.script.SearchHandler().ServeHTTP(w, r)
	})
	trail := b.runAttempt(t, opinionPost, 1)
	require.Equal(t, []string{"attempt_started", "exchange_recorded",
		"claim_extracted", "claim_triaged", "claim_extracted", "claim_triaged", "claim_verdict", "claim_verdict",
		"post_verdict", "completed"}, typesOf(trail))
	require.Zero(t, searched)
	require.Len(t, b.fake.RequestsTo(fakeopenai.Responses), 1, "the extraction call only")
	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Equal(t, events.LabelOpinion, post.Label)
	require.Equal(t, events.BandUnverified, post.Band)
	require.Equal(t, []events.VerdictSourceV1{}, post.Sources)
	for _, tr := range payloadsOf[*events.AnalysisClaimTriagedV1](trail) {
		require.Equal(t, events.TriageOpinion, tr.Kind)
		require.False(t, tr.Researched)
	}
	goldenTrail(t, "opinion_only", trail)
}

const mayorPost = "Breaking: Joe Quimby is the mayor of Springfield again."

// A time-sensitive current-events claim resting on one blog post from two
// years before: the staleness and single-low-tier caps are applied and
// recorded, on the claim and on the post.
func TestStaleSingleBlogSource(t *testing.T) {
	b := setup(t)
	trail := b.runAttempt(t, mayorPost, 1)
	v := payloadsOf[*events.AnalysisClaimVerdictV1](trail)
	require.Len(t, v, 1)
	require.Equal(t, []string{verdict.CapStaleSources, verdict.CapSingleLowTier}, capRules(v[0].Caps))
	require.LessOrEqual(t, v[0].Confidence, 50)
	src := payloadsOf[*events.AnalysisSourceAssessedV1](trail)
	require.Len(t, src, 1)
	require.Equal(t, 4, src[0].Source.Tier, "medium.com is a blog host")
	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Subset(t, capRules(post.Caps), []string{verdict.CapStaleSources, verdict.CapSingleLowTier})
	goldenTrail(t, "stale_single_blog", trail)
}

// Without a web search configured, attempt_started says so, no query is
// issued, and a time-sensitive claim gets the no-search cap: its verdict
// has no engine verdict and the summary says why.
func TestNoSearchConfigured(t *testing.T) {
	b := setup(t)
	b.deps.Search = nil
	b.rebuild()
	trail := b.runAttempt(t, mayorPost, 1)
	require.Equal(t, []string{"attempt_started", "exchange_recorded", "claim_extracted", "claim_triaged",
		"claim_verdict", "exchange_recorded", "post_verdict", "completed"}, typesOf(trail))
	require.Equal(t, SearchNone, trail[0].Payload.(*events.AnalysisAttemptStartedV1).Search)
	v := payloadsOf[*events.AnalysisClaimVerdictV1](trail)[0]
	require.Equal(t, "", v.Verdict)
	require.Equal(t, NotSearchedNoSearch, v.Summary)
	require.Equal(t, verdict.CapNoSearchTimeSensitive, v.Caps[0].Rule)
	require.LessOrEqual(t, v.Confidence, 40)
	require.Equal(t, events.LabelUnverifiable, v.Label)
}

// Every query failing (the search provider answers 500) is recorded with
// its error and no results; the claim counts as not searched, and the
// attempt still completes.
func TestSearchFailing(t *testing.T) {
	b := setup(t)
	b.search.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "engine down", http.StatusInternalServerError)
	})
	trail := b.runAttempt(t, falsePost, 1)
	qs := payloadsOf[*events.AnalysisQueryIssuedV1](trail)
	require.Len(t, qs, 2)
	for _, q := range qs {
		require.Equal(t, []events.SearchResultV1{}, q.Results)
		require.Contains(t, q.Error, "500")
	}
	require.Empty(t, payloadsOf[*events.AnalysisSourceAssessedV1](trail))
	v := payloadsOf[*events.AnalysisClaimVerdictV1](trail)
	require.Equal(t, NotSearchedAllQueriesFailed, v[1].Summary)
	require.Equal(t, "completed", typesOf(trail)[len(trail)-1])
}

// Hostile search results: NUL, invalid UTF-8, a huge snippet, a private
// address, a script URL and a punycode host. What is recorded is valid
// UTF-8 without NUL and bounded; only public http(s) pages become
// passages; the attempt completes.
func TestHostileSearchResults(t *testing.T) {
	b := setup(t)
	huge := strings.Repeat("Eiffel tower 1889 ", 2000)
	b.search.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"results":[
			{"url":"https://www.loc.gov/a","title":"NUL \u0000 title","content":"bad \udcff utf-8 ` + huge + `","publishedDate":"not a date"},
			{"url":"http://10.0.0.1/internal","title":"private","content":"Eiffel Tower completed 1889"},
			{"url":"javascript:alert(1)","title":"script","content":"Eiffel Tower"},
			{"url":"https://xn--80ak6aa92e.com/tower","title":"idn","content":"The Eiffel Tower was completed in 1889."},
			{"url":"https://www.loc.gov/a","title":"again","content":"a repeat of the first"}
		]}`))
	})
	trail := b.runAttempt(t, falsePost, 1)
	for _, q := range payloadsOf[*events.AnalysisQueryIssuedV1](trail) {
		require.LessOrEqual(t, len(q.Results), maxRecordedResults)
		for _, r := range q.Results {
			for _, s := range []string{r.URL, r.Title, r.Snippet} {
				require.True(t, utf8Valid(s) && !strings.ContainsRune(s, 0), "%q", s)
			}
			require.LessOrEqual(t, len(r.Snippet), maxSnippetBytes)
			require.NotContains(t, r.URL, "javascript:")
		}
	}
	var urls []string
	for _, s := range payloadsOf[*events.AnalysisSourceAssessedV1](trail) {
		urls = append(urls, s.Source.URL)
		require.LessOrEqual(t, len(s.Source.Snippet), b.w.cfg.MaxPassageBytes)
	}
	require.Equal(t, []string{"https://loc.gov/a", "https://xn--80ak6aa92e.com/tower"}, urls)
	require.Equal(t, "completed", typesOf(trail)[len(trail)-1])
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func capRules(cs []events.CapV1) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Rule)
	}
	return out
}

// extractionReply is an extraction answer holding claims.
func extractionReply(claims ...map[string]any) fakeopenai.Step {
	return fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(
		string(mustJSON(map[string]any{"claims": claims}))))}})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func towerClaim() map[string]any {
	return map[string]any{"text": "The Eiffel Tower was completed in 1925.", "context": "c", "kind": "FACTUAL",
		"specificity": 0.9, "time_sensitive": false, "current_events": false, "numeric": true, "reason": "r"}
}

// Failures of an attempt: what is recorded, and whether a later attempt
// follows (retry_at = the attempt's time + RetryBase·2^(n-1)).
func TestAttemptFailures(t *testing.T) {
	server := fakeopenai.APIError{Type: "server_error", Message: "overloaded"}
	for _, tc := range []struct {
		name    string
		attempt int
		steps   []fakeopenai.Step
		key     string
		// types is the trail after attempt_started.
		types     []string
		retryable bool
		retryAt   string
		reason    string
	}{
		{name: "transient provider failure", attempt: 1, steps: []fakeopenai.Step{fakeopenai.Fail(http.StatusInternalServerError, server)},
			types: []string{"exchange_recorded", "failed"}, retryable: true, retryAt: "2026-01-10T12:01:00Z", reason: "server_error: "},
		{name: "transient on the third attempt", attempt: 3, steps: []fakeopenai.Step{fakeopenai.Fail(http.StatusServiceUnavailable, server)},
			types: []string{"exchange_recorded", "failed"}, retryable: true, retryAt: "2026-01-10T12:04:00Z", reason: "server_error: "},
		{name: "transient on the last attempt", attempt: 4, steps: []fakeopenai.Step{fakeopenai.Fail(http.StatusInternalServerError, server)},
			types: []string{"exchange_recorded", "failed"}, reason: "gave up after 4 attempts; last failure server_error: "},
		{name: "wrong key", attempt: 1, key: "sk-wrong",
			types: []string{"exchange_recorded", "failed"}, reason: "unauthorized: "},
		{name: "three unusable answers", attempt: 1, steps: []fakeopenai.Step{
			extractionReply(map[string]any{"text": "x", "context": "c", "kind": "FACTUAL", "specificity": 2.5,
				"time_sensitive": false, "current_events": false, "numeric": false, "reason": "r"}),
			fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text(`{"claims": "none"}`))}}),
			extractionReply(map[string]any{"text": "x\u0000y", "context": "c", "kind": "FACTUAL", "specificity": 0.5,
				"time_sensitive": false, "current_events": false, "numeric": false, "reason": "r"}),
		}, types: []string{"exchange_recorded", "exchange_recorded", "exchange_recorded", "failed"},
			reason: "unusable_answer: no usable extract answer after 3 tries: "},
		{name: "stance refused", attempt: 1, steps: []fakeopenai.Step{extractionReply(towerClaim()),
			fakeopenai.Fail(http.StatusBadRequest, fakeopenai.APIError{Type: "invalid_request_error", Message: "no"})},
			types:  []string{"exchange_recorded", "claim_extracted", "claim_triaged", "query_issued", "query_issued", "exchange_recorded", "failed"},
			reason: "bad_request: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			if tc.key != "" {
				b.cfg.InstanceKey = logging.Secret(tc.key)
				b.rebuild()
			}
			b.fake.Enqueue(fakeopenai.Responses, tc.steps...)
			trail := b.runAttempt(t, falsePost, tc.attempt)
			require.Equal(t, append([]string{"attempt_started"}, tc.types...), typesOf(trail))
			failed := trail[len(trail)-1].Payload.(*events.AnalysisFailedV1)
			require.Equal(t, tc.attempt, failed.Attempt)
			require.Equal(t, tc.retryable, failed.Retryable)
			require.Equal(t, tc.retryAt, failed.RetryAt)
			require.True(t, strings.HasPrefix(failed.Reason, tc.reason), failed.Reason)
			for i, ex := range payloadsOf[*events.AnalysisExchangeRecordedV1](trail) {
				require.Equal(t, i, ex.Seq)
			}
		})
	}
}

// The model's unusable answer is asked again at once; the next usable
// answer goes on, every exchange recorded in order.
func TestUnusableAnswerAskedAgain(t *testing.T) {
	b := setup(t)
	b.fake.Enqueue(fakeopenai.Responses, fakeopenai.Reply(fakeopenai.Response{Output: []any{fakeopenai.Message(fakeopenai.Text("not json"))}}))
	trail := b.runAttempt(t, opinionPost, 1)
	ex := payloadsOf[*events.AnalysisExchangeRecordedV1](trail)
	require.Len(t, ex, 2)
	require.Contains(t, ex[0].Error, "invalid_output")
	require.Empty(t, ex[1].Error)
	require.Equal(t, events.LabelOpinion, payloadsOf[*events.AnalysisPostVerdictV1](trail)[0].Label)
}

// No instance key: the attempt fails for good before it starts.
func TestNoCredentials(t *testing.T) {
	b := setup(t)
	b.cfg.InstanceKey = ""
	b.rebuild()
	trail := b.runAttempt(t, falsePost, 1)
	require.Equal(t, []string{"failed"}, typesOf(trail))
	f := trail[0].Payload.(*events.AnalysisFailedV1)
	require.False(t, f.Retryable)
	require.True(t, strings.HasPrefix(f.Reason, "no_credentials: "), f.Reason)
	require.Empty(t, b.fake.Requests())
}

// A request whose text is nothing but NUL and white space (producers
// refuse it; only a hand-made event holds one) fails for good: no model is
// asked about an empty text.
func TestNothingToAnalyse(t *testing.T) {
	b := setup(t)
	trail := b.runAttempt(t, "\x00 \x00\n", 1)
	require.Equal(t, []string{"attempt_started", "failed"}, typesOf(trail))
	f := trail[1].Payload.(*events.AnalysisFailedV1)
	require.False(t, f.Retryable)
	require.Equal(t, "input: verdict: the text must have 1 to 32000 characters", f.Reason)
	require.Empty(t, b.fake.Requests())
}

// The log going away mid-attempt ends the attempt without a failure event
// (there is nowhere to write it): the run stays RUNNING in the state, and
// the next worker records the attempt as lost.
func TestLogAwayMidAttempt(t *testing.T) {
	b := setup(t)
	b.log.failAfter = 3
	req := request(falsePost)
	err := b.w.attempt(context.Background(), Run{AnalysisID: req.AnalysisID, Request: req, Status: events.StatusPending})
	require.ErrorContains(t, err, "the broker is away")
	require.Equal(t, []string{"attempt_started", "exchange_recorded", "claim_extracted", "claim_triaged",
		"claim_extracted", "claim_triaged", "claim_verdict"}, typesOf(b.log.events()), "the first query's append failed")
}

// The same flow through the Chat Completions provider (OpenRouter, LM
// Studio, ...): the fake answers the extraction, stance and summary calls
// there too, and the outcome is the same.
func TestFalsePostChatCompletions(t *testing.T) {
	b := setup(t)
	b.deps.Provider = llm.ChatCompletions{}
	b.deps.Stance = stance.New(llm.ChatCompletions{}, stance.Config{Model: "gpt-test-stance"})
	b.rebuild()
	trail := b.runAttempt(t, falsePost, 1)
	require.Equal(t, "completed", typesOf(trail)[len(trail)-1])
	require.Empty(t, b.fake.RequestsTo(fakeopenai.Responses))
	require.Len(t, b.fake.RequestsTo(fakeopenai.ChatCompletions), 3)
	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Equal(t, events.LabelFalse, post.Label)
	require.Equal(t, llm.ProviderChatCompletions, trail[0].Payload.(*events.AnalysisAttemptStartedV1).Provider)
}

func TestBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second,
		12: 2048 * time.Second, 13: time.Hour, 40: time.Hour, 64: time.Hour} {
		require.Equal(t, want, backoff(time.Second, n), n)
	}
}

const terwilligerPost = "Breaking: Bob Terwilliger is the mayor of Springfield now."

// A false current-events claim whose sources are all over a year old: the
// staleness cap is applied to the claim and the post, both False.
func TestFalseWithStaleSources(t *testing.T) {
	b := setup(t)
	trail := b.runAttempt(t, terwilligerPost, 1)
	v := payloadsOf[*events.AnalysisClaimVerdictV1](trail)[0]
	require.Equal(t, events.EvidenceRefuted, v.Verdict)
	require.Equal(t, []string{verdict.CapStaleSources}, capRules(v.Caps))
	post := payloadsOf[*events.AnalysisPostVerdictV1](trail)[0]
	require.Equal(t, events.LabelFalse, post.Label)
	require.Contains(t, capRules(post.Caps), verdict.CapStaleSources)
	goldenTrail(t, "false_stale", trail)
}

// outputText is the text of a recorded Responses API body (the answer a
// model exchange holds).
func outputText(t *testing.T, raw string) []byte {
	t.Helper()
	var body struct {
		Output []struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &body))
	var text strings.Builder
	for _, o := range body.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				text.WriteString(c.Text)
			}
		}
	}
	return []byte(text.String())
}

// Every decision of an attempt follows from its events alone: the claims
// from the recorded extraction answer, each claim's verdict from its
// triage and assessed sources (the engine and the rubric, at the
// attempt's time), the post's from the claims and the recorded summary
// answer. Nothing needs the provider again.
func TestTrailReproducesFromTheLog(t *testing.T) {
	for _, text := range []string{falsePost, opinionPost, mayorPost, terwilligerPost} {
		b := setup(t)
		trail := b.runAttempt(t, text, 1)
		now := trail[0].Time
		policy, rubric := evidence.DefaultPolicy(), verdict.DefaultRubric()
		var extracted []verdict.Extracted
		var summary verdict.Summary
		triage := map[string]verdict.Extracted{}
		passages := map[string][]evidence.Passage{}
		searched := map[string]bool{}
		var order []string
		var results []verdict.ClaimResult
		var triages []verdict.Extracted
		var fromSearch []evidence.Passage
		for _, ev := range trail {
			switch p := ev.Payload.(type) {
			case *events.AnalysisExchangeRecordedV1:
				var err error
				switch p.Step {
				case StepExtract:
					extracted, err = verdict.DecodeExtraction(outputText(t, p.RawResponse), verdict.MaxClaims)
				case StepVerdict:
					summary, err = verdict.DecodeSummary(outputText(t, p.RawResponse))
				}
				require.NoError(t, err)
			case *events.AnalysisClaimExtractedV1:
				require.Equal(t, extracted[p.Index].Text, p.Text)
				order = append(order, p.ClaimID)
			case *events.AnalysisClaimTriagedV1:
				e := extracted[len(order)-1]
				require.Equal(t, e.Kind, p.Kind)
				triage[p.ClaimID] = e
			case *events.AnalysisQueryIssuedV1:
				searched[p.ClaimID] = searched[p.ClaimID] || p.Error == ""
			case *events.AnalysisSourceAssessedV1:
				s := p.Source
				ps := evidence.Passage{URL: s.URL, Domain: s.Domain, Tier: s.Tier, Rule: s.Rule, Title: s.Title, Snippet: s.Snippet,
					Origin: s.Origin, Stance: evidence.Stance{Entail: s.Entail, Contradict: s.Contradict, Neutral: s.Neutral},
					Num: evidence.Num(s.Num), Recency: s.Recency}
				if s.PublishedAt != "" {
					ps.PublishedAt, _ = time.Parse(time.RFC3339, s.PublishedAt)
				}
				passages[p.ClaimID] = append(passages[p.ClaimID], ps)
				fromSearch = append(fromSearch, ps)
			case *events.AnalysisClaimVerdictV1:
				var as evidence.Assessment
				if searched[p.ClaimID] {
					as = policy.Assess(true, passages[p.ClaimID])
				}
				res := rubric.Claim(verdict.ClaimInput{Triage: triage[p.ClaimID], Assessment: as, Passages: passages[p.ClaimID],
					Searched: searched[p.ClaimID], Now: now})
				require.Equal(t, []any{res.TruthPercent, res.Confidence, caps(res.Caps), res.Label, res.Band, as.Verdict, as.Score},
					[]any{p.TruthPercent, p.Confidence, p.Caps, p.Label, p.Band, p.Verdict, p.Score}, text)
			case *events.AnalysisPostVerdictV1:
				for _, id := range order {
					var as evidence.Assessment
					if searched[id] {
						as = policy.Assess(true, passages[id])
					}
					results = append(results, rubric.Claim(verdict.ClaimInput{Triage: triage[id], Assessment: as,
						Passages: passages[id], Searched: searched[id], Now: now}))
					triages = append(triages, triage[id])
				}
				post := rubric.Post(verdict.PostInput{Claims: results, Triage: triages, Summary: summary, SearchResults: fromSearch,
					Registry: func(u string) (string, int, bool) {
						m, err := sources.Default().Lookup(u)
						return m.Domain, m.Tier, err == nil
					}})
				require.Equal(t, []any{post.TruthPercent, post.Confidence, caps(post.Caps), post.Label, post.Band, post.Summary,
					post.Caveats, post.Sources}, []any{p.TruthPercent, p.Confidence, p.Caps, p.Label, p.Band, p.Summary, p.Caveats, p.Sources}, text)
			}
		}
		require.NotEmpty(t, results, text)
	}
}

// The prompt version of analysis ids names the three prompts an analysis
// runs.
func TestPromptVersion(t *testing.T) {
	v, err := PromptVersion(nil)
	require.NoError(t, err)
	require.Equal(t, "verdict-extract@v1+verdict-summary@v1+stance@v1", v)
}
