package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/audit"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/errata-dev/errata/projections/serving/workload"
)

// poison is one record appended straight to a topic, bypassing the API,
// and the consumer groups (by projector or stage name) that must park it.
type poison struct {
	name    string
	rec     *kgo.Record
	parking []string
}

// TestPoisonNeverStopsTheWorker runs `errata worker` with every projector
// (serving, audit, search, metrics) and both stages, and appends, between
// good events of the same partitions, the records a producer bypassing the
// API can write: NUL characters in the string fields of registrations of
// every platform, a 4,000-character author handle, payloads of a future
// schema version (an unknown version of a type, and a v1 envelope with an
// incompatible payload). The worker never exits; every projector applies
// every good event; the dead-letter topic holds exactly the poison records
// per consumer group (each parks what its store refuses: ClickHouse stores
// NUL, Postgres does not; only serving indexes the handle), which `errata
// deadletters` lists; and `errata replay --projection all` followed by
// `errata verify --projection all` comes out identical.
func TestPoisonNeverStopsTheWorker(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	s := newStack(t, ctx)
	reg := events.NewCatalogRegistry()
	topics := events.Topics{Prefix: s.prefix}
	producer, err := kafka.NewClient(s.brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	defer producer.Close()

	w := workload.Generate(workload.Spec{
		Seed: 13, Posts: 30, ViewsPerPost: 6, Viewers: 8, IPRanges: 3, Days: 2,
		IPRangeDailyCap: 10, Start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
	})
	// Investigations of some versions, each appended as requested and
	// completed together (the stages find it complete and do nothing).
	at := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	n := 0
	newEvent := func(p events.Payload) events.Event {
		n++
		ev, err := reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprint("poison-e2e-", n))).String(),
			Time: at.Add(time.Duration(n) * time.Minute)})
		require.NoError(t, err)
		return ev
	}
	var registrations, views int
	var phases [2][]events.Event
	investigated, claims := 0, 0
	seen := map[string]bool{}
	for i, ev := range w.Events {
		phase := i * 2 / len(w.Events)
		phases[phase] = append(phases[phase], ev)
		switch p := ev.Payload.(type) {
		case *events.PostViewRecordedV1, *events.PostViewRecordedV2:
			views++
		case *events.PostVersionRegisteredV1:
			registrations++
			if seen[p.PostVersionID] || registrations%2 != 1 {
				continue
			}
			seen[p.PostVersionID] = true
			inv := events.InvestigationID(p.PostVersionID)
			done := &events.InvestigationCompletedV1{InvestigationID: inv, PostID: p.PostID, PostVersionID: p.PostVersionID,
				Provenance: p.Provenance, PromptVersion: "investigator-fresh@3", Provider: "openai", Model: "gpt-test",
				Claims: []events.ClaimV1{}, Series: 1, Attempt: 1}
			for k, word := range strings.Fields(p.ContentText)[:investigated%3] {
				done.Claims = append(done.Claims, events.ClaimV1{ID: events.ClaimID(inv, k), Text: word, Context: p.ContentText,
					Summary: "It is wrong.", Reasoning: "Because.", Sources: []events.SourceV1{{URL: "https://example.org/s", Title: "S", Snippet: "s"}}})
			}
			claims += len(done.Claims)
			investigated++
			// Every other one after the poison (its registration is before).
			into := max(phase, investigated%2)
			phases[into] = append(phases[into],
				newEvent(&events.InvestigationRequestedV1{InvestigationID: inv, PostID: p.PostID, PostVersionID: p.PostVersionID,
					Platform: p.Platform, ExternalID: p.ExternalID, VersionHash: p.VersionHash, Source: events.RequestSourceSelector}),
				newEvent(done))
		}
	}
	require.Equal(t, 16, investigated)

	// The poison, built from valid events whose encoded form is then
	// changed as only a producer bypassing the API could.
	const nul = "a\x00b"
	encode := func(p events.Payload) (map[string]json.RawMessage, map[string]any, map[string]string, events.Topic) {
		msg, err := reg.Encode(newEvent(p))
		require.NoError(t, err)
		var env map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(msg.Value, &env))
		dec := json.NewDecoder(bytes.NewReader(env["data"]))
		dec.UseNumber()
		var data map[string]any
		require.NoError(t, dec.Decode(&data))
		return env, data, msg.Headers, msg.Topic
	}
	record := func(env map[string]json.RawMessage, data map[string]any, headers map[string]string, topic events.Topic) *kgo.Record {
		raw, err := json.Marshal(data)
		require.NoError(t, err)
		env["data"] = raw
		value, err := json.Marshal(env)
		require.NoError(t, err)
		rec := &kgo.Record{Topic: topics.Name(topic), Key: []byte(headers[events.HeaderSubject]), Value: value}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range headers {
				if !yield(k) {
					return
				}
			}
		}) {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(headers[k])})
		}
		return rec
	}
	set := func(data map[string]any, value any, path ...string) {
		m := data
		for _, k := range path[:len(path)-1] {
			m = m[k].(map[string]any)
		}
		m[path[len(path)-1]] = value
	}
	registration := func(platform, ext string, author *events.AuthorV1) *events.PostVersionRegisteredV1 {
		text := fmt.Sprintf("Poison post %s says the moon is made of cheese.", ext)
		postID := events.PostID(platform, ext)
		sum := sha256.Sum256([]byte("poison version " + ext))
		vh := hex.EncodeToString(sum[:])
		p := &events.PostVersionRegisteredV1{PostID: postID, PostVersionID: events.PostVersionID(postID, vh), Platform: platform,
			ExternalID: ext, VersionHash: vh, ContentHash: vh, OccurrencesHash: vh, ContentText: text, WordCount: 9,
			Provenance: events.ProvenanceClientFallback, ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{}, Author: author}
		switch platform {
		case events.PlatformX:
			p.URL = "https://x.com/someone/status/" + ext
			p.X = &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: author.PlatformUserID, AuthorDisplayName: author.DisplayName, MediaURLs: []string{}}
		case events.PlatformLessWrong:
			p.URL = "https://www.lesswrong.com/posts/" + ext + "/a-post"
			p.LessWrong = &events.LessWrongMetaV1{Slug: "a-post", Title: "A post", AuthorSlug: "someone", Tags: []string{"ok"}}
		case events.PlatformSubstack:
			p.URL = "https://someone.substack.com/p/post-" + ext
			p.Substack = &events.SubstackMetaV1{SubstackPostID: ext, PublicationSubdomain: "someone", Slug: "post-" + ext,
				Title: "A post", Subtitle: "fine", AuthorName: "Someone"}
		case events.PlatformWikipedia:
			p.URL = "https://en.wikipedia.org/wiki/Page_" + ext
			p.Wikipedia = &events.WikipediaMetaV1{Language: "en", Title: "Page " + ext, DisplayTitle: "Page " + ext, PageID: ext, RevisionID: "1"}
		}
		return p
	}
	someone := &events.AuthorV1{PlatformUserID: "someone", DisplayName: "Someone"}
	const (
		pServing = serving.ProjectorName
		pAudit   = audit.ProjectorName
		pSearch  = search.ProjectorName
		pMetrics = analytics.ProjectorName
		sInv     = investigator.ProjectorName
		sVal     = investigator.ValidatorProjectorName
	)
	var poisons []poison
	add := func(name string, rec *kgo.Record, parking ...string) {
		poisons = append(poisons, poison{name: name, rec: rec, parking: parking})
	}
	{
		env, data, h, tp := encode(registration(events.PlatformX, "9000000000000000001", someone))
		data["content_text"] = "Poison " + nul
		set(data, nul, "x", "text")
		set(data, nul, "x", "author_handle")
		set(data, nul, "x", "author_display_name")
		set(data, nul, "author", "platform_user_id")
		set(data, nul, "author", "display_name")
		// Postgres refuses NUL in text: serving stores every field, the
		// search fold the text's excerpt and the author's name.
		add("X registration with NUL strings", record(env, data, h, tp), pServing, pSearch)
	}
	{
		handle := make([]byte, 4000)
		rng := rand.New(rand.NewPCG(4000, 1))
		for i := range handle {
			handle[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"[rng.IntN(63)]
		}
		env, data, h, tp := encode(registration(events.PlatformX, "9000000000000000002",
			&events.AuthorV1{PlatformUserID: string(handle), DisplayName: "Long"}))
		// Beyond the btree limit of serving's unique index on authors.
		add("X registration with a 4,000-character handle", record(env, data, h, tp), pServing)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformLessWrong, "lwpoison1", someone))
		set(data, nul, "lesswrong", "title")
		set(data, nul, "lesswrong", "author_slug")
		set(data, []any{"ok", nul}, "lesswrong", "tags")
		data["client_html"] = "<p>" + nul + "</p>"
		add("LessWrong registration with NUL strings", record(env, data, h, tp), pServing)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformSubstack, "909001", nil))
		set(data, nul, "substack", "subtitle")
		add("Substack registration with a NUL subtitle", record(env, data, h, tp), pServing)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformWikipedia, "909002", nil))
		set(data, nul, "wikipedia", "title")
		set(data, nul, "wikipedia", "display_title")
		add("Wikipedia registration with NUL titles", record(env, data, h, tp), pServing)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformX, "9000000000000000003", someone))
		data["image_urls"] = []any{"https://example.org/a.png"}
		data["image_occurrences"] = []any{map[string]any{"original_index": 0, "normalized_text_offset": 0,
			"source_url": "https://example.org/a.png", "caption_text": nul}}
		add("registration with a NUL image caption", record(env, data, h, tp), pServing)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformX, "9000000000000000004", someone))
		env["type"] = json.RawMessage(`"post.version_registered.v9"`)
		h[events.HeaderType] = "post.version_registered.v9"
		data["author"] = map[string]any{"ids": []any{"someone"}}
		add("registration of a future version (v9)", record(env, data, h, tp), pServing, pAudit, pSearch, pMetrics)
	}
	{
		env, data, h, tp := encode(registration(events.PlatformX, "9000000000000000005", someone))
		data["author"] = map[string]any{"id": "someone", "names": []any{"Someone"}}
		data["schema"] = 2
		add("v1 registration with an incompatible payload", record(env, data, h, tp), pServing, pAudit, pSearch, pMetrics)
	}
	{
		v := registration(events.PlatformX, "9000000000000000006", someone)
		env, data, h, tp := encode(&events.InvestigationRequestedV1{InvestigationID: events.InvestigationID(v.PostVersionID),
			PostID: v.PostID, PostVersionID: v.PostVersionID, Platform: v.Platform, ExternalID: v.ExternalID,
			VersionHash: v.VersionHash, Source: events.RequestSourceSelector})
		env["type"] = json.RawMessage(`"investigation.requested.v2"`)
		h[events.HeaderType] = "investigation.requested.v2"
		data["priority"] = "high"
		// The search projection reads no requests: it skips it.
		add("investigation request of a future version (v2)", record(env, data, h, tp), pServing, pAudit, pMetrics, sInv, sVal)
	}

	{
		// Evidence assessments a producer bypassing the worker could write:
		// ClickHouse and the audit's envelopes keep any bytes, serving
		// stores no snippet and indexes no rule; a NUL in a rule is what
		// serving's Postgres refuses.
		// The investigation of the v2 request above: the same partition,
		// between good events.
		v := registration(events.PlatformX, "9000000000000000006", someone)
		ref := events.AttemptRef{InvestigationID: events.InvestigationID(v.PostVersionID), Series: 1, Attempt: 1}
		assessedPoison := func(seq int, mutate func(src map[string]any)) *kgo.Record {
			env, data, h, tp := encode(&events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
				Queries: []events.EvidenceQueryV1{}, Dropped: []events.DroppedSourceV1{}, Failed: []string{"gate4_below_minimum"},
				Sources: []events.AssessedSourceV1{{URL: "https://example.org/s", Domain: "example.org", Tier: 3, Rule: "default",
					Title: "S", Snippet: "s", Origin: "search", Contradict: 0.9, Neutral: 0.1, Recency: 0.5}},
				CMax: 0.9, RelAvg: 0.6, RecMax: 0.5, Raw: 0.1, Score: 7, Verdict: events.EvidenceRefuted, Gate4: "INSUFFICIENT",
				RegistryVersion: "starter-v1@000000000000", PolicyVersion: "strict-v1@000000000000", PublishMode: "strict",
				Reason: "gate4_below_minimum"})
			mutate(data["sources"].([]any)[0].(map[string]any))
			return record(env, data, h, tp)
		}
		add("assessment with a 10,000-character rule", assessedPoison(0, func(src map[string]any) { src["rule"] = strings.Repeat("r", 10_000) }))
		add("assessment with NUL in a snippet", assessedPoison(1, func(src map[string]any) { src["snippet"] = nul }))
		add("assessment with NUL in a rule", assessedPoison(2, func(src map[string]any) { src["rule"] = nul }), pServing)
	}

	s.worker = startErrata(t, s.env, filepath.Join(s.logDir, "worker.log"), "worker")
	t.Cleanup(func() {
		if s.worker.cmd.ProcessState == nil {
			s.worker.stop(t)
		}
	})
	alive := func() {
		t.Helper()
		require.Nil(t, s.worker.cmd.ProcessState, "the worker exited")
		require.NoError(t, s.worker.cmd.Process.Signal(syscall.Signal(0)), "the worker is gone")
	}

	require.NoError(t, s.rig.append(ctx, phases[0], 100))
	for _, p := range poisons {
		require.NoError(t, producer.ProduceSync(ctx, p.rec).FirstErr(), p.name)
	}
	require.NoError(t, s.rig.append(ctx, phases[1], 100))

	// Good events come before and after every poison record in its partition.
	before, after := map[string]bool{}, map[string]bool{}
	for _, r := range s.logRecords(t) {
		for _, p := range poisons {
			if r.Topic == p.rec.Topic && r.Partition == p.rec.Partition && !slices.ContainsFunc(poisons, func(q poison) bool {
				return q.rec.Topic == r.Topic && q.rec.Partition == r.Partition && q.rec.Offset == r.Offset
			}) {
				before[p.name] = before[p.name] || r.Offset < p.rec.Offset
				after[p.name] = after[p.name] || r.Offset > p.rec.Offset
			}
		}
	}
	for _, p := range poisons {
		require.True(t, before[p.name] && after[p.name], "%s at %s/%d@%d is not between good events", p.name, p.rec.Topic, p.rec.Partition, p.rec.Offset)
	}

	// Exactly the poison per group on the dead-letter topic.
	want := map[string][]kafka.DeadLetterKey{}
	for _, p := range poisons {
		for _, name := range p.parking {
			group := s.prefix + name
			if name != sInv && name != sVal {
				group = s.prefix + "projector." + name
			}
			want[group] = append(want[group], kafka.DeadLetterKey{Group: group, Topic: p.rec.Topic, Partition: p.rec.Partition, Offset: p.rec.Offset})
		}
	}
	for g := range want {
		slices.SortFunc(want[g], func(a, b kafka.DeadLetterKey) int {
			return strings.Compare(fmt.Sprintf("%s/%03d/%09d", a.Topic, a.Partition, a.Offset), fmt.Sprintf("%s/%03d/%09d", b.Topic, b.Partition, b.Offset))
		})
	}
	dlqTopic := topics.Name(events.TopicDeadLetter)
	parked := func() map[string][]kafka.DeadLetterKey {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		recs, err := kafka.ReadDeadLetters(rctx, s.brokers, dlqTopic)
		require.NoError(t, err)
		got := map[string][]kafka.DeadLetterKey{}
		for _, r := range recs {
			require.True(t, r.Labelled, "%+v", r)
			got[r.Group] = append(got[r.Group], r.DeadLetterKey)
		}
		return got
	}
	testenv.Eventually(t, 2*time.Minute, func() (bool, string) {
		alive()
		got := parked()
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("parked %v\nwant   %v", got, want)
	})
	s.waitIdle(t, ctx, 2*time.Minute)
	alive()

	// Every projector applied every good event.
	require.NoError(t, workload.Verify(ctx, s.rig.pool, w.Expect))
	byStatus, err := serving.NewReader(s.rig.pool).InvestigationsByStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{events.StatusComplete: int64(investigated)}, byStatus)

	decodableRegs := 6 // the NUL, long-handle and caption registrations
	count := func(pool *pgxpool.Pool, q string) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, q).Scan(&n), q)
		return n
	}
	auditPool, err := postgres.Connect(ctx, s.dbURL, audit.Schema)
	require.NoError(t, err)
	defer auditPool.Close()
	const assessments = 3 // every poison assessment is in the audit's envelopes
	require.Equal(t, 2*investigated+assessments, count(auditPool, "SELECT count(*) FROM audit_events"))
	require.Equal(t, 2, count(s.rig.pool, "SELECT count(*) FROM claim_assessments"), "serving applies all but the NUL rule")
	require.Equal(t, 10_000, count(s.rig.pool, "SELECT max(length(rule)) FROM assessment_sources"))
	require.Equal(t, w.Expect.Versions+decodableRegs, count(auditPool, "SELECT count(*) FROM audit_post_versions"))
	searchPool, err := postgres.Connect(ctx, s.dbURL, search.StateSchema)
	require.NoError(t, err)
	defer searchPool.Close()
	require.Equal(t, w.Expect.Versions+decodableRegs-1, count(searchPool, "SELECT count(*) FROM versions"))
	require.Equal(t, investigated, count(searchPool, "SELECT count(*) FROM investigations"))
	require.Equal(t, investigated, searchDocuments(t, ctx, s.env))

	cfg := testenv.Config(t)
	chDB := envValue(s.env, "ERRATA_CLICKHOUSE_DATABASE")
	opts, err := analytics.Options(cfg.ClickHouseURL, chDB)
	require.NoError(t, err)
	ch, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer ch.Close()
	chCount := func(q string) int {
		var n uint64
		require.NoError(t, ch.QueryRow(ctx, q).Scan(&n), q)
		return int(n)
	}
	require.Equal(t, registrations+decodableRegs, chCount("SELECT count() FROM post_versions FINAL"))
	require.Equal(t, views, chCount("SELECT count() FROM views FINAL"))
	require.Equal(t, 2*investigated, chCount("SELECT count() FROM investigations FINAL"))
	require.Equal(t, claims, chCount("SELECT count() FROM claims FINAL"))
	require.Equal(t, assessments, chCount("SELECT count() FROM claim_assessments FINAL"))
	require.Equal(t, 2, chCount("SELECT count() FROM assessment_sources FINAL WHERE position(rule, '\\0') > 0 OR length(rule) = 10000"))
	require.Equal(t, 1, chCount("SELECT count() FROM post_versions FINAL WHERE author_display_name = 'a\\0b'"), "ClickHouse keeps the NUL")
	require.Equal(t, len(want[s.prefix+"projector.metrics"]), chCount("SELECT count() FROM _parked FINAL"))

	// The operator's view.
	out, stderr, err := runErrata(t, s.env, "deadletters", "list", "--json")
	require.NoError(t, err, stderr)
	var listed []deadLetterJSON
	require.NoError(t, json.Unmarshal([]byte(out), &listed), out)
	total := 0
	for _, keys := range want {
		total += len(keys)
	}
	require.Len(t, listed, total)
	for _, l := range listed {
		require.Contains(t, want[l.Group], kafka.DeadLetterKey{Group: l.Group, Topic: l.Topic, Partition: l.Partition, Offset: l.Offset})
		require.NotEmpty(t, l.Reason)
		require.GreaterOrEqual(t, l.Copies, 1)
		require.Contains(t, []string{kafka.ClassDecode, kafka.ClassDeterministic}, l.Class)
	}
	out, stderr, err = runErrata(t, s.env, "deadletters", "list", "--group", "serving")
	require.NoError(t, err, stderr)
	require.Contains(t, out, fmt.Sprintf("%d parked (", len(want[s.prefix+"projector.serving"])))
	nulRec := poisons[0].rec
	out, stderr, err = runErrata(t, s.env, "deadletters", "show", fmt.Sprintf("%s/%d/%d", nulRec.Topic, nulRec.Partition, nulRec.Offset), "--group", "serving")
	require.NoError(t, err, stderr)
	require.Contains(t, out, "class:       deterministic")
	require.Contains(t, out, `"author_handle": "a\u0000b"`)
	require.NotContains(t, out, "\x00", "hostile bytes are escaped")
	t.Log(out)

	// Replay and verify: the rebuilds park the same events and never
	// dead-letter again.
	out, stderr, err = runErrata(t, s.env, "replay", "--projection", "all")
	require.NoError(t, err, "replay:\n%s\n%s", out, stderr)
	for _, name := range projectorNames() {
		require.Contains(t, out, name+": switched to generation 2")
	}
	s.waitIdle(t, ctx, 2*time.Minute)
	out, stderr, err = runErrata(t, s.env, "verify", "--projection", "all")
	require.NoError(t, err, "verify:\n%s\n%s", out, stderr)
	for _, name := range projectorNames() {
		require.Contains(t, out, name+": identical", out)
	}
	t.Log(out)
	require.Equal(t, fmt.Sprint(want), fmt.Sprint(parked()))
	alive()
}

// searchDocuments counts the documents behind the stack's search alias.
func searchDocuments(t *testing.T, ctx context.Context, env []string) int {
	t.Helper()
	cfg := testenv.Config(t)
	alias := search.AliasName(envValue(env, "ERRATA_SEARCH_INDEX_PREFIX"))
	for _, path := range []string{"/" + alias + "/_refresh", "/" + alias + "/_count"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(cfg.ElasticsearchURL, "/")+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var body struct {
			Count int `json:"count"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		if strings.HasSuffix(path, "_count") {
			return body.Count
		}
	}
	return 0
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
