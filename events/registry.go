package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// ErrUnknownType is returned when decoding a type the registry does not know.
var ErrUnknownType = errors.New("unknown event type")

// Definition ties a versioned type string to its payload constructor, its
// topic and the aggregate its subject names. The partition key is always the
// subject, so all events of one aggregate keep their order.
type Definition struct {
	Type      string
	Topic     Topic
	Aggregate string
	New       func() Payload
	// Subject derives the aggregate id from the payload.
	Subject func(Payload) string
	// UpcastTo and Upcast mark a superseded version: a stored record of Type
	// still decodes (its payload is validated as written), and Upcast then
	// turns it into a payload of UpcastTo, the next version, which is
	// registered too and validated in turn. Chains (v1 -> v2 -> v3) are
	// followed, so consumers only ever see the newest version while the log
	// keeps the old records forever. Upcast must be pure: the same old
	// payload always gives the same new one, so replays stay identical.
	UpcastTo string
	Upcast   func(Payload) (Payload, error)
}

// Registry maps type strings to definitions. It is built once and passed
// around as a value; nothing registers itself through init().
type Registry struct {
	defs map[string]Definition
}

// NewRegistry builds a registry and rejects duplicate or malformed definitions.
func NewRegistry(defs ...Definition) (*Registry, error) {
	r := &Registry{defs: make(map[string]Definition, len(defs))}
	for _, d := range defs {
		if !validType(d.Type) {
			return nil, fmt.Errorf("event type %q is not <aggregate>.<name>.v<N>", d.Type)
		}
		if d.New == nil || d.Subject == nil || d.Topic == "" {
			return nil, fmt.Errorf("event type %q: New, Subject and Topic are required", d.Type)
		}
		if got := d.New().EventType(); got != d.Type {
			return nil, fmt.Errorf("event type %q: payload reports %q", d.Type, got)
		}
		if _, dup := r.defs[d.Type]; dup {
			return nil, fmt.Errorf("event type %q defined twice", d.Type)
		}
		if (d.UpcastTo == "") != (d.Upcast == nil) {
			return nil, fmt.Errorf("event type %q: UpcastTo and Upcast go together", d.Type)
		}
		r.defs[d.Type] = d
	}
	for _, d := range r.defs {
		if err := r.checkUpcastChain(d); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// checkUpcastChain checks that d's upcasts reach a current type of the same
// topic and aggregate without a cycle.
func (r *Registry) checkUpcastChain(d Definition) error {
	seen := map[string]bool{d.Type: true}
	for cur := d; cur.UpcastTo != ""; {
		next, ok := r.defs[cur.UpcastTo]
		if !ok {
			return fmt.Errorf("event type %q upcasts to unregistered %q", cur.Type, cur.UpcastTo)
		}
		if next.Topic != d.Topic || next.Aggregate != d.Aggregate {
			return fmt.Errorf("event type %q upcasts to %q of another topic or aggregate", cur.Type, next.Type)
		}
		if seen[next.Type] {
			return fmt.Errorf("event type %q: upcast cycle through %q", d.Type, next.Type)
		}
		seen[next.Type] = true
		cur = next
	}
	return nil
}

// CurrentType is the type a stored record of eventType decodes to: itself,
// or the end of its upcast chain. Consumers that filter records by the
// errata-type header before decoding match stored types through it.
func (r *Registry) CurrentType(eventType string) string {
	d, ok := r.defs[eventType]
	for ok && d.UpcastTo != "" {
		d, ok = r.defs[d.UpcastTo]
	}
	if !ok {
		return eventType
	}
	return d.Type
}

// StoredTypes lists every type whose records decode to currentType (itself
// included), in sorted order: the header values a consumer of currentType
// must accept.
func (r *Registry) StoredTypes(currentType string) []string {
	var out []string
	for _, t := range r.Types() {
		if r.CurrentType(t) == currentType {
			out = append(out, t)
		}
	}
	return out
}

// Superseded reports whether eventType is an old version that decodes to a
// newer one. Producers write only current types.
func (r *Registry) Superseded(eventType string) bool {
	d, ok := r.defs[eventType]
	return ok && d.UpcastTo != ""
}

// Lookup returns the definition of a type string.
func (r *Registry) Lookup(eventType string) (Definition, bool) {
	d, ok := r.defs[eventType]
	return d, ok
}

// Types lists the registered type strings in sorted order.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.defs))
	for t := range r.defs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Topics lists the logical topics the registered types are written to.
func (r *Registry) Topics() []Topic {
	seen := map[Topic]bool{}
	var out []Topic
	for _, t := range r.Types() {
		if tp := r.defs[t].Topic; !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	return out
}

// Message is an encoded event ready to be appended to the log.
type Message struct {
	Topic   Topic
	Key     string
	Value   []byte
	Headers map[string]string
	Event   Event
}

// New wraps a payload into an event, validating it and deriving its subject.
func (r *Registry) New(p Payload, m Meta) (Event, error) {
	d, ok := r.defs[p.EventType()]
	if !ok {
		return Event{}, fmt.Errorf("%w: %s", ErrUnknownType, p.EventType())
	}
	if err := p.Validate(); err != nil {
		return Event{}, fmt.Errorf("%s: %w", p.EventType(), err)
	}
	if m.ID == "" {
		return Event{}, errors.New("event id is required")
	}
	if m.Time.IsZero() {
		return Event{}, errors.New("event time is required")
	}
	return Event{
		ID:            m.ID,
		Subject:       d.Subject(p),
		Time:          m.Time.UTC(),
		CorrelationID: m.CorrelationID,
		CausationID:   m.CausationID,
		Payload:       p,
	}, nil
}

// Encode validates an event and renders its wire form.
func (r *Registry) Encode(e Event) (Message, error) {
	if e.Payload == nil {
		return Message{}, errors.New("event has no payload")
	}
	d, ok := r.defs[e.Payload.EventType()]
	if !ok {
		return Message{}, fmt.Errorf("%w: %s", ErrUnknownType, e.Payload.EventType())
	}
	if err := e.Payload.Validate(); err != nil {
		return Message{}, fmt.Errorf("%s: %w", d.Type, err)
	}
	if want := d.Subject(e.Payload); e.Subject != want {
		return Message{}, fmt.Errorf("%s: subject %q does not match payload (%q)", d.Type, e.Subject, want)
	}
	data, err := marshalNoEscape(e.Payload)
	if err != nil {
		return Message{}, fmt.Errorf("%s: encode payload: %w", d.Type, err)
	}
	env := Envelope{
		ID:            e.ID,
		Type:          d.Type,
		Subject:       e.Subject,
		Time:          e.Time.UTC().Truncate(time.Microsecond),
		CorrelationID: e.CorrelationID,
		CausationID:   e.CausationID,
		Data:          data,
	}
	if err := env.Validate(); err != nil {
		return Message{}, err
	}
	value, err := marshalNoEscape(env)
	if err != nil {
		return Message{}, fmt.Errorf("%s: encode envelope: %w", d.Type, err)
	}
	e.Time = env.Time
	return Message{
		Topic: d.Topic,
		Key:   e.Subject,
		Value: value,
		Headers: map[string]string{
			HeaderID:      env.ID,
			HeaderType:    env.Type,
			HeaderSubject: env.Subject,
		},
		Event: e,
	}, nil
}

// Decode parses a record value: the envelope first, then the payload it names.
// Unknown fields are rejected so a typo in a producer cannot pass silently.
func (r *Registry) Decode(value []byte) (Event, error) {
	var env Envelope
	if err := strictUnmarshal(value, &env); err != nil {
		return Event{}, fmt.Errorf("decode envelope: %w", err)
	}
	if err := env.Validate(); err != nil {
		return Event{}, err
	}
	d, ok := r.defs[env.Type]
	if !ok {
		return Event{}, fmt.Errorf("%w: %s", ErrUnknownType, env.Type)
	}
	p := d.New()
	if err := strictUnmarshal(env.Data, p); err != nil {
		return Event{}, fmt.Errorf("decode %s: %w", env.Type, err)
	}
	if err := p.Validate(); err != nil {
		return Event{}, fmt.Errorf("%s: %w", env.Type, err)
	}
	if want := d.Subject(p); env.Subject != want {
		return Event{}, fmt.Errorf("%s: subject %q does not match payload (%q)", env.Type, env.Subject, want)
	}
	p, err := r.upcast(d, p, env.Subject)
	if err != nil {
		return Event{}, err
	}
	return Event{
		ID:            env.ID,
		Subject:       env.Subject,
		Time:          env.Time.UTC(),
		CorrelationID: env.CorrelationID,
		CausationID:   env.CausationID,
		Payload:       p,
	}, nil
}

// upcast follows d's upcast chain from p, validating every step, and
// checks that the subject (the record key) is unchanged: an upcast never
// moves an event to another aggregate.
func (r *Registry) upcast(d Definition, p Payload, subject string) (Payload, error) {
	for d.UpcastTo != "" {
		next, err := d.Upcast(p)
		if err != nil {
			return nil, fmt.Errorf("upcast %s to %s: %w", d.Type, d.UpcastTo, err)
		}
		if next == nil || next.EventType() != d.UpcastTo {
			return nil, fmt.Errorf("upcast %s: gave %T, want %s", d.Type, next, d.UpcastTo)
		}
		nd := r.defs[d.UpcastTo]
		if err := next.Validate(); err != nil {
			return nil, fmt.Errorf("upcast %s to %s: %w", d.Type, nd.Type, err)
		}
		if want := nd.Subject(next); want != subject {
			return nil, fmt.Errorf("upcast %s to %s: subject %q changed to %q", d.Type, nd.Type, subject, want)
		}
		d, p = nd, next
	}
	return p, nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// marshalNoEscape encodes JSON without HTML escaping, so text such as "<b>"
// stays readable in the log, and without a trailing newline.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
