package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

func TestEventTopicSpecs(t *testing.T) {
	t.Parallel()
	reg := events.NewCatalogRegistry()
	got := kafka.TopicSpecs(events.Topics{Prefix: "errata."}.Names(reg), 6)
	// Every topic of the registry, in its order, then the dead-letter topic.
	var want []kafka.TopicSpec
	for _, tp := range reg.Topics() {
		want = append(want, kafka.TopicSpec{Name: "errata." + string(tp), Partitions: 6})
	}
	want = append(want, kafka.TopicSpec{Name: "errata.dead-letter", Partitions: 6})
	require.Equal(t, want, got)
	require.Contains(t, got, kafka.TopicSpec{Name: "errata.posts", Partitions: 6})
	require.Len(t, got, len(reg.Topics())+1)
}

// A parked record names its event by the envelope's headers: kafka's copy
// of their names (it imports nothing above internal/) equals the events'.
func TestEnvelopeHeaderNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, events.HeaderID, kafka.HeaderEventID)
	require.Equal(t, events.HeaderType, kafka.HeaderEventType)
}

// logLine is one JSON log record of EnsureTopics.
type logLine struct {
	Level      string `json:"level"`
	Msg        string `json:"msg"`
	Topic      string `json:"topic"`
	Partitions int    `json:"partitions"`
	Configured int    `json:"configured"`
}

func logLines(t *testing.T, buf *bytes.Buffer) []logLine {
	t.Helper()
	var out []logLine
	dec := json.NewDecoder(buf)
	for dec.More() {
		var l logLine
		require.NoError(t, dec.Decode(&l))
		out = append(out, l)
	}
	buf.Reset()
	return out
}

var wantTopicConfig = map[string]string{
	"retention.ms":        "-1",
	"retention.bytes":     "-1",
	"cleanup.policy":      "delete",
	"max.message.bytes":   "16777216",
	"min.insync.replicas": "1",
}

// topicState returns the partition count and event-topic configuration of topics.
func topicState(t *testing.T, adm *kadm.Client, topics ...string) (map[string]int, map[string]map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	// A broker may answer metadata for a just-created topic a moment late.
	var details kadm.TopicDetails
	testenv.Eventually(t, guard, func() (bool, string) {
		var err error
		details, err = adm.ListTopics(ctx, topics...)
		if err != nil {
			return false, err.Error()
		}
		if err := details.Error(); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	parts := map[string]int{}
	for _, name := range topics {
		d, ok := details[name]
		require.True(t, ok, name)
		require.NoError(t, d.Err, name)
		parts[name] = len(d.Partitions)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	require.NoError(t, err)
	confs := map[string]map[string]string{}
	for _, rc := range rcs {
		require.NoError(t, rc.Err, rc.Name)
		m := map[string]string{}
		for _, c := range rc.Configs {
			if _, ok := wantTopicConfig[c.Key]; ok && c.Value != nil {
				m[c.Key] = *c.Value
			}
		}
		confs[rc.Name] = m
	}
	return parts, confs
}

// TestEnsureTopics runs against kfake, which implements the admin calls
// EnsureTopics uses (Metadata, CreateTopics, IncrementalAlterConfigs).
func TestEnsureTopics(t *testing.T) {
	t.Parallel()
	addrs := newCluster(t, 0)
	adm := newAdmin(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	// An existing topic with more partitions and the wrong configuration.
	s := func(v string) *string { return &v }
	created, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{"retention.ms": s("1000"), "max.message.bytes": s("1000")}, "pre.posts")
	require.NoError(t, err)
	require.NoError(t, created.Err)

	specs := []kafka.TopicSpec{{Name: "pre.posts", Partitions: 2}, {Name: "pre.dead-letter", Partitions: 2}}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))

	require.NoError(t, kafka.EnsureTopics(ctx, newClient(t, addrs), log, specs))
	parts, confs := topicState(t, adm, "pre.posts", "pre.dead-letter")
	require.Equal(t, map[string]int{"pre.posts": 3, "pre.dead-letter": 2}, parts, "partition counts never shrink")
	require.Equal(t, map[string]map[string]string{"pre.posts": wantTopicConfig, "pre.dead-letter": wantTopicConfig}, confs)
	require.Equal(t, []logLine{
		{Level: "WARN", Msg: "topic partition count differs from configuration; leaving it", Topic: "pre.posts", Partitions: 3, Configured: 2},
		{Level: "INFO", Msg: "topic exists", Topic: "pre.posts", Partitions: 3},
		{Level: "INFO", Msg: "topic created", Topic: "pre.dead-letter", Partitions: 2},
	}, logLines(t, &buf))

	// A second run changes nothing.
	require.NoError(t, kafka.EnsureTopics(ctx, newClient(t, addrs), log, specs))
	parts2, confs2 := topicState(t, adm, "pre.posts", "pre.dead-letter")
	require.Equal(t, parts, parts2)
	require.Equal(t, confs, confs2)
	require.Equal(t, []logLine{
		{Level: "WARN", Msg: "topic partition count differs from configuration; leaving it", Topic: "pre.posts", Partitions: 3, Configured: 2},
		{Level: "INFO", Msg: "topic exists", Topic: "pre.posts", Partitions: 3},
		{Level: "INFO", Msg: "topic exists", Topic: "pre.dead-letter", Partitions: 2},
	}, logLines(t, &buf))

	// The largest allowed event fits the created topic.
	big := &kgo.Record{Topic: "pre.dead-letter", Value: bytes.Repeat([]byte("a"), 15<<20)}
	prod := newClient(t, addrs, append(kafka.ProducerOpts(), kgo.ProducerBatchCompression(kgo.NoCompression()))...)
	require.NoError(t, prod.ProduceSync(ctx, big).FirstErr())
}

func TestReplicated(t *testing.T) {
	t.Parallel()
	specs := []kafka.TopicSpec{{Name: "a", Partitions: 3}, {Name: "b", Partitions: 3}}
	for _, tc := range []struct {
		name       string
		rf, minISR int
		err        string
	}{
		{"brokers' default", 0, 1, ""},
		{"a cluster of three", 3, 2, ""},
		{"all replicas in sync", 3, 3, ""},
		{"one broker", 1, 1, ""},
		{"more in-sync replicas than replicas", 2, 3, "min.insync.replicas 3 exceeds the replication factor 2: every append would fail"},
		{"negative", -1, 1, "replication factor -1: must be between 0 (the brokers' default) and 32767"},
		{"beyond int16", 40000, 1, "replication factor 40000: must be between 0 (the brokers' default) and 32767"},
		{"no in-sync replica", 3, 0, "min.insync.replicas 0: must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := kafka.Replicated(specs, tc.rf, tc.minISR)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, []kafka.TopicSpec{
				{Name: "a", Partitions: 3, ReplicationFactor: int16(tc.rf), MinInsyncReplicas: tc.minISR},
				{Name: "b", Partitions: 3, ReplicationFactor: int16(tc.rf), MinInsyncReplicas: tc.minISR},
			}, got)
			require.Equal(t, kafka.TopicSpec{Name: "a", Partitions: 3}, specs[0], "the input is not changed")
		})
	}
}

// TestEnsureTopicsReplication: on a three-broker cluster, topics are
// created with the configured replicas and min.insync.replicas; an existing
// topic keeps its replicas (reported), and one with fewer replicas than
// min.insync.replicas is refused.
func TestEnsureTopicsReplication(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	addrs := c.ListenAddrs()
	adm := newAdmin(t, addrs)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))

	specs, err := kafka.Replicated([]kafka.TopicSpec{{Name: "rf.posts", Partitions: 3}, {Name: "rf.dead-letter", Partitions: 3}}, 3, 2)
	require.NoError(t, err)
	require.NoError(t, kafka.EnsureTopics(ctx, newClient(t, addrs), log, specs))
	details, err := adm.ListTopics(ctx, "rf.posts", "rf.dead-letter")
	require.NoError(t, err)
	for _, name := range []string{"rf.posts", "rf.dead-letter"} {
		require.Len(t, details[name].Partitions, 3, name)
		for _, p := range details[name].Partitions {
			require.Len(t, p.Replicas, 3, "%s partition %d", name, p.Partition)
		}
	}
	want := map[string]string{}
	for k, v := range wantTopicConfig {
		want[k] = v
	}
	want["min.insync.replicas"] = "2"
	_, confs := topicState(t, adm, "rf.posts", "rf.dead-letter")
	require.Equal(t, map[string]map[string]string{"rf.posts": want, "rf.dead-letter": want}, confs)
	lines := logLines(t, &buf)
	require.Len(t, lines, 2)
	require.Equal(t, "topic created", lines[0].Msg)

	// An existing topic of two replicas: left as it is, and reported.
	created, err := adm.CreateTopic(ctx, 3, 2, nil, "rf.two")
	require.NoError(t, err)
	require.NoError(t, created.Err)
	two, err := kafka.Replicated([]kafka.TopicSpec{{Name: "rf.two", Partitions: 3}}, 3, 2)
	require.NoError(t, err)
	require.NoError(t, kafka.EnsureTopics(ctx, newClient(t, addrs), log, two))
	require.Equal(t, []logLine{
		{Level: "WARN", Msg: "topic replication factor differs from configuration; leaving it (reassign its partitions to change it)", Topic: "rf.two", Configured: 3},
		{Level: "INFO", Msg: "topic exists", Topic: "rf.two", Partitions: 3},
	}, logLines(t, &buf))

	// An existing topic of one replica cannot take min.insync.replicas 2.
	created, err = adm.CreateTopic(ctx, 3, 1, nil, "rf.one")
	require.NoError(t, err)
	require.NoError(t, created.Err)
	one, err := kafka.Replicated([]kafka.TopicSpec{{Name: "rf.one", Partitions: 3}}, 0, 2)
	require.NoError(t, err)
	require.EqualError(t, kafka.EnsureTopics(ctx, newClient(t, addrs), log, one),
		"topic rf.one has 1 replicas, fewer than min.insync.replicas 2: no append could be acknowledged")
}

// TestEnsureTopicsRealKafka checks the same against the local broker (an
// integration test: skipped unless the services run or ERRATA_INTEGRATION=1).
func TestEnsureTopicsRealKafka(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 2) // runs EnsureTopics with the event topics once
	specs := kafka.TopicSpecs(topics.Names(events.NewCatalogRegistry()), 2)
	var names []string
	wantParts := map[string]int{}
	wantConfs := map[string]map[string]string{}
	for _, s := range specs {
		names = append(names, s.Name)
		wantParts[s.Name] = 2
		wantConfs[s.Name] = wantTopicConfig
	}
	require.Contains(t, names, topics.Name(events.TopicPosts))
	require.Contains(t, names, topics.Name(events.TopicDeadLetter))
	cl := newClient(t, brokers)
	adm := kadm.NewClient(cl)

	parts, confs := topicState(t, adm, names...)
	require.Equal(t, wantParts, parts)
	require.Equal(t, wantConfs, confs)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	require.NoError(t, kafka.EnsureTopics(ctx, cl, logging.Discard(), specs))
	parts2, confs2 := topicState(t, adm, names...)
	require.Equal(t, parts, parts2)
	require.Equal(t, confs, confs2)
}
