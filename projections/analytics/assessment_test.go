package analytics_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/testkit/audittest"
)

// fixtureRecords lays events out as the log would: the posts topic on
// partition 0, the investigations topic on partition 1, in order.
func fixtureRecords(t *testing.T, evs ...events.Event) []*kgo.Record {
	t.Helper()
	reg := events.NewCatalogRegistry()
	next := map[string]int64{}
	var out []*kgo.Record
	for _, ev := range evs {
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		part := int32(0)
		if msg.Topic == events.TopicInvestigations {
			part = 1
		}
		name := simTopics.Name(msg.Topic)
		rec := &kgo.Record{Topic: name, Partition: part, Offset: next[name], Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time}
		next[name]++
		for _, k := range []string{events.HeaderID, events.HeaderSubject, events.HeaderType} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		out = append(out, rec)
	}
	return out
}

// inBatches cuts each partition's records into batches of size, the
// partitions' batches alternating.
func inBatches(recs []*kgo.Record, size int) []kafka.Batch {
	byPart := map[int32][]*kgo.Record{}
	for _, r := range recs {
		byPart[r.Partition] = append(byPart[r.Partition], r)
	}
	var out []kafka.Batch
	for done := false; !done; {
		done = true
		for _, part := range []int32{0, 1} {
			rs := byPart[part]
			if len(rs) == 0 {
				continue
			}
			n := min(size, len(rs))
			out = append(out, kafka.Batch{Topic: rs[0].Topic, Partition: part, Records: rs[:n]})
			byPart[part] = rs[n:]
			done = false
		}
	}
	return out
}

// TestAssessmentViews projects the audit fixture's complete investigation
// (one claim published, one withheld by the evidence engine) and reads
// every assessment view; a redelivery and a rebuild in other batches give
// the same dump, the new tables included.
func TestAssessmentViews(t *testing.T) {
	fx := audittest.Complete("metrics-views", "1860000000000000301")
	recs := fixtureRecords(t, append(append([]events.Event{}, fx.Posts...), fx.Investigation...)...)
	live := newFixture(t, 0)
	live.feed(t, inBatches(recs, 100))

	policy := evidence.DefaultPolicy().Version()
	q := func(sql string) string { return curlQuery(t, live.url, live.database, sql) }
	pub, held := events.SubmissionID(events.AttemptRef{InvestigationID: fx.InvestigationID, Series: 1, Attempt: 2}, 0),
		events.SubmissionID(events.AttemptRef{InvestigationID: fx.InvestigationID, Series: 1, Attempt: 2}, 2)
	require.Equal(t, fmt.Sprintf("%s\tX\tinvestigator@v3\tgpt-5\tREFUTED\tHIGH\t%s\ttrue\tpublished\t[]\t3\n", pub, policy)+
		fmt.Sprintf("%s\tX\tinvestigator@v3\tgpt-5\tREFUTED\tINSUFFICIENT\t%s\tfalse\tno_authoritative_contradiction\t"+
			"['no_authoritative_contradiction','gate4_below_minimum']\t3\n", held, policy),
		q(`SELECT submission_id, platform, prompt_version, model, verdict, gate4, policy_version, published, reason, failed, source_count
			FROM assessed_claims ORDER BY published DESC`))
	require.Equal(t, fmt.Sprintf("%s\tno_authoritative_contradiction\t1\t2\t0.5\n", policy),
		q(`SELECT policy_version, reason, withheld, assessed, withheld_rate FROM withheld_by_reason`))
	require.Equal(t, fmt.Sprintf("X\tinvestigator@v3\t%s\tREFUTED\t2\t1\t1\n", policy),
		q(`SELECT platform, prompt_version, policy_version, verdict, claims, published, withheld FROM verdicts_by_policy`))
	reg := audittest.RegistryVersion
	require.Equal(t, fmt.Sprintf("%[1]s\t1\t1\t1\t1\t0.1667\n%[1]s\t2\t2\t2\t2\t0.3333\n%[1]s\t3\t2\t1\t2\t0.3333\n%[1]s\t4\t1\t1\t1\t0.1667\n", reg),
		q(`SELECT registry_version, tier, sources, domains, claims, round(share, 4) FROM source_tier_mix ORDER BY tier`))
	require.Equal(t, "2\t6\t1\t1\n", q(`SELECT count(), sum(source_count), sum(query_errors), sum(dropped_count) FROM claim_assessments FINAL`))
	require.Equal(t, "2\tinvestigator@v3\n", q(`SELECT count(), any(prompt_version) FROM attempts FINAL`))
	require.Equal(t, "1\n", q(`SELECT count() FROM claims FINAL`), "only the published claim is a claim")

	before := live.dump(t)
	for _, table := range []string{"attempts", "claim_assessments", "assessment_sources"} {
		require.Contains(t, string(before), "# "+table+" (")
	}
	require.Contains(t, string(before), "# assessment_sources (")
	require.Contains(t, string(before), `"`+audittest.BrokeSchema+`"`)
	live.feed(t, inBatches(recs, 7))
	require.Equal(t, string(before), string(live.dump(t)), "redelivery changes nothing")
	rebuilt := newFixture(t, 2)
	rebuilt.feed(t, inBatches(recs, 1))
	require.Equal(t, string(before), string(rebuilt.dump(t)), "a rebuild from offset 0 is identical")
	require.Empty(t, parkedRows(t, live))
}

// TestHostileAssessmentsAreApplied appends assessments a producer
// bypassing the worker could write (a 10,000-character rule, NUL in a
// snippet, a stance note and a failed rule, a second assessment of the
// same submission): ClickHouse stores any bytes, so each is applied with
// its exact values, the first assessment of a submission is the one the
// views count, nothing is parked, and a rebuild is identical.
func TestHostileAssessmentsAreApplied(t *testing.T) {
	l := newSimLog()
	v := registration(events.PlatformX, "hostile-1", 1, nil, false)
	inv := events.InvestigationID(v.PostVersionID)
	ref := events.AttemptRef{InvestigationID: inv, Series: 1, Attempt: 1}
	l.event(t, 0, v)
	l.event(t, 1, request(v, events.RequestSourceSelector))
	run := assessedRun(v, 1, 3, 1, 1, "gpt-5") // strict policy: one published, one withheld
	require.Len(t, run, 4)
	l.event(t, 1, run[0])
	long := strings.Repeat("r", 10_000)
	first := *run[1].(*events.InvestigationClaimAssessedV1)
	first.Sources = append([]events.AssessedSourceV1{}, first.Sources...)
	first.Sources[0].Rule = long
	first.Sources[0].Snippet = "a\x00b"
	first.Sources[0].StanceNote = "\x00"
	l.event(t, 1, &first)
	second := *run[2].(*events.InvestigationClaimAssessedV1)
	second.Failed = append(append([]string{}, second.Failed...), "\x00"+long)
	l.event(t, 1, &second)
	// A later assessment of the first submission, withheld: it is stored,
	// and changes nothing the views count.
	again := assessment(ref, 0, strictPolicy, 2, true)
	l.event(t, 1, again)
	l.event(t, 1, run[3])
	l.event(t, 0, view(v, 1))

	live := newFixture(t, 0)
	live.feed(t, l.batches(3))
	q := func(sql string) string { return curlQuery(t, live.url, live.database, sql) }
	require.Empty(t, parkedRows(t, live), "nothing is parked")
	require.Equal(t, "10000\n", q(`SELECT length(rule) FROM assessment_sources FINAL WHERE position = 0 AND event_id = '`+eventID(l, 3)+`'`))
	require.Equal(t, "1\n", q(`SELECT count() FROM assessment_sources FINAL WHERE stance_note = '\0'`), "ClickHouse keeps the NUL")
	require.Equal(t, "3\n", q(`SELECT count() FROM claim_assessments FINAL`))
	require.Equal(t, "2\t1\t1\n", q(`SELECT count(), countIf(published), countIf(NOT published) FROM assessed_claims`),
		"the first assessment of each submission counts")
	require.Equal(t, fmt.Sprintf("%s\tcontested\t%d\n", strictPolicy, 10_001),
		q(`SELECT policy_version, reason, length(failed[2]) FROM assessed_claims WHERE NOT published`))
	pos, err := live.proj.Positions(context.Background(), []string{simTopics.Name(events.TopicInvestigations)})
	require.NoError(t, err)
	require.EqualValues(t, 6, pos[simTopics.Name(events.TopicInvestigations)][1], "the position moved past everything")

	before := live.dump(t)
	rebuilt := newFixture(t, 1)
	rebuilt.feed(t, l.batches(1))
	require.Equal(t, string(before), string(rebuilt.dump(t)))
}

// eventID is the event id of the n-th record (0-based) of l's log.
func eventID(l *simLog, n int) string { return header(l.recs[n], events.HeaderID) }
