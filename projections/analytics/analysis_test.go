package analytics_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/analysistest"
	"github.com/errata-dev/errata/projections/analytics"
)

func TestConfidenceBand(t *testing.T) {
	for c, want := range map[int]string{0: "0-39", 39: "0-39", 40: "40-69", 69: "40-69", 70: "70-100", 100: "70-100"} {
		require.Equal(t, want, analytics.ConfidenceBand(c), c)
	}
}

// analysisBatches lays evs out on one partition of the analyses topic, in
// batches of size.
func analysisBatches(t *testing.T, evs []events.Event, size int) []kafka.Batch {
	t.Helper()
	recs := fixtureRecords(t, evs...)
	var out []kafka.Batch
	for i := 0; i < len(recs); i += size {
		out = append(out, kafka.Batch{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: recs[i:min(i+size, len(recs))]})
	}
	return out
}

// TestAnalysisVerdicts projects the fixture's three analyses: the two
// with a verdict are in analysis_verdicts with their platform (TEXT for
// the submission), labels, confidence band, caps and the versions of the
// attempt that gave it; verdict_distribution counts them; a redelivery and
// a rebuild in other batches give the same dump.
func TestAnalysisVerdicts(t *testing.T) {
	f := analysistest.New("metrics")
	live := newFixture(t, 0)
	live.feed(t, analysisBatches(t, f.All(), 100))
	q := func(sql string) string { return curlQuery(t, live.url, live.database, sql) }

	require.Equal(t, fmt.Sprintf("%s\t2\tPOST\tX\tEXTENSION\tverdict-v1\tgpt-5\t%s\t%s\t%s\tFalse\tFALSE\t6\t70\t70-100\t['approximate_numeric_evidence']\t2\t2\n",
		f.CompleteID, analysistest.RegistryVersion, analysistest.PolicyVersion, analysistest.RubricVersion)+
		fmt.Sprintf("%s\t1\tTEXT\tTEXT\tWORKBENCH\tverdict-v1\tgpt-5\t%s\t%s\t%s\tOpinion\tUNVERIFIED\t50\t0\t0-39\t[]\t1\t0\n",
			f.OpinionID, analysistest.RegistryVersion, analysistest.PolicyVersion, analysistest.RubricVersion),
		q(`SELECT analysis_id, attempt, input_kind, platform, source, prompt_version, model, registry_version, policy_version,
			rubric_version, label, band, truth_percent, confidence, confidence_band, caps, claim_count, source_count
			FROM analysis_verdicts ORDER BY verdict_at`))
	require.Equal(t, "TEXT\tOpinion\t0-39\t1\t50\t0\nX\tFalse\t70-100\t1\t6\t70\n",
		q(`SELECT platform, label, confidence_band, analyses, mean_truth_percent, mean_confidence FROM verdict_distribution ORDER BY platform`))
	require.Equal(t, "4\t5\t2\t1\n", q(`SELECT (SELECT count() FROM analyses FINAL), (SELECT count() FROM analysis_attempts FINAL),
		(SELECT count() FROM post_verdicts FINAL), (SELECT sum(from_search) FROM post_verdicts FINAL)`))
	require.Equal(t, "['verdict-extract@v1','stance@v1','verdict-summary@v1']\n",
		q(`SELECT any(prompts) FROM analysis_attempts FINAL`))

	before := live.dump(t)
	for _, table := range []string{"analyses", "analysis_attempts", "post_verdicts"} {
		require.Contains(t, string(before), "# "+table+" (")
	}
	live.feed(t, analysisBatches(t, f.All(), 7))
	require.Equal(t, string(before), string(live.dump(t)), "redelivery changes nothing")
	rebuilt := newFixture(t, 2)
	rebuilt.feed(t, analysisBatches(t, f.All(), 1))
	require.Equal(t, string(before), string(rebuilt.dump(t)), "a rebuild from offset 0 is identical")
	require.Empty(t, parkedRows(t, live))
}

// TestHostileAnalyses: a post verdict whose label is 10 KB (invalid:
// parked as undecodable) and one whose cap rule holds a NUL (ClickHouse
// keeps any bytes: applied) among good events; the rest is applied and a
// rebuild is identical.
func TestHostileAnalyses(t *testing.T) {
	f := analysistest.New("metrics-hostile")
	l := newSimLog()
	for _, ev := range f.Opinion[:2] { // requested, attempt started
		l.event(t, 0, ev.Payload)
	}
	ref := events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 1}
	verdict := func(rule string) *events.AnalysisPostVerdictV1 {
		return &events.AnalysisPostVerdictV1{AnalysisRef: ref, TruthPercent: 50, Confidence: 40,
			Caps: []events.CapV1{{Rule: rule, Cap: 40, Before: 90}}, Label: events.LabelUnverifiable, Band: events.BandUnverified,
			Summary: "s", Caveats: []string{}, Sources: []events.VerdictSourceV1{}}
	}
	l.tampered(t, 0, verdict("r"), func(data map[string]any) { data["label"] = strings.Repeat("L", 10_240) })
	l.event(t, 0, verdict("a\x00b"))
	l.event(t, 0, f.Opinion[len(f.Opinion)-1].Payload)

	live := newFixture(t, 0)
	live.feed(t, l.batches(10))
	q := func(sql string) string { return curlQuery(t, live.url, live.database, sql) }
	parked := parkedRows(t, live)
	require.Len(t, parked, 1)
	require.Equal(t, [3]string{"analyses", "2", "decode"}, [3]string{parked[0].Topic, fmt.Sprint(parked[0].Offset), parked[0].Class})
	require.Equal(t, "Unverifiable\t40-69\t1\n", q(`SELECT label, confidence_band, countIf(has(caps, 'a\0b')) FROM analysis_verdicts GROUP BY label, confidence_band`))

	before := live.dump(t)
	rebuilt := newFixture(t, 1)
	rebuilt.feed(t, l.batches(1))
	require.Equal(t, string(before), string(rebuilt.dump(t)))
}

// analysisWorkload is a deterministic log of verdict analyses for the
// README's examples: posts on every platform and submissions, labels and
// confidences spread over the bands, some requested twice, some whose
// first attempt gave a verdict and failed (the retry's verdict counts),
// some failed or still running (no verdict).
func analysisWorkload(seed uint64, n int) []events.Event {
	rng := rand.New(rand.NewPCG(seed, 0xa11))
	reg := events.NewCatalogRegistry()
	var out []events.Event
	at := workloadStart
	k := 0
	add := func(p events.Payload) {
		k++
		at = at.Add(time.Duration(1+rng.IntN(600)) * time.Second)
		ev, err := reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("analyses-%d-%d", seed, k))).String(), Time: at})
		if err != nil {
			panic(err)
		}
		out = append(out, ev)
	}
	rubrics := []string{"factsocial-v1@0123456789ab", "factsocial-v2@ba9876543210"}
	capRules := []string{"no_search_time_sensitive", "stale_current_events", "single_social_or_blog_source", "approximate_numeric_evidence"}
	for i := 0; i < n; i++ {
		kind := []string{events.AnalysisInputPost, events.AnalysisInputPost, events.AnalysisInputText, events.AnalysisInputURL}[i%4]
		text := fmt.Sprintf("Analysed text number %d says the moon is made of cheese.", i)
		sha := analysistest.Hash(text)
		req := &events.AnalysisRequestedV1{AnalysisType: events.AnalysisTypeVerdict, PromptVersion: "verdict-v1", InputKind: kind,
			Text: text, ContentSHA256: sha, Source: events.AnalysisSourceWorkbench}
		switch kind {
		case events.AnalysisInputPost:
			req.Platform = events.Platforms[i%len(events.Platforms)]
			req.ExternalID = fmt.Sprintf("a%04d", i)
			if req.Platform == events.PlatformBluesky {
				req.ExternalID = events.BlueskyPostURI("did:plc:someone", req.ExternalID)
			}
			req.PostID = events.PostID(req.Platform, req.ExternalID)
			req.PostVersionID = events.PostVersionID(req.PostID, sha)
			req.Source = events.AnalysisSourceExtension
		case events.AnalysisInputURL:
			req.URL = fmt.Sprintf("https://example.org/page/%d", i)
			req.Source = events.AnalysisSourceAPI
		}
		req.AnalysisID = events.AnalysisID(events.AnalysisContentKey(kind, req.PostVersionID, sha), events.AnalysisTypeVerdict, req.PromptVersion)
		add(req)
		if i%5 == 0 {
			again := *req
			add(&again)
		}
		attempts := 1 + rng.IntN(2)
		fate := rng.IntN(10) // 0: failed for good, 1: still running, else a verdict
		for a := 1; a <= attempts; a++ {
			ref := events.AnalysisRef{AnalysisID: req.AnalysisID, Attempt: a}
			add(&events.AnalysisAttemptStartedV1{AnalysisRef: ref, Worker: "w", Prompts: []events.PromptRefV1{},
				Provider: "openai-responses", Model: []string{"gpt-5", "gpt-5-mini"}[a%2], RegistryVersion: "starter-v1@1db44c3b699b",
				PolicyVersion: "strict-v1@a176a28a7d06", RubricVersion: rubrics[i%2]})
			last := a == attempts
			if fate == 1 && last {
				break
			}
			if fate == 0 && last {
				add(&events.AnalysisFailedV1{AnalysisRef: ref, Reason: "provider error", Retryable: false})
				break
			}
			if last || rng.IntN(2) == 0 { // an earlier attempt may give a verdict, then fail
				label := events.Labels[rng.IntN(len(events.Labels))]
				confidence := rng.IntN(101)
				var caps []events.CapV1
				for c := 0; c < rng.IntN(3); c++ {
					caps = append(caps, events.CapV1{Rule: capRules[rng.IntN(len(capRules))], Cap: 40, Before: 80})
				}
				if caps == nil {
					caps = []events.CapV1{}
				}
				add(&events.AnalysisPostVerdictV1{AnalysisRef: ref, TruthPercent: rng.IntN(101), Confidence: confidence,
					Caps: caps, Label: label, Band: events.Bands[rng.IntN(len(events.Bands))], Summary: "summary",
					Caveats: []string{}, Sources: []events.VerdictSourceV1{}, Claims: 1 + rng.IntN(4)})
			}
			if last {
				add(&events.AnalysisCompletedV1{AnalysisRef: ref, Claims: 1})
			} else {
				add(&events.AnalysisFailedV1{AnalysisRef: ref, Reason: "overloaded", Retryable: true})
			}
		}
	}
	return out
}

// analysisVerdict is the model's verdict of one analysis.
type analysisVerdict struct {
	platform, label, band, rubric string
	confidence, truth             int
	caps                          []string
}

// analysisVerdictsOf reads the workload the way analysis_verdicts is
// defined: per analysis, the first post verdict of its highest attempt
// that has one, with the input of its first request and the rubric of
// that attempt.
func analysisVerdictsOf(evs []events.Event) map[string]analysisVerdict {
	platform := map[string]string{}
	rubric := map[[2]any]string{}
	best := map[string]int{}
	out := map[string]analysisVerdict{}
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case *events.AnalysisRequestedV1:
			if _, ok := platform[p.AnalysisID]; !ok {
				platform[p.AnalysisID] = p.InputKind
				if p.InputKind == events.AnalysisInputPost {
					platform[p.AnalysisID] = p.Platform
				}
			}
		case *events.AnalysisAttemptStartedV1:
			rubric[[2]any{p.AnalysisID, p.Attempt}] = p.RubricVersion
		case *events.AnalysisPostVerdictV1:
			if p.Attempt <= best[p.AnalysisID] {
				continue
			}
			best[p.AnalysisID] = p.Attempt
			v := analysisVerdict{label: p.Label, band: p.Band, confidence: p.Confidence, truth: p.TruthPercent,
				rubric: rubric[[2]any{p.AnalysisID, p.Attempt}]}
			for _, c := range p.Caps {
				v.caps = append(v.caps, c.Rule)
			}
			out[p.AnalysisID] = v
		}
	}
	for id, v := range out {
		v.platform = platform[id]
		out[id] = v
	}
	return out
}

// analysisAnswers are the answers of the README's verdict examples
// (distribution by platform, label and confidence band; caps by rubric
// version).
func analysisAnswers(t *testing.T, evs []events.Event) []string {
	verdicts := analysisVerdictsOf(evs)
	require.NotEmpty(t, verdicts)
	type key struct{ platform, label, band string }
	dist := map[key]int{}
	type capKey struct{ rubric, rule string }
	caps := map[capKey]int{}
	for _, v := range verdicts {
		dist[key{v.platform, v.label, analytics.ConfidenceBand(v.confidence)}]++
		for _, c := range v.caps {
			caps[capKey{v.rubric, c}]++
		}
	}
	keys := make([]key, 0, len(dist))
	for k := range dist {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.platform+"\x00"+a.label+"\x00"+a.band < b.platform+"\x00"+b.label+"\x00"+b.band
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%d\n", k.platform, k.label, k.band, dist[k])
	}
	out := []string{b.String()}
	ckeys := make([]capKey, 0, len(caps))
	for k := range caps {
		ckeys = append(ckeys, k)
	}
	sort.Slice(ckeys, func(i, j int) bool {
		a, b := ckeys[i], ckeys[j]
		if a.rubric != b.rubric {
			return a.rubric < b.rubric
		}
		if caps[a] != caps[b] {
			return caps[a] > caps[b]
		}
		return a.rule < b.rule
	})
	b.Reset()
	for _, k := range ckeys {
		fmt.Fprintf(&b, "%s\t%s\t%d\n", k.rubric, k.rule, caps[k])
	}
	return append(out, b.String())
}

// analysisRecordsOf lays the analysis workload on partitions of the
// analyses topic by key, like newWorkload, cut into batches of size.
func analysisRecordsOf(t *testing.T, evs []events.Event, partitions int32, size int) []kafka.Batch {
	t.Helper()
	reg := events.NewCatalogRegistry()
	byPart := map[int32][]*kgo.Record{}
	for _, ev := range evs {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		part := int32(uuid.MustParse(msg.Key)[0]) % partitions
		rec := &kgo.Record{Topic: simTopics.Name(msg.Topic), Partition: part, Offset: int64(len(byPart[part])),
			Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
		for _, k := range []string{events.HeaderID, events.HeaderSubject, events.HeaderType} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		byPart[part] = append(byPart[part], rec)
	}
	var out []kafka.Batch
	for part := int32(0); part < partitions; part++ {
		recs := byPart[part]
		for i := 0; i < len(recs); i += size {
			out = append(out, kafka.Batch{Topic: recs[0].Topic, Partition: part, Records: recs[i:min(i+size, len(recs))]})
		}
	}
	return out
}

// TestAnalysisWorkloadVerdicts: the workload's analysis_verdicts equal the
// model's, analysis by analysis.
func TestAnalysisWorkloadVerdicts(t *testing.T) {
	evs := analysisWorkload(5, 120)
	live := newFixture(t, 0)
	live.feed(t, analysisRecordsOf(t, evs, 3, 50))
	var want []string
	for id, v := range analysisVerdictsOf(evs) {
		want = append(want, fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s\n", id, v.platform, v.label, v.confidence, analytics.ConfidenceBand(v.confidence), v.rubric))
	}
	sort.Strings(want)
	got := curlQuery(t, live.url, live.database, `SELECT analysis_id, platform, label, confidence, confidence_band, rubric_version
		FROM analysis_verdicts ORDER BY toString(analysis_id)`)
	require.Equal(t, strings.Join(want, ""), got)
	require.Empty(t, parkedRows(t, live))
}
