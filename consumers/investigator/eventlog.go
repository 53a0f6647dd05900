package investigator

import (
	"context"
	"fmt"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/investigations"
)

// EventLog appends the events of investigations: each event is correlated
// with its investigation, and the events of one call are appended in order
// in one request (one key, one partition).
type EventLog struct {
	app      *producers.Appender
	exchange ExchangeObserver
}

// ExchangeObserver learns of each model exchange once its event is in the
// log (token and cost metrics). Only live calls append exchanges, so
// replays and rebuilds never reach it.
type ExchangeObserver func(ex *events.InvestigationExchangeRecordedV1)

// NewEventLog returns an event log over an appender.
func NewEventLog(app *producers.Appender) *EventLog { return &EventLog{app: app} }

// WithExchangeObserver makes the log report every exchange it appends to o
// (nil: none) and returns the log.
func (l *EventLog) WithExchangeObserver(o ExchangeObserver) *EventLog {
	l.exchange = o
	return l
}

// Append appends payloads in order and returns their events.
func (l *EventLog) Append(ctx context.Context, investigationID string, payloads ...events.Payload) error {
	_, err := l.AppendEvents(ctx, investigationID, payloads...)
	return err
}

// AppendEvents appends payloads in order and returns their events.
func (l *EventLog) AppendEvents(ctx context.Context, investigationID string, payloads ...events.Payload) ([]events.Event, error) {
	evs := make([]events.Event, 0, len(payloads))
	for _, p := range payloads {
		ev, err := l.app.NewEvent(p, investigationID, "")
		if err != nil {
			return nil, fmt.Errorf("investigation %s: %w", investigationID, err)
		}
		evs = append(evs, ev)
	}
	if _, err := l.app.Append(ctx, evs...); err != nil {
		return nil, fmt.Errorf("investigation %s: %w", investigationID, err)
	}
	if l.exchange != nil {
		for _, p := range payloads {
			if ex, ok := p.(*events.InvestigationExchangeRecordedV1); ok {
				l.exchange(ex)
			}
		}
	}
	return evs, nil
}

// AppendKeyAttached appends the record of a user's key attached to an
// investigation: the same event the request that stored the key appends
// (investigations.KeyAttached), so the two are one event to every reader.
func (l *EventLog) AppendKeyAttached(ctx context.Context, a keystore.Attachment) error {
	ev, err := investigations.KeyAttached(l.app, a, a.InvestigationID)
	if err != nil {
		return fmt.Errorf("investigation %s: %w", a.InvestigationID, err)
	}
	if _, err := l.app.Append(ctx, ev); err != nil {
		return fmt.Errorf("investigation %s: %w", a.InvestigationID, err)
	}
	return nil
}
