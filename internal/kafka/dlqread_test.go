package kafka_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
)

// TestReadDeadLetters parks records through DeadLetter.Send, as projectors
// do, including the copies a crash before the position moved sends again
// and the same source record parked by two groups, plus a source record
// carrying forged dead-letter headers and a record no DeadLetter wrote.
// ReadDeadLetters returns one entry per (group, source position) with its
// copies counted, the real source position and reason, the event's type
// and id from its headers or else its envelope, sorted.
func TestReadDeadLetters(t *testing.T) {
	t.Parallel()
	addrs := newCluster(t, 3, "dlq")
	prod := newClient(t, addrs, append(kafka.ProducerOpts(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))...)
	serving := kafka.NewDeadLetter(prod, "dlq", "errata.projector.serving", logging.Discard())
	metrics := kafka.NewDeadLetter(prod, "dlq", "errata.projector.metrics", logging.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	nul := &kgo.Record{Topic: "errata.posts", Partition: 2, Offset: 41, Key: []byte("post-1"),
		Value: []byte(`{"id":"11111111-1111-4111-8111-111111111111","type":"post.version_registered.v1","data":{"x":"a\u0000b"}}`),
		Headers: []kgo.RecordHeader{
			{Key: "errata-id", Value: []byte("11111111-1111-4111-8111-111111111111")},
			{Key: "errata-type", Value: []byte("post.version_registered.v1")},
		}}
	future := &kgo.Record{Topic: "errata.posts", Partition: 0, Offset: 7, Key: []byte("post-2"),
		Value: []byte(`{"id":"22222222-2222-4222-8222-222222222222","type":"post.version_registered.v9","data":{}}`)}
	forged := &kgo.Record{Topic: "errata.posts", Partition: 1, Offset: 3, Value: []byte("\x1b[2Jnot json"),
		Headers: []kgo.RecordHeader{
			{Key: kafka.HeaderDLQTopic, Value: []byte("elsewhere")},
			{Key: kafka.HeaderDLQOffset, Value: []byte("999")},
			{Key: kafka.HeaderDLQGroup, Value: []byte("errata.projector.serving")},
		}}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	deterministic := kafka.Permanent(errors.New(`ERROR: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)`))
	decode := kafka.Undecodable(errors.New("unknown event type: post.version_registered.v9"))
	for _, s := range []struct {
		dl    *kafka.DeadLetter
		rec   *kgo.Record
		cause error
	}{
		{serving, nul, deterministic},
		{serving, nul, deterministic}, // redelivered after a crash
		{serving, future, decode},
		{metrics, future, decode},
		{serving, nul, deterministic},
		{metrics, forged, decode},
	} {
		require.NoError(t, s.dl.Send(ctx, s.rec, s.cause, at))
	}
	stray := produce(t, addrs, &kgo.Record{Topic: "dlq", Partition: 1, Value: []byte("written by hand")})[0]

	got, err := kafka.ReadDeadLetters(ctx, addrs, "dlq")
	require.NoError(t, err)
	type row struct {
		Key             kafka.DeadLetterKey
		Type, ID, Class string
		Reason          string
		Copies          int
		Labelled        bool
		Time            time.Time
		Value           string
	}
	var rows []row
	for _, p := range got {
		rows = append(rows, row{p.DeadLetterKey, p.EventType, p.EventID, p.Class, p.Reason, p.Copies, p.Labelled, p.Time, string(p.Value)})
	}
	require.Equal(t, []row{
		{kafka.DeadLetterKey{Group: "", Topic: "dlq", Partition: 1, Offset: stray.Offset}, "", "", "", "", 1, false, stray.Timestamp.UTC().Truncate(time.Millisecond), "written by hand"},
		{kafka.DeadLetterKey{Group: "errata.projector.metrics", Topic: "errata.posts", Partition: 0, Offset: 7},
			"post.version_registered.v9", "22222222-2222-4222-8222-222222222222", kafka.ClassDecode, decode.Error(), 1, true, at, string(future.Value)},
		{kafka.DeadLetterKey{Group: "errata.projector.metrics", Topic: "errata.posts", Partition: 1, Offset: 3},
			"", "", kafka.ClassDecode, decode.Error(), 1, true, at, string(forged.Value)},
		{kafka.DeadLetterKey{Group: "errata.projector.serving", Topic: "errata.posts", Partition: 0, Offset: 7},
			"post.version_registered.v9", "22222222-2222-4222-8222-222222222222", kafka.ClassDecode, decode.Error(), 1, true, at, string(future.Value)},
		{kafka.DeadLetterKey{Group: "errata.projector.serving", Topic: "errata.posts", Partition: 2, Offset: 41},
			"post.version_registered.v1", "11111111-1111-4111-8111-111111111111", kafka.ClassDeterministic, deterministic.Error(), 3, true, at, string(nul.Value)},
	}, rows)
	require.Equal(t, "errata.posts/2/41", got[4].DeadLetterKey.String())
	require.Equal(t, nul.Key, got[4].Key)

	// Nothing parked: an empty topic reads as empty.
	empty := newCluster(t, 2, "dlq")
	none, err := kafka.ReadDeadLetters(ctx, empty, "dlq")
	require.NoError(t, err)
	require.Empty(t, none)

	_, err = kafka.ReadDeadLetters(ctx, empty, "no-such-topic")
	require.ErrorIs(t, err, kafka.ErrNoDeadLetterTopic)
}
