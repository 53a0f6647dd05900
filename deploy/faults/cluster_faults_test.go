//go:build linux

package faults_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// Load and fault schedule. The rates are what the two-core CI machine holds
// next to three brokers, four errata processes and the stores.
var (
	loadRates     = [numKinds]float64{kindRegister: 4, kindView: 12, kindInvestigate: 1}
	warmUp        = 8 * time.Second
	steadyBetween = 6 * time.Second // load without a fault between two faults
	brokerDown    = 8 * time.Second // a killed broker stays down this long
	processDown   = 3 * time.Second // a killed worker or API process stays down this long
	faultRounds   = 3               // each round kills a broker, then a worker, then an API process
	testBudget    = 14 * time.Minute
)

// TestClusterFaults runs a three-broker cluster (replication factor 3,
// min.insync.replicas 2), two `errata serve` and two `errata worker`
// processes, and a steady mixed load through both APIs (registrations,
// views, investigations against the scripted provider). It kills with
// SIGKILL, one at a time and three times each, a broker (the leader of a
// partition of the posts topic), a worker and an API process, and restarts
// each. Then: every acknowledged request's events are in the log exactly
// once, no event is in it twice, consumer lag returns to 0, no
// investigation ran twice, and every read model equals a fresh replay
// (errata verify --projection all). It prints the load held, the faults and
// what was lost or duplicated.
func TestClusterFaults(t *testing.T) {
	if os.Getenv("ERRATA_CLUSTER_FAULT_TESTS") != "1" {
		t.Skip("starts a three-broker Kafka cluster and kills processes for minutes; set ERRATA_CLUSTER_FAULT_TESTS=1 (make test-faults)")
	}
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), testBudget)
	defer cancel()
	root := repoRoot(t)
	bin := buildErrata(t, root)

	// Stores of the run: its own database, search indices, ClickHouse
	// database, and topics on its own cluster.
	dbURL := testenv.Postgres(t)
	indexPrefix := testenv.SearchIndexPrefix(t)
	chDatabase := testenv.ClickHouseDatabaseName(t)
	cl := startCluster(t, ctx, root)
	t.Logf("cluster up on %s in %s", strings.Join(cl.brokers(), ","), time.Since(began).Round(time.Millisecond))

	run := testenv.Suffix()
	prefix := "faults." + run + "."
	artifacts := filepath.Join(cl.dir, "logs") // kept on failure, removed with the cluster
	require.NoError(t, os.MkdirAll(artifacts, 0o755))

	// The scripted provider: one rule per planned post, so that its log
	// counts the provider calls of each post.
	posts := planPosts(run, 2000)
	script := fakeopenai.Script{APIKey: "sk-faults-" + run}
	approved := true
	// Two tier-2 wire services refute each claim, so the strict evidence
	// policy publishes it as the validator approved it.
	refutes := &fakeopenai.ScriptStance{Entail: 0.03, Contradict: 0.92, Neutral: 0.05}
	for _, p := range posts {
		script.Rules = append(script.Rules, fakeopenai.ScriptRule{Name: p.Rule, Match: p.Claim, Claims: []fakeopenai.ScriptClaim{{
			Text: p.Claim, Context: p.Text, Summary: "Scripted claim of the cluster fault test.",
			Reasoning: "Scripted test data.", Approved: &approved,
			Sources: []fakeopenai.ScriptSource{
				{URL: "https://www.reuters.com/errata-faults", Title: "Scripted source", Snippet: "Scripted snippet.", Stance: refutes},
				{URL: "https://apnews.com/errata-faults", Title: "Second scripted source", Snippet: "Second scripted snippet.", Stance: refutes},
			},
		}}})
	}
	fake, err := fakeopenai.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(fake.Close)
	providerLog := &lockedBuffer{}
	fake.Play(&script, providerLog)

	keyring := make([]byte, 32)
	_, _ = rand.Read(keyring)
	hashSecret := make([]byte, 32)
	_, _ = rand.Read(hashSecret)
	env := []string{
		"ERRATA_KAFKA_BROKERS=" + strings.Join(cl.brokers(), ","),
		"ERRATA_KAFKA_TOPIC_PREFIX=" + prefix,
		"ERRATA_KAFKA_PARTITIONS=3",
		"ERRATA_KAFKA_REPLICATION_FACTOR=3",
		"ERRATA_KAFKA_MIN_INSYNC_REPLICAS=2",
		"ERRATA_KAFKA_SESSION_TIMEOUT=6s",
		"ERRATA_DATABASE_URL=" + dbURL,
		"ERRATA_SEARCH_INDEX_PREFIX=" + indexPrefix,
		"ERRATA_CLICKHOUSE_DATABASE=" + chDatabase,
		"ERRATA_METRICS_LINGER=100ms",
		"ERRATA_SERVER_VERIFICATION=false",
		"ERRATA_HASH_SECRET=" + hex.EncodeToString(hashSecret),
		"ERRATA_KEYSTORE_KEYS=faults:" + base64.StdEncoding.EncodeToString(keyring),
		"ERRATA_KEYSTORE_CURRENT_KEY_ID=",
		"ERRATA_BLOBSTORE_URL=" + filepath.Join(cl.dir, "blobs"),
		"ERRATA_INVESTIGATION_IMAGES=false",
		"ERRATA_SEARCH_PROVIDER=",
		"ERRATA_VIEW_IP_RANGE_DAILY_CAP=100000",
		"ERRATA_RATE_LIMIT=off",
		"OPENAI_BASE_URL=" + fake.URL,
		"OPENAI_API_KEY=" + script.APIKey,
		"ERRATA_INVESTIGATION_RETRY_BASE=1s",
		"ERRATA_WORK_LEASE_TTL=5s",
		"ERRATA_READ_YOUR_WRITES_TIMEOUT=10s",
		"ERRATA_LOG_FORMAT=text",
	}
	for _, sub := range [][]string{{"topics"}, {"migrate"}} {
		_, err := runErrata(ctx, bin, env, sub...)
		require.NoError(t, err)
	}
	reg := events.NewCatalogRegistry()
	topics := events.Topics{Prefix: prefix}
	var topicNames []string
	for _, tp := range append(reg.Topics(), events.TopicDeadLetter) {
		topicNames = append(topicNames, topics.Name(tp))
	}
	postsTopic := topics.Name(events.TopicPosts)
	// errata topics made every topic with 3 replicas, all in sync, and min.insync.replicas 2.
	require.NoError(t, cl.waitPartitions(ctx, 30*time.Second, topicNames, func(p partitionState) bool { return len(p.ISR) == 3 }))
	confs, err := cl.adm.DescribeTopicConfigs(ctx, topicNames...)
	require.NoError(t, err)
	require.Len(t, confs, len(topicNames))
	for _, rc := range confs {
		require.NoError(t, rc.Err, rc.Name)
		minISR := ""
		for _, c := range rc.Configs {
			if c.Key == "min.insync.replicas" && c.Value != nil {
				minISR = *c.Value
			}
		}
		require.Equal(t, "2", minISR, rc.Name)
	}

	reader, err := newLogReader(cl.brokers(), topicNames)
	require.NoError(t, err)
	readerCtx, stopReader := context.WithCancel(ctx)
	go reader.run(readerCtx)
	t.Cleanup(func() { stopReader(); <-reader.done; reader.close() })

	// Two workers and two APIs.
	var procs []*proc
	newProc := func(name string, args []string, extra ...string) *proc {
		p := &proc{name: name, bin: bin, args: args, env: append(slices.Clone(env), extra...),
			logPath: filepath.Join(artifacts, "errata-"+name+".log")}
		procs = append(procs, p)
		return p
	}
	var workers, apis []*proc
	for i := 1; i <= 2; i++ {
		addr := freeAddr(t)
		w := newProc(fmt.Sprintf("worker-%d", i), []string{"worker"}, "ERRATA_WORKER_HTTP_ADDR="+addr, fmt.Sprintf("ERRATA_WORKER_ID=faults-worker-%d", i))
		w.health = "http://" + addr
		workers = append(workers, w)
	}
	for i := 1; i <= 2; i++ {
		addr := freeAddr(t)
		a := newProc(fmt.Sprintf("serve-%d", i), []string{"serve"}, "ERRATA_HTTP_ADDR="+addr)
		a.health = "http://" + addr
		apis = append(apis, a)
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.signal(syscall.SIGKILL, 10*time.Second)
		}
	})
	for _, p := range procs {
		require.NoError(t, p.start())
	}
	for _, p := range procs {
		require.NoError(t, p.waitHealthy(ctx, 90*time.Second))
	}
	apiKey, err := runErrata(ctx, bin, env, "apikey", "add", "--label", "cluster fault test")
	require.NoError(t, err)
	apiKey = strings.TrimSpace(apiKey)
	t.Logf("4 errata processes up, %s after the start", time.Since(began).Round(time.Millisecond))

	// The load, and the faults while it runs.
	l := newLoad([]string{apis[0].health, apis[1].health}, apiKey, posts, loadRates)
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() { defer close(loadDone); l.run(loadCtx) }()
	var faults []faultWindow
	since := func() string { return fmt.Sprintf("+%5.1fs", time.Since(l.started).Seconds()) }
	sleep := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	restart := func(p *proc) string {
		require.NoError(t, p.start())
		t0 := time.Now()
		require.NoError(t, p.waitHealthy(ctx, 90*time.Second))
		return time.Since(t0).Round(time.Millisecond).String()
	}
	sleep(warmUp)
	for round := 0; round < faultRounds; round++ {
		// A broker: the leader of one partition of the posts topic.
		all := append(slices.Clone(topicNames), "__consumer_offsets")
		ps, err := cl.partitions(ctx, all...)
		require.NoError(t, err)
		var target int32 = -1
		for _, p := range ps {
			if p.Topic == postsTopic && p.Partition == int32(round%3) {
				target = p.Leader
			}
		}
		require.NotEqual(t, int32(-1), target)
		var led []string
		for _, p := range ps {
			if p.Leader == target {
				led = append(led, fmt.Sprintf("%s/%d", strings.TrimPrefix(p.Topic, prefix), p.Partition))
			}
		}
		at := since()
		out, err := cl.run(ctx, "kill", fmt.Sprint(target))
		require.NoError(t, err, out)
		killed := time.Now()
		require.NoError(t, cl.waitPartitions(ctx, 60*time.Second, all, func(p partitionState) bool {
			return p.Leader >= 0 && p.Leader != target && !slices.Contains(p.ISR, target)
		}), "after broker %d was killed", target)
		failover := time.Since(killed)
		sleep(brokerDown - time.Since(killed))
		upAt := time.Now()
		out, err = cl.run(ctx, "up", fmt.Sprint(target))
		require.NoError(t, err, out)
		restarted := time.Now()
		require.NoError(t, cl.waitPartitions(ctx, 120*time.Second, all, func(p partitionState) bool { return len(p.ISR) == 3 }),
			"after broker %d restarted", target)
		faults = append(faults, faultWindow{from: killed, to: time.Now(), what: fmt.Sprintf("%s kill -9 broker %d, leader of %d partitions (%s): leaders and ISR moved in %s; restarted after %s (healthy %s after its start), every ISR full again %s later",
			at, target, len(led), strings.Join(led, " "), failover.Round(time.Millisecond), upAt.Sub(killed).Round(time.Millisecond),
			restarted.Sub(upAt).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))})
		sleep(steadyBetween)

		// A worker.
		w := workers[round%2]
		at, from := since(), time.Now()
		pid := w.kill9()
		sleep(processDown)
		took := restart(w)
		faults = append(faults, faultWindow{from: from, to: time.Now(),
			what: fmt.Sprintf("%s kill -9 %s (pid %d): restarted after %s, healthy %s later", at, w.name, pid, processDown, took)})
		sleep(steadyBetween)

		// An API process.
		a := apis[round%2]
		at, from = since(), time.Now()
		pid = a.kill9()
		sleep(processDown)
		took = restart(a)
		faults = append(faults, faultWindow{from: from, to: time.Now(),
			what: fmt.Sprintf("%s kill -9 %s (pid %d): restarted after %s, healthy %s later", at, a.name, pid, processDown, took)})
		sleep(steadyBetween)
	}
	stopLoad()
	<-loadDone
	require.NoError(t, ctx.Err(), "the test ran out of its %s budget", testBudget)
	loadFor := l.stopped.Sub(l.started)
	reqs := l.snapshot()

	// Every investigation ends: the acknowledged ones, and those of
	// unacknowledged requests whose event reached the log all the same.
	// Then every group catches up.
	drain := time.Now()
	testenv.Eventually(t, 4*time.Minute, func() (bool, string) {
		pending := map[string]bool{}
		for _, r := range reqs {
			if r.Kind == kindInvestigate && r.Acked {
				pending[r.InvID] = true
			}
		}
		recs := reader.snapshot()
		for _, rec := range recs {
			if _, ok := rec.Event.Payload.(*events.InvestigationRequestedV1); ok {
				pending[rec.Event.Subject] = true
			}
		}
		all := len(pending)
		for _, rec := range recs {
			switch rec.Event.Payload.(type) {
			case *events.InvestigationCompletedV1, *events.InvestigationFailedV1:
				delete(pending, rec.Event.Subject)
			}
		}
		return len(pending) == 0, fmt.Sprintf("%d of %d investigations have not ended", len(pending), all)
	})
	var lags map[string]int64
	zeroTwice := 0
	testenv.Eventually(t, 3*time.Minute, func() (bool, string) {
		var err error
		lags, err = groupLag(ctx, cl.adm, prefix)
		if err != nil {
			zeroTwice = 0
			return false, err.Error()
		}
		var total int64
		for _, n := range lags {
			total += n
		}
		if total != 0 {
			zeroTwice = 0
			return false, fmt.Sprintf("lag %v", lags)
		}
		zeroTwice++
		time.Sleep(time.Second)
		return zeroTwice >= 2, "lag 0 once"
	})
	drained := time.Since(drain)
	require.NoError(t, reader.waitCaughtUp(ctx, cl.adm, time.Minute))
	records := reader.snapshot()

	// Exact counts.
	res := check(prefix, reqs, records, posts, parseProviderLog(t, providerLog.String()))

	// Every read model equals a replay of the log.
	verifyStart := time.Now()
	verifyOut, verifyErr := runErrata(ctx, bin, env, "verify", "--projection", "all")
	verifyTook := time.Since(verifyStart)

	// The processes stop cleanly.
	var unclean []string
	for _, p := range procs {
		if _, clean := p.signal(syscall.SIGTERM, 30*time.Second); !clean {
			unclean = append(unclean, p.name)
		}
	}
	var unexpected []string
	for _, p := range procs {
		unexpected = append(unexpected, p.unexpectedExits()...)
	}

	// The report.
	t.Logf("=== cluster fault test: 3 brokers (replication factor 3, min.insync.replicas 2), 2 errata serve, 2 errata worker, %d partitions per topic", 3)
	t.Logf("load held for %s through both APIs (acknowledged/sent, acknowledged per second, latency of acknowledged p50/p99/max):", loadFor.Round(100*time.Millisecond))
	for k := kind(0); k < numKinds; k++ {
		s := stats(reqs, k)
		t.Logf("  %-24s %5d/%-5d %6.2f/s   %s / %s / %s", k, s.acked, s.sent, float64(s.acked)/loadFor.Seconds(),
			s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond), s.maxLat.Round(time.Millisecond))
		for _, f := range sortedKeys(s.failures) {
			t.Logf("      not acknowledged: %d × %s", s.failures[f], f)
		}
	}
	perAPI := [2]int{}
	for _, r := range reqs {
		if r.Acked {
			perAPI[r.API]++
		}
	}
	t.Logf("  acknowledged by serve-1: %d, by serve-2: %d", perAPI[0], perAPI[1])
	t.Logf("faults injected (%d):", len(faults))
	for i, f := range faults {
		t.Logf("  %d %s", i+1, f.what)
		t.Logf("      until recovered: %s", f.held(reqs))
	}
	for _, line := range res.report {
		t.Logf("%s", line)
	}
	t.Logf("consumer lag: 0 in %d groups (%s), %s after the load stopped", len(lags), strings.Join(sortedKeys(lags), ", "), drained.Round(100*time.Millisecond))
	t.Logf("errata verify --projection all (%s): %s", verifyTook.Round(100*time.Millisecond), verifyResult(verifyOut, verifyErr))
	t.Logf("total duration %s", time.Since(began).Round(time.Second))

	require.Empty(t, unexpected, "processes exited on their own")
	require.Empty(t, res.problems, "lost, duplicated or unexplained events")
	require.NoError(t, verifyErr, "errata verify --projection all:\n%s", verifyOut)
	require.Empty(t, unclean, "processes that did not stop cleanly on SIGTERM")
	for g, n := range lags {
		require.Zero(t, n, g)
	}
	require.GreaterOrEqual(t, len(lags), 4, "consumer groups: %v", lags)
}

// verifyResult summarises errata verify's output: the verdict of each
// projection and how many tables it compared.
// faultWindow is one fault, from the kill until the process or broker was
// back (a broker: every ISR full again).
type faultWindow struct {
	what     string
	from, to time.Time
}

// held summarises the requests started while the fault lasted.
func (f faultWindow) held(reqs []*request) string {
	var sent, acked [numKinds]int
	var maxLat time.Duration
	for _, r := range reqs {
		if r.Start.Before(f.from) || r.Start.After(f.to) {
			continue
		}
		sent[r.Kind]++
		if r.Acked {
			acked[r.Kind]++
			maxLat = max(maxLat, r.Duration)
		}
	}
	secs := f.to.Sub(f.from).Seconds()
	var parts []string
	for k := kind(0); k < numKinds; k++ {
		parts = append(parts, fmt.Sprintf("%d/%d %s", acked[k], sent[k], [...]string{"registrations", "views", "investigations"}[k]))
	}
	total := acked[kindRegister] + acked[kindView] + acked[kindInvestigate]
	return fmt.Sprintf("%.1fs, acknowledged/sent %s (%.1f acknowledged/s), slowest acknowledged %s",
		secs, strings.Join(parts, ", "), float64(total)/secs, maxLat.Round(time.Millisecond))
}

func verifyResult(out string, err error) string {
	var verdicts []string
	tables := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasSuffix(line, ": identical") || strings.Contains(line, ": DIFFERENT"):
			verdicts = append(verdicts, line)
		case strings.HasPrefix(line, "  ") && strings.Contains(line, " rows "):
			tables++
		}
	}
	s := fmt.Sprintf("%s (%d tables compared)", strings.Join(verdicts, ", "), tables)
	if err != nil {
		return "FAILED: " + err.Error() + "; " + s
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lockedBuffer collects the provider's request log.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func parseProviderLog(t *testing.T, s string) []fakeopenai.ScriptLogEntry {
	t.Helper()
	var out []fakeopenai.ScriptLogEntry
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		var e fakeopenai.ScriptLogEntry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		out = append(out, e)
	}
	return out
}

// result is what the log says about the requests.
type result struct {
	report   []string
	problems []string
}

// check compares the acknowledged requests with the log: each one's events
// exactly once; unacknowledged ones at most once; no event twice; every
// request-made event explained by a request; each investigation requested,
// snapshotted, completed once, each attempt started once, each claim
// validated once, and one provider call per attempt at most.
func check(prefix string, reqs []*request, records []logged, posts []post, provider []fakeopenai.ScriptLogEntry) result {
	var res result
	problem := func(format string, args ...any) {
		if len(res.problems) < 40 {
			res.problems = append(res.problems, fmt.Sprintf(format, args...))
		}
	}
	byID := map[string][]logged{}
	byCorr := map[string][]logged{} // request-made events by correlation id
	perTopic := map[string]int{}
	deadLetters, undecodable := 0, 0
	type invFacts struct {
		requested, snapshots, completed, failed int
		attempts                                map[[2]int]int
		validations                             map[string]int
		versions                                map[string]bool
	}
	invs := map[string]*invFacts{}
	inv := func(id string) *invFacts {
		f := invs[id]
		if f == nil {
			f = &invFacts{attempts: map[[2]int]int{}, validations: map[string]int{}, versions: map[string]bool{}}
			invs[id] = f
		}
		return f
	}
	for _, rec := range records {
		perTopic[strings.TrimPrefix(rec.Topic, prefix)]++
		if strings.HasSuffix(rec.Topic, "."+string(events.TopicDeadLetter)) {
			deadLetters++
			problem("dead letter at %s/%d@%d", rec.Topic, rec.Partition, rec.Offset)
			continue
		}
		if rec.Err != nil {
			undecodable++
			problem("undecodable record %s/%d@%d: %v", rec.Topic, rec.Partition, rec.Offset, rec.Err)
			continue
		}
		ev := rec.Event
		byID[ev.ID] = append(byID[ev.ID], rec)
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1, *events.PostViewRecordedV2:
			byCorr[ev.CorrelationID] = append(byCorr[ev.CorrelationID], rec)
		case *events.InvestigationRequestedV1:
			byCorr[ev.CorrelationID] = append(byCorr[ev.CorrelationID], rec)
			f := inv(ev.Subject)
			f.requested++
			f.versions[p.PostVersionID] = true
		case *events.InvestigationInputSnapshottedV1:
			inv(ev.Subject).snapshots++
		case *events.InvestigationAttemptStartedV1:
			inv(ev.Subject).attempts[[2]int{p.Series, p.Attempt}]++
		case *events.InvestigationClaimValidatedV1:
			inv(ev.Subject).validations[p.SubmissionID]++
		case *events.InvestigationCompletedV1:
			inv(ev.Subject).completed++
		case *events.InvestigationFailedV1:
			inv(ev.Subject).failed++
		}
	}
	duplicatedIDs := 0
	for id, recs := range byID {
		if len(recs) > 1 {
			duplicatedIDs++
			problem("event %s (%s) is in the log %d times", id, recs[0].Event.Type(), len(recs))
		}
	}

	// Requests against the log.
	wantType := map[kind]string{kindRegister: events.TypePostVersionRegisteredV1, kindView: events.TypePostViewRecordedV2,
		kindInvestigate: events.TypeInvestigationRequestedV1}
	var lost, duplicated, landedUnacked, dupUnacked [numKinds]int
	var acked, unacked [numKinds]int
	ours := map[string]bool{}
	for _, r := range reqs {
		ours[r.ID] = true
		recs := byCorr[r.ID]
		n := 0
		for _, rec := range recs {
			if rec.Event.Type() == wantType[r.Kind] {
				n++
			}
		}
		if n != len(recs) {
			problem("%s %s: %d events of other types carry its correlation id", r.Kind, r.ID, len(recs)-n)
		}
		if !r.Acked {
			unacked[r.Kind]++
			if n == 1 {
				landedUnacked[r.Kind]++
			}
			if n > 1 {
				dupUnacked[r.Kind]++
				problem("unacknowledged %s %s (%s): %d events", r.Kind, r.ID, r.Failure, n)
			}
			continue
		}
		acked[r.Kind]++
		switch {
		case n == 0:
			lost[r.Kind]++
			problem("acknowledged %s %s (post %d, version %s, via serve-%d at %s): no event", r.Kind, r.ID, r.Post, r.VersionID, r.API+1,
				r.Start.Format("15:04:05.000"))
			continue
		case n > 1:
			duplicated[r.Kind]++
			problem("acknowledged %s %s: %d events", r.Kind, r.ID, n)
		}
		ev := recs[0].Event
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			if p.PostVersionID != r.VersionID || p.ExternalID != posts[r.Post].ExternalID {
				problem("registration %s answered version %s, the log has %s", r.ID, r.VersionID, p.PostVersionID)
			}
		case *events.PostViewRecordedV2:
			if p.PostVersionID != r.VersionID {
				problem("view %s of version %s is recorded for %s", r.ID, r.VersionID, p.PostVersionID)
			}
		case *events.InvestigationRequestedV1:
			if ev.Subject != r.InvID || p.PostVersionID != r.VersionID {
				problem("investigateNow %s answered %s for version %s, the log has %s for %s", r.ID, r.InvID, r.VersionID, ev.Subject, p.PostVersionID)
			}
		}
	}
	unexplained := 0
	for corr, recs := range byCorr {
		if !ours[corr] {
			unexplained += len(recs)
			problem("%d %s events with correlation id %q that no request of the load had", len(recs), recs[0].Event.Type(), corr)
		}
	}

	// Investigations: those of acknowledged requests, and those of
	// unacknowledged ones whose event landed (they run like any other).
	postOf := map[string]int{}
	ackedInv := 0
	reqByID := map[string]*request{}
	for _, r := range reqs {
		reqByID[r.ID] = r
		if r.Kind == kindInvestigate && r.Acked {
			postOf[r.InvID] = r.Post
			ackedInv++
		}
	}
	for corr, recs := range byCorr {
		r := reqByID[corr]
		if r == nil || r.Kind != kindInvestigate || r.Acked {
			continue
		}
		for _, rec := range recs {
			if _, ok := rec.Event.Payload.(*events.InvestigationRequestedV1); ok {
				postOf[rec.Event.Subject] = r.Post
			}
		}
	}
	calls := map[string]int{}
	validateCalls := 0
	for _, e := range provider {
		switch e.Kind {
		case "investigate":
			calls[e.Rule]++
		case "validate":
			validateCalls++
		}
	}
	resumed, attemptsTotal, callsTotal, validations := 0, 0, 0, 0
	for id, f := range invs {
		p, ok := postOf[id]
		if !ok {
			problem("investigation %s is in the log but no investigateNow of the load asked for it (requested %d times)", id, f.requested)
			continue
		}
		if f.requested != 1 || f.snapshots != 1 || f.completed != 1 || f.failed != 0 || len(f.versions) != 1 {
			problem("investigation %s (post %d): requested %d, input snapshots %d, completed %d, failed %d, versions %d; want 1, 1, 1, 0, 1",
				id, p, f.requested, f.snapshots, f.completed, f.failed, len(f.versions))
		}
		for a, n := range f.attempts {
			if n != 1 {
				problem("investigation %s: attempt %d of series %d started %d times", id, a[1], a[0], n)
			}
		}
		for s, n := range f.validations {
			if n != 1 {
				problem("investigation %s: claim submission %s validated %d times", id, s, n)
			}
		}
		validations += len(f.validations)
		c := calls[posts[p].Rule]
		attemptsTotal += len(f.attempts)
		callsTotal += c
		if len(f.attempts) > 1 {
			resumed++
		}
		// One provider call per attempt; fewer only when a worker died
		// between starting an attempt and calling the provider.
		if c < 1 || c > len(f.attempts) {
			problem("investigation %s (post %d): %d provider calls for %d attempts", id, p, c, len(f.attempts))
		}
	}
	for id := range postOf {
		if invs[id] == nil {
			problem("acknowledged investigation %s is not in the log", id)
		}
	}
	for rule, n := range calls {
		found := false
		for id, p := range postOf {
			if posts[p].Rule == rule && invs[id] != nil {
				found = true
			}
		}
		if !found {
			problem("the provider was called %d times for %s, which no investigation asked for", n, rule)
		}
	}

	res.report = append(res.report,
		fmt.Sprintf("log: %d records (%s); event ids in the log twice: %d; dead letters: %d; undecodable: %d",
			len(records), topicCounts(perTopic), duplicatedIDs, deadLetters, undecodable))
	for k := kind(0); k < numKinds; k++ {
		res.report = append(res.report, fmt.Sprintf("  %-24s acknowledged %5d: lost %d, duplicated %d; not acknowledged %4d: in the log once %d, twice or more %d",
			k, acked[k], lost[k], duplicated[k], unacked[k], landedUnacked[k], dupUnacked[k]))
	}
	res.report = append(res.report,
		fmt.Sprintf("  request-made events no request explains: %d", unexplained),
		fmt.Sprintf("investigations: %d acknowledged + %d of unacknowledged requests that landed = %d in the log, each requested, snapshotted and completed exactly once, none failed; %d attempts (%d investigations resumed in a second attempt after a killed worker), each started once; provider stage-1 calls %d (one per post at most per attempt); %d claims validated once each (%d validator calls)",
			ackedInv, len(postOf)-ackedInv, len(invs), attemptsTotal, resumed, callsTotal, validations, validateCalls))
	return res
}

func topicCounts(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
