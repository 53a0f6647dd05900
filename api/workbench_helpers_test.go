package api

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/analyses"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// testPromptVersion is the analyses' prompt version in these tests.
const testPromptVersion = "verdict-test-v1"

// wbGuard bounds waits on the in-process Kafka and the streams, so a bug
// fails a test instead of hanging it; never what a test asserts on.
const wbGuard = 20 * time.Second

// fakeAnalyses serves analyses and version sources from maps.
type fakeAnalyses struct {
	mu       sync.Mutex
	jobs     map[string]serving.Analysis
	versions map[string]serving.Source
}

func (f *fakeAnalyses) Analysis(_ context.Context, id string) (serving.Analysis, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.jobs[id]
	if !ok {
		return serving.Analysis{}, serving.ErrNotFound
	}
	return a, nil
}

func (f *fakeAnalyses) Source(_ context.Context, id string) (serving.Source, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.versions[id]
	if !ok {
		return serving.Source{}, serving.ErrNotFound
	}
	return s, nil
}

func (f *fakeAnalyses) set(a serving.Analysis) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.jobs[a.ID] = a
}

// bench is the API with the workbench enabled over an in-process
// Kafka (kfake) holding the analyses topic, a page server on loopback the
// SSRF-safe client may reach, and fake read models.
type bench struct {
	server   *Server
	reader   *fakeReader
	analyses *fakeAnalyses
	appender *producers.Appender
	registry *events.Registry
	topic    string
	brokers  []string
	admin    *kadm.Client
	pages    *httptest.Server
	// pageURL is the page server's base URL (http://127.0.0.1:port).
	pageURL string
	service *analyses.Service
}

type benchOpts struct {
	submitLimit, keySubmitLimit *ratelimit.Limiter
	streamsPerClient            int
	heartbeat                   time.Duration
	maxPageBytes                int64
	pages                       http.Handler
}

// testResolver maps test host names to addresses; anything else does not
// exist. No lookup leaves the process.
type testResolver map[string][]netip.Addr

func (r testResolver) LookupNetIP(_ context.Context, _ string, host string) ([]netip.Addr, error) {
	if a, ok := r[strings.ToLower(host)]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func newBench(t testing.TB, o benchOpts) *bench {
	t.Helper()
	topics := events.Topics{Prefix: "t."}
	topic := topics.Name(events.TopicAnalyses)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, topic))
	require.NoError(t, err)
	t.Cleanup(cluster.Close)
	brokers := cluster.ListenAddrs()
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	adminClient, err := kafka.NewClient(brokers)
	require.NoError(t, err)
	t.Cleanup(adminClient.Close)
	registry := events.NewCatalogRegistry()
	appender := producers.NewAppender(producer, registry, topics, nil)
	svc, err := analyses.New(appender, testPromptVersion)
	require.NoError(t, err)

	handler := o.pages
	if handler == nil {
		handler = http.NotFoundHandler()
	}
	pages := httptest.NewServer(handler)
	t.Cleanup(pages.Close)
	pageAddr := netip.MustParseAddrPort(strings.TrimPrefix(pages.URL, "http://"))
	client, err := httpsafe.New(
		httpsafe.AllowLoopbackAddrsForTests(pageAddr),
		httpsafe.WithResolver(testResolver{
			// Names of the page server (an IDN among them), and names of
			// private networks.
			"pages.test":         {pageAddr.Addr()},
			"xn--bcher-kva.test": {pageAddr.Addr()},
			"intranet.test":      {netip.MustParseAddr("192.168.1.10")},
			"metadata.test":      {netip.MustParseAddr("169.254.169.254")},
			"rebind.test":        {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")},
			// A public address: only ever named with a port the client
			// refuses before dialling.
			"public.test": {netip.MustParseAddr("93.184.216.34")},
		}),
		httpsafe.WithTimeout(10*time.Second),
	)
	require.NoError(t, err)
	follower, err := kafka.NewKeyReader(brokers)
	require.NoError(t, err)
	t.Cleanup(follower.Close)

	fa := &fakeAnalyses{jobs: map[string]serving.Analysis{}, versions: map[string]serving.Source{}}
	cfg := Config{MinExtensionVersion: "0.2.0", ReadYourWritesTimeout: time.Second, OpenAIBaseURL: unreachableOpenAI}
	reader := newFakeReader()
	s, err := New(cfg, &fakeIngest{registered: fixedRegistration}, reader, fakeWatermark{},
		ingest.NewHasher(testHashSecret), testLogger(t), WithAnalyses(Analyses{
			Requests: svc, Pages: analyses.NewPageFetcher(client, 10*time.Second, o.maxPageBytes),
			Reader: fa, Versions: fa, Log: follower, Topic: topic, Registry: registry,
			SubmitLimit: o.submitLimit, KeySubmitLimit: o.keySubmitLimit,
			StreamsPerClient: o.streamsPerClient, Heartbeat: o.heartbeat,
		}))
	require.NoError(t, err)
	return &bench{server: s, reader: reader, analyses: fa, appender: appender, registry: registry, topic: topic,
		brokers: brokers, admin: kadm.NewClient(adminClient), pages: pages, pageURL: pages.URL, service: svc}
}

// records counts the records on the analyses topic.
func (w *bench) records(t *testing.T) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wbGuard)
	defer cancel()
	ends, err := w.admin.ListEndOffsets(ctx, w.topic)
	require.NoError(t, err)
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		require.NoError(t, o.Err)
		n += o.Offset
	})
	return n
}

// requests decodes every analysis.requested.v1 on the topic, in no
// particular order across partitions.
func (w *bench) requests(t *testing.T) []*events.AnalysisRequestedV1 {
	t.Helper()
	var out []*events.AnalysisRequestedV1
	for _, ev := range w.events(t) {
		if p, ok := ev.Payload.(*events.AnalysisRequestedV1); ok {
			out = append(out, p)
		}
	}
	return out
}

// events decodes every record on the topic.
func (w *bench) events(t *testing.T) []events.Event {
	t.Helper()
	want := w.records(t)
	if want == 0 {
		return nil
	}
	cl, err := kafka.NewClient(w.brokers, kgo.ConsumeTopics(w.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wbGuard)
	defer cancel()
	var out []events.Event
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			ev, err := w.registry.Decode(r.Value)
			require.NoError(t, err)
			out = append(out, ev)
		})
	}
	return out
}

// appendEvents appends analysis events as the analyst would, at times
// from at on, one second apart, and returns their offsets.
func (w *bench) appendEvents(t *testing.T, at time.Time, ps ...events.Payload) []int64 {
	t.Helper()
	return appendAt(t, w.appender, at, ps...)
}

func appendAt(t *testing.T, app *producers.Appender, at time.Time, ps ...events.Payload) []int64 {
	t.Helper()
	var evs []events.Event
	for i, p := range ps {
		ev, err := app.NewEventAt(p, at.Add(time.Duration(i)*time.Second), "", "")
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wbGuard)
	defer cancel()
	pos, err := app.Append(ctx, evs...)
	require.NoError(t, err)
	out := make([]int64, len(pos))
	for i, p := range pos {
		out[i] = p.Offset
	}
	return out
}

// sseEvent is one parsed server-sent event (or comment).
type sseEvent struct {
	id, event, data, comment string
	retry                    string
}

// sseStream is an open event stream.
type sseStream struct {
	resp *http.Response
	r    *bufio.Reader
}

// openStream GETs path on the listening server with headers.
func openStream(t *testing.T, s *Server, path string, headers map[string]string) (*http.Response, *sseStream) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+listen(t, s)+path, nil)
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wbGuard)
	t.Cleanup(cancel)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req.WithContext(ctx))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &sseStream{resp: resp, r: bufio.NewReader(resp.Body)}
}

// next reads one event or comment block; ok is false at the end of the
// stream.
func (s *sseStream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	var ev sseEvent
	var lines int
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			require.Empty(t, line, "a partial line at the end of the stream")
			require.Zero(t, lines, "an unterminated event at the end of the stream")
			return sseEvent{}, false
		}
		require.True(t, strings.HasSuffix(line, "\n"))
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			require.NotZero(t, lines, "an empty event")
			return ev, true
		}
		lines++
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			ev.comment = value
		case "id":
			ev.id = value
		case "event":
			ev.event = value
		case "data":
			require.Empty(t, ev.data, "one data line per event")
			ev.data = value
		case "retry":
			ev.retry = value
		default:
			t.Fatalf("unknown SSE field in %q", line)
		}
	}
}

// nextEvent skips comments and the retry setting.
func (s *sseStream) nextEvent(t *testing.T) (sseEvent, bool) {
	t.Helper()
	for {
		ev, ok := s.next(t)
		if !ok || ev.event != "" || ev.data != "" {
			return ev, ok
		}
	}
}
