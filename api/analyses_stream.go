package api

// GET /api/v1/analyses/{id}/events: the job's events as server-sent
// events, replayed from the start, then live until the analysis completes
// or fails for good, then the stream ends.
//
// The source is the log itself (not a projection): the analyses topic is
// keyed by analysis id, so all of a job's events are in one partition, in
// order. A stream reads that partition from the job's creation (the time
// of its first request in the serving projection, less a margin for
// clocks) and passes on the records of the job's key. Each SSE event is
//
//	id: <offset of the record>
//	event: <event type, e.g. analysis.claim_extracted.v1>
//	data: {"type":…,"time":…,"data":{…payload…}}
//
// A client that reconnects with Last-Event-ID resumes after that record.
// The payload is the event's, less what is not the public's: the
// requester's keyed hash and the exact bytes of model exchanges (the
// audit trail has them). Comments (": keep-alive") keep the connection
// open; open streams are bounded per client and in all.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ratelimit"
)

// clockMargin is how much earlier than the job's creation a stream starts
// reading: records are stamped by the producing client's clock, events by
// the appender's, and a broker may stamp records itself.
const clockMargin = 5 * time.Minute

// streamWriteTimeout bounds one write to a stream's client: one that reads
// nothing for this long is disconnected.
const streamWriteTimeout = 30 * time.Second

// redacted are payload fields of analysis events never streamed.
var redacted = map[string][]string{
	events.TypeAnalysisRequestedV1:        {"requester_key"},
	events.TypeAnalysisExchangeRecordedV1: {"raw_request", "raw_response"},
}

// streamSlots bounds open streams per client and in all.
type streamSlots struct {
	mu        sync.Mutex
	perClient int
	total     int
	open      map[string]int
	all       int
}

func newStreamSlots(perClient, total int) *streamSlots {
	return &streamSlots{perClient: perClient, total: total, open: map[string]int{}}
}

func (s *streamSlots) acquire(client string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all >= s.total || s.open[client] >= s.perClient {
		return false
	}
	s.open[client]++
	s.all++
	return true
}

func (s *streamSlots) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[client]--; s.open[client] <= 0 {
		delete(s.open, client)
	}
	s.all--
}

// streamEvent is one event as streamed.
type streamEvent struct {
	offset int64
	typ    string
	data   []byte // the SSE data line: {"type","time","data"}
	final  bool   // the analysis ended with it
}

// analysisEvents is GET /api/v1/analyses/{id}/events.
func (s *Server) analysisEvents(c *fiber.Ctx) error {
	id, err := analysisID(c)
	if err != nil {
		return err
	}
	client := ratelimit.ClientKey(s.clientIP(c))
	if !s.streams.acquire(client) {
		e := apiErr(fiber.StatusTooManyRequests, codeTooManyStreams,
			"too many open event streams from this network (at most %d); close one first", s.analyses.StreamsPerClient)
		e.retryAfter = 5
		return e
	}
	streaming := false
	defer func() {
		if !streaming {
			s.streams.release(client)
		}
	}()
	job, err := s.job(c.UserContext(), id)
	if err != nil {
		return err
	}
	after := int64(-1)
	if v := strings.TrimSpace(c.Get("Last-Event-ID")); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			after = n
		}
	}
	follow := kafka.KeyFollow{
		Topic: s.analyses.Topic,
		Key:   []byte(id),
		After: after,
		// A finished job's stream ends at the log's end, even when what
		// the client resumes after was its last event.
		ToEnd: job.Status == events.StatusComplete || job.Status == events.StatusFailed,
	}
	if !job.CreatedAt.IsZero() {
		follow.Since = job.CreatedAt.Add(-clockMargin)
	}

	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("X-Accel-Buffering", "no")
	conn := c.Context().Conn()
	streaming = true
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.streams.release(client)
		s.stream(w, func() { _ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) }, id, follow)
	})
	return nil
}

// stream writes the job's events to w until the job ends, the client goes
// away, the stream's time is up or the server shuts down. extend pushes
// the connection's write deadline forward before each flush.
func (s *Server) stream(w *bufio.Writer, extend func(), id string, follow kafka.KeyFollow) {
	ctx, cancel := context.WithTimeout(s.streamCtx, s.analyses.StreamMaxDuration)
	defer cancel()
	flush := func() bool {
		extend()
		return w.Flush() == nil
	}
	if _, err := w.WriteString("retry: 3000\n\n"); err != nil || !flush() {
		return
	}
	evs := make(chan streamEvent, 64)
	errc := make(chan error, 1)
	go func() {
		defer close(evs)
		errc <- s.analyses.Log.Follow(ctx, follow, func(rec *kgo.Record) (bool, error) {
			ev, ok := s.streamEventOf(rec, id)
			if !ok {
				return false, nil
			}
			select {
			case evs <- ev:
			case <-ctx.Done():
				return true, nil
			}
			return ev.final, nil
		})
	}()
	// However the stream ends, the read of the log ends with it.
	defer func() {
		cancel()
		for range evs {
		}
	}()
	heartbeat := time.NewTicker(s.analyses.Heartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				err := <-errc
				if err != nil && ctx.Err() == nil {
					s.log.Warn("analysis event stream: log unavailable", "analysis_id", id, "err", err)
					_, _ = w.WriteString(": the event log is unavailable; reconnecting\n\n")
					flush()
				}
				return
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.offset, ev.typ, ev.data); err != nil || !flush() {
				return
			}
		case <-heartbeat.C:
			if _, err := w.WriteString(": keep-alive\n\n"); err != nil || !flush() {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// streamEventOf renders a record of the job's key; records that are not
// well-formed analysis events of the job are skipped.
func (s *Server) streamEventOf(rec *kgo.Record, id string) (streamEvent, bool) {
	ev, err := s.analyses.Registry.Decode(rec.Value)
	if err != nil {
		s.log.Warn("analysis event stream: undecodable record skipped", "analysis_id", id,
			"partition", rec.Partition, "offset", rec.Offset, "err", err)
		return streamEvent{}, false
	}
	typ := ev.Type()
	if !strings.HasPrefix(typ, "analysis.") || ev.Subject != id {
		return streamEvent{}, false
	}
	payload, err := json.Marshal(ev.Payload)
	if err != nil {
		return streamEvent{}, false
	}
	if drop := redacted[typ]; len(drop) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(payload, &m); err != nil {
			return streamEvent{}, false
		}
		for _, k := range drop {
			delete(m, k)
		}
		if payload, err = json.Marshal(m); err != nil {
			return streamEvent{}, false
		}
	}
	data, err := json.Marshal(struct {
		Type string          `json:"type"`
		Time string          `json:"time"`
		Data json.RawMessage `json:"data"`
	}{typ, ev.Time.UTC().Format(isoMillis), payload})
	if err != nil {
		return streamEvent{}, false
	}
	final := typ == events.TypeAnalysisCompletedV1
	if f, ok := ev.Payload.(*events.AnalysisFailedV1); ok && !f.Retryable {
		final = true
	}
	return streamEvent{offset: rec.Offset, typ: typ, data: data, final: final}, true
}
