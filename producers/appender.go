package producers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
)

// Position is where an appended event landed in the log.
type Position struct {
	Topic     string
	Partition int32
	Offset    int64
}

// Appender validates, encodes and synchronously appends events. Append
// returns only after every event is acknowledged by all in-sync replicas, or
// with the error that prevented it.
type Appender struct {
	client   *kgo.Client
	registry *events.Registry
	topics   events.Topics
	now      func() time.Time
}

// NewAppender returns an appender producing through cl (built with
// kafka.ProducerOpts) to the topics of the registry's definitions.
func NewAppender(cl *kgo.Client, reg *events.Registry, topics events.Topics, now func() time.Time) *Appender {
	if now == nil {
		now = time.Now
	}
	return &Appender{client: cl, registry: reg, topics: topics, now: now}
}

// NewEvent wraps payloads into events sharing one correlation id, each with a
// fresh time-ordered id and the current time.
func (a *Appender) NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error) {
	return a.NewEventAt(p, a.now(), correlationID, causationID)
}

// NewEventAt is NewEvent with the event time given: for a producer whose
// decision depends on its own clock (the selector's budget day), so the
// event records the time the decision was made at.
func (a *Appender) NewEventAt(p events.Payload, at time.Time, correlationID, causationID string) (events.Event, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return events.Event{}, fmt.Errorf("event id: %w", err)
	}
	return a.registry.New(p, events.Meta{
		ID: id.String(), Time: at, CorrelationID: correlationID, CausationID: causationID,
	})
}

// NewEventWithID is NewEventAt with the event id given: for an event that
// may be appended more than once (a request retried after a failed append)
// and must then be recognised as one event, its id derives from what it
// records.
func (a *Appender) NewEventWithID(p events.Payload, id string, at time.Time, correlationID, causationID string) (events.Event, error) {
	return a.registry.New(p, events.Meta{ID: id, Time: at, CorrelationID: correlationID, CausationID: causationID})
}

// Append appends events in order and returns their positions.
func (a *Appender) Append(ctx context.Context, evs ...events.Event) ([]Position, error) {
	if len(evs) == 0 {
		return nil, errors.New("nothing to append")
	}
	recs := make([]*kgo.Record, len(evs))
	for i, e := range evs {
		msg, err := a.registry.Encode(e)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", e.ID, err)
		}
		rec := &kgo.Record{Topic: a.topics.Name(msg.Topic), Key: []byte(msg.Key), Value: msg.Value}
		for _, k := range []string{events.HeaderID, events.HeaderType, events.HeaderSubject} {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(msg.Headers[k])})
		}
		recs[i] = rec
	}
	results := a.client.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		return nil, fmt.Errorf("append: %w", err)
	}
	// ProduceSync reports results in completion order; positions are
	// returned in the order of the events given, so map them back by record.
	index := make(map[*kgo.Record]int, len(recs))
	for i, rec := range recs {
		index[rec] = i
	}
	out := make([]Position, len(recs))
	for _, r := range results {
		out[index[r.Record]] = Position{Topic: r.Record.Topic, Partition: r.Record.Partition, Offset: r.Record.Offset}
	}
	return out, nil
}
