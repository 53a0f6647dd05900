package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"
	"unicode/utf8"
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
	// decoders holds *streamDecoder: strict decoders kept with their
	// buffers between payloads (see decodePooled).
	decoders sync.Pool
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
//
// The envelope as Encode writes it (exact field names, each once, plain
// strings, the payload an object) is read by decodePlainEnvelope without
// encoding/json, and a payload by its decodePlain or a pooled decoder;
// anything else, and any record that fails, is decoded again by
// strictUnmarshal, whose acceptance and error messages are the contract
// (parking reasons and replay identity depend on them). decode_oracle_test.go
// compares the two ways.
func (r *Registry) Decode(value []byte) (Event, error) {
	if env, ok := decodePlainEnvelope(value); ok {
		if ev, err := r.decodePayload(env); err == nil {
			return ev, nil
		}
	}
	var env Envelope
	if err := strictUnmarshal(value, &env); err != nil {
		return Event{}, fmt.Errorf("decode envelope: %w", err)
	}
	return r.decodePayload(env)
}

// decodePayload validates a decoded envelope and decodes, validates and
// upcasts the payload it carries.
func (r *Registry) decodePayload(env Envelope) (Event, error) {
	if err := env.Validate(); err != nil {
		return Event{}, err
	}
	d, ok := r.defs[env.Type]
	if !ok {
		return Event{}, fmt.Errorf("%w: %s", ErrUnknownType, env.Type)
	}
	// Each way starts from a new payload: a failed one may have set fields.
	p := d.New()
	if pd, ok := p.(plainDecoder); !ok || !pd.decodePlain(env.Data) {
		if p = d.New(); !r.decodePooled(env.Data, p) {
			p = d.New()
			if err := strictUnmarshal(env.Data, p); err != nil {
				return Event{}, fmt.Errorf("decode %s: %w", env.Type, err)
			}
		}
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

// streamDecoder is a strict json.Decoder reading the payloads given to it
// one after another as one stream, so that its buffer, grown to the largest
// payload, is not allocated and grown again for every record.
type streamDecoder struct {
	dec  *json.Decoder
	in   []byte // what Read has not yet given dec
	seen int64  // bytes given to the stream so far
}

// Read implements io.Reader for dec.
func (s *streamDecoder) Read(p []byte) (int, error) {
	if len(s.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.in)
	s.in = s.in[n:]
	return n, nil
}

// decodePooled decodes data, one complete JSON value, into v with a pooled
// streamDecoder and reports whether it succeeded; then v is what
// strictUnmarshal gives, since the decoder read exactly data as its next
// value, with nothing after it (InputOffset is the end of data). On false
// (v may be partly set) the caller decodes a new v with strictUnmarshal,
// whose error messages are the contract; the decoder, which may keep an
// error or unread bytes, is dropped.
func (r *Registry) decodePooled(data []byte, v any) bool {
	s, _ := r.decoders.Get().(*streamDecoder)
	if s == nil {
		s = &streamDecoder{}
		s.dec = json.NewDecoder(s)
		s.dec.DisallowUnknownFields()
	}
	s.in = data
	s.seen += int64(len(data))
	ok := s.dec.Decode(v) == nil && s.dec.InputOffset() == s.seen && len(s.in) == 0
	s.in = nil
	if ok {
		r.decoders.Put(s)
	}
	return ok
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

// Bits of the envelope fields decodePlainEnvelope has read.
const (
	envID = 1 << iota
	envType
	envSubject
	envTime
	envCorrelationID
	envCausationID
	envData
)

// decodePlainEnvelope reads the envelope of value without encoding/json, in
// the one shape Encode writes: an object whose keys are the exact field
// names, each at most once, whose values are strings without escapes,
// control characters or invalid UTF-8, "data" an object, and nothing but
// JSON white space around it. Such a string decodes to its bytes and
// "time" is read by time.Time's UnmarshalJSON, as encoding/json does; the
// payload's bytes are found by matching brackets and are only valid JSON if
// strictUnmarshal accepts them as the payload. It answers false for any
// other input, which the caller then decodes with strictUnmarshal.
// TestDecodeMatchesStrict and FuzzDecodeMatchesStrict compare the two.
func decodePlainEnvelope(value []byte) (Envelope, bool) {
	var env Envelope
	i := skipJSONSpace(value, 0)
	if i >= len(value) || value[i] != '{' {
		return Envelope{}, false
	}
	var seen uint8
	for i++; ; {
		i = skipJSONSpace(value, i)
		key, next, ok := plainJSONString(value, i)
		if !ok {
			return Envelope{}, false
		}
		i = skipJSONSpace(value, next)
		if i >= len(value) || value[i] != ':' {
			return Envelope{}, false
		}
		i = skipJSONSpace(value, i+1)
		var bit uint8
		switch string(key) {
		case "id":
			bit, next, ok = envID, 0, false
			if s, end, sok := plainJSONString(value, i); sok {
				env.ID, next, ok = string(s), end, true
			}
		case "type":
			bit, next, ok = envType, 0, false
			if s, end, sok := plainJSONString(value, i); sok {
				env.Type, next, ok = string(s), end, true
			}
		case "subject":
			bit, next, ok = envSubject, 0, false
			if s, end, sok := plainJSONString(value, i); sok {
				env.Subject, next, ok = string(s), end, true
			}
		case "correlation_id":
			bit, next, ok = envCorrelationID, 0, false
			if s, end, sok := plainJSONString(value, i); sok {
				env.CorrelationID, next, ok = string(s), end, true
			}
		case "causation_id":
			bit, next, ok = envCausationID, 0, false
			if s, end, sok := plainJSONString(value, i); sok {
				env.CausationID, next, ok = string(s), end, true
			}
		case "time":
			bit = envTime
			_, next, ok = plainJSONString(value, i)
			ok = ok && env.Time.UnmarshalJSON(value[i:next]) == nil
		case "data":
			bit = envData
			next, ok = jsonObjectEnd(value, i)
			if ok {
				env.Data = value[i:next]
			}
		default:
			return Envelope{}, false
		}
		if !ok || seen&bit != 0 {
			return Envelope{}, false
		}
		seen |= bit
		i = skipJSONSpace(value, next)
		if i >= len(value) {
			return Envelope{}, false
		}
		switch value[i] {
		case ',':
			i++
		case '}':
			if skipJSONSpace(value, i+1) != len(value) {
				return Envelope{}, false
			}
			return env, true
		default:
			return Envelope{}, false
		}
	}
}

// plainDecoder is implemented by the payloads of the most frequent records
// whose fields are all strings: decodePlain reads data in the plain form
// Encode writes (see decodePlainObject) into a new payload, or answers
// false, and the payload is then decoded by strictUnmarshal.
type plainDecoder interface {
	decodePlain(data []byte) bool
}

// plainField names one field of a payload for decodePlainObject: a string
// (str) or a bool (boolean).
type plainField struct {
	name    string
	str     *string
	boolean *bool
}

// decodePlainObject reads data when it is an object whose keys are exact
// names of fields, each at most once, and whose values are plain strings
// (see plainJSONString) for string fields and true or false for bool
// fields, with only JSON white space around and between them; then every
// byte of it has been checked, and strictUnmarshal would give the same
// fields. It answers false for anything else (null included).
func decodePlainObject(data []byte, fields []plainField) bool {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' || len(fields) > 64 {
		return false
	}
	var seen uint64
	for i++; ; {
		i = skipJSONSpace(data, i)
		key, next, ok := plainJSONString(data, i)
		if !ok {
			return false
		}
		i = skipJSONSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipJSONSpace(data, i+1)
		f := slices.IndexFunc(fields, func(f plainField) bool { return f.name == string(key) })
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		switch field := fields[f]; {
		case field.str != nil:
			s, end, ok := plainJSONString(data, i)
			if !ok {
				return false
			}
			*field.str, next = string(s), end
		case bytes.HasPrefix(data[i:], []byte("true")):
			*field.boolean, next = true, i+len("true")
		case bytes.HasPrefix(data[i:], []byte("false")):
			*field.boolean, next = false, i+len("false")
		default:
			return false
		}
		i = skipJSONSpace(data, next)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i++
		case '}':
			return skipJSONSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipJSONSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// plainJSONString reads the string starting at b[i] when it has no escape,
// no control character and only valid UTF-8, so that its bytes are its
// value; it returns them and the index after the closing quote.
func plainJSONString(b []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	start := i + 1
	ascii := true
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(b[start:j]) {
				return nil, 0, false
			}
			return b[start:j], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, 0, false
}

// jsonObjectEnd returns the index after the object starting at b[i],
// matching brackets outside strings. It does not validate the object.
func jsonObjectEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, true
			}
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return 0, false
			}
		}
	}
	return 0, false
}

// decodePlain implements plainDecoder: views are most of the posts topic.
func (p *PostViewRecordedV1) decodePlain(data []byte) bool {
	return decodePlainObject(data, []plainField{
		{name: "post_id", str: &p.PostID}, {name: "post_version_id", str: &p.PostVersionID},
		{name: "platform", str: &p.Platform}, {name: "external_id", str: &p.ExternalID},
		{name: "viewer_key", str: &p.ViewerKey}, {name: "ip_range_key", str: &p.IPRangeKey},
		{name: "authenticated", boolean: &p.Authenticated},
	})
}

// decodePlain implements plainDecoder.
func (p *PostViewRecordedV2) decodePlain(data []byte) bool {
	return decodePlainObject(data, []plainField{
		{name: "post_id", str: &p.PostID}, {name: "post_version_id", str: &p.PostVersionID},
		{name: "platform", str: &p.Platform}, {name: "external_id", str: &p.ExternalID},
		{name: "viewer_key", str: &p.ViewerKey}, {name: "viewer_kind", str: &p.ViewerKind},
		{name: "ip_range_key", str: &p.IPRangeKey},
	})
}
