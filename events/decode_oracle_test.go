package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decodeOracle is Registry.Decode as it was before decodePlainEnvelope, kept
// as the reference the faster decoding must match: the same records
// accepted with the same events, the same records refused with the same
// messages (parking reasons are stored and compared by replays).
func decodeOracle(r *Registry, value []byte) (Event, error) {
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

// sameDecode fails t unless Decode and decodeOracle agree on value.
func sameDecode(t *testing.T, r *Registry, value []byte) {
	t.Helper()
	want, wantErr := decodeOracle(r, value)
	got, gotErr := r.Decode(value)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("Decode(%q): error %v, oracle %v", value, gotErr, wantErr)
	}
	if wantErr != nil {
		// A payload's Validate may join its errors in map order: compare
		// the lines as sets.
		if g, w := errorLines(gotErr), errorLines(wantErr); !slices.Equal(g, w) {
			t.Fatalf("Decode(%q): error %q, oracle %q", value, gotErr, wantErr)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q):\n got %#v\nwant %#v", value, got, want)
	}
	// Accepted by the plain reading: the envelope is the strict one.
	if env, ok := decodePlainEnvelope(value); ok {
		var strict Envelope
		if err := strictUnmarshal(value, &strict); err != nil {
			t.Fatalf("plain envelope of %q accepted, strict refused: %v", value, err)
		}
		if !reflect.DeepEqual(env, strict) {
			t.Fatalf("envelope of %q:\n got %#v\nwant %#v", value, env, strict)
		}
	}
}

func errorLines(err error) []string {
	lines := strings.Split(err.Error(), "\n")
	slices.Sort(lines)
	return lines
}

// envelopeSeeds are the golden records, compact too, and hand-made variants
// at every edge of the plain reading: case-folded, escaped, duplicated,
// unknown and null fields, white space, trailing bytes, invalid UTF-8,
// strings and brackets inside the payload, other JSON types.
func envelopeSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	upcast, err := filepath.Glob(filepath.Join("testdata", "upcast", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var seeds [][]byte
	for _, f := range append(files, upcast...) {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, b, compact.Bytes())
	}
	view, err := os.ReadFile(filepath.Join("testdata", TypePostViewRecordedV2+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, view); err != nil {
		tb.Fatal(err)
	}
	v := c.String()
	edit := func(from, to string) []byte { return []byte(strings.Replace(v, from, to, 1)) }
	seeds = append(seeds,
		[]byte(v+" \n\t\r"), []byte(" \n"+v), []byte(v+"}"), []byte(v+"]"), []byte(v+"x"), []byte(v+v), []byte(v+" {}"),
		[]byte("\xef\xbb\xbf"+v), []byte(v[:len(v)-1]), []byte(v[:len(v)/2]), []byte("{}"), []byte("null"), []byte(""), []byte("[]"), []byte(`"x"`),
		edit(`"id"`, `"ID"`), edit(`"type"`, `"Type"`), edit(`"subject"`, `"ſubject"`), edit(`"time"`, `"TIME"`),
		edit(`"data"`, `"Data"`), edit(`"correlation_id"`, `"Correlation_ID"`), edit(`"causation_id"`, `"causation_Id"`),
		edit(`"id"`, `"\u0069d"`), edit(`"type":"`, `"type":"\u0070`), edit(`"subject":"`, `"subject":"\u00e9`),
		edit(`"corr-1"`, `"corr-\u00e9"`), edit(`"corr-1"`, `"corr-é"`), edit(`"corr-1"`, "\"corr-\xff\""), edit(`"corr-1"`, "\"corr-\xed\xa0\x80\""),
		edit(`"corr-1"`, "\"corr-\x01\""), edit(`"corr-1"`, `"corr-\""`), edit(`"corr-1"`, `null`), edit(`"corr-1"`, `1`), edit(`"corr-1"`, `""`),
		edit(`"causation_id":"cause-1"`, `"causation_id":"cause-1","causation_id":"cause-2"`),
		edit(`"id":`, `"id":"0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f71","id":`),
		edit(`"data":`, `"data":{},"data":`), edit(`"data":`, `"extra":1,"data":`), edit(`"data":`, `"":1,"data":`),
		edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":null`), edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":"2026-11-22T10:30:00.123456+01:00"`),
		edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":"2026-11-22T10:30:00\u002e123456Z"`), edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":"2026-11-22 10:30:00Z"`),
		edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":"2026-11-22t10:30:00.123456z"`), edit(`"time":"2026-11-22T10:30:00.123456Z"`, `"time":20261122`),
		edit(`"data":{`, `"data":null,"x":{`), edit(`"data":{`, `"data":[{`), edit(`"data":{`, `"data":"{`), edit(`"data":{`, `"data":{"a":"}",`),
		edit(`"data":{`, `"data":{"platform":"LESS]}WRONG",`), edit(`"data":{`, `"data":{"a":"\"}",`), edit(`"data":{`, `"data":{"a":[1}],`),
		edit(`"data":{`, `"data" : { `), edit(`,"data"`, ` , "data"`), edit(`{"id"`, `{ "id"`), edit(`"data":{`, "\"data\":{\"viewer_kind\":\"\xff\","),
		edit(`"data":{`, `"data":{"Viewer_Kind":"ANONYMOUS",`), edit(`"data":{`, `"data":{"viewer_kind":"ANONYMOUS",`), edit(`"data":{`, `"data":{"unknown":1,`),
		edit(`"data":{`, `"data":{"viewer_kind":null,`), edit(`"data":{`, `"data":{"ip_range_key":1e2,`), edit(`"data":{`, `"data":{"a":tru,`),
		edit(`"type":"post.view_recorded.v2"`, `"type":"post.view_recorded.v9"`), edit(`"type":"post.view_recorded.v2"`, `"type":"Post.view_recorded.v2"`),
		edit(`"type":"post.view_recorded.v2"`, `"type":"post.view_recorded.v1"`), edit(`"subject":"`, `"subject":"x`),
		edit(`"id":"`, `"id":"X`), edit(`"data":{`, `"data":{}, "more":{`),
	)
	v1, err := os.ReadFile(filepath.Join("testdata", TypePostViewRecordedV1+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	c.Reset()
	if err := json.Compact(&c, v1); err != nil {
		tb.Fatal(err)
	}
	for _, auth := range []string{"true", "false", " true ", "null", `"true"`, "tru", "truex", "falsey", "1", "True", "true,", "[true]"} {
		seeds = append(seeds, []byte(strings.Replace(c.String(), `"authenticated":false`, `"authenticated":`+auth, 1)))
	}
	seeds = append(seeds, []byte(strings.Replace(c.String(), `,"authenticated":false`, ``, 1)),
		[]byte(strings.Replace(c.String(), `"authenticated":false`, `"authenticated":false,"authenticated":true`, 1)),
		[]byte(strings.Replace(c.String(), `"authenticated":false`, `"Authenticated":true`, 1)))
	return seeds
}

func TestDecodeMatchesStrict(t *testing.T) {
	r := NewCatalogRegistry()
	plain := 0
	for _, seed := range envelopeSeeds(t) {
		sameDecode(t, r, seed)
		if _, ok := decodePlainEnvelope(seed); ok {
			plain++
		}
	}
	if plain < 40 {
		t.Fatalf("only %d seeds took the plain reading: it no longer reads what Encode writes", plain)
	}
}

// FuzzDecodeMatchesStrict compares Decode with decodeOracle on any bytes.
//
//	go test -run '^$' -fuzz FuzzDecodeMatchesStrict -fuzztime 3m ./events/
func FuzzDecodeMatchesStrict(f *testing.F) {
	for _, seed := range envelopeSeeds(f) {
		f.Add(seed)
	}
	r := NewCatalogRegistry()
	f.Fuzz(func(t *testing.T, value []byte) {
		sameDecode(t, r, value)
	})
}
