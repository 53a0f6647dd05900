package events_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/errata-dev/errata/events"
)

// benchRecords are the wire forms of the records projectors decode most: a
// registration carrying a 300-word post, a view, an investigation completed
// with three claims and a claim assessed by the evidence engine.
func benchRecords(tb testing.TB) []struct {
	name  string
	value []byte
} {
	tb.Helper()
	reg := events.NewCatalogRegistry()
	byType := samples()

	registered := *byType[events.TypePostVersionRegisteredV1].(*events.PostVersionRegisteredV1)
	registered.ContentText = strings.TrimSpace(strings.Repeat("Water boils at ninety degrees at sea level, said the post. ", 30))
	registered.WordCount = 300
	completed := *byType[events.TypeInvestigationCompletedV1].(*events.InvestigationCompletedV1)
	claim := completed.Claims[0]
	completed.Claims = nil
	for i := range 3 {
		c := claim
		c.ID = events.ClaimID(completed.InvestigationID, i)
		completed.Claims = append(completed.Claims, c)
	}

	var out []struct {
		name  string
		value []byte
	}
	for _, c := range []struct {
		name string
		p    events.Payload
	}{
		{"registered_300_words", &registered},
		{"view", byType[events.TypePostViewRecordedV2]},
		{"completed_3_claims", &completed},
		{"claim_assessed", byType[events.TypeInvestigationClaimAssessedV1]},
	} {
		ev, err := reg.New(c.p, events.Meta{ID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70",
			Time: time.Date(2026, 11, 22, 10, 30, 0, 123456000, time.UTC), CorrelationID: "corr-1"})
		if err != nil {
			tb.Fatal(err)
		}
		msg, err := reg.Encode(ev)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, struct {
			name  string
			value []byte
		}{c.name, msg.Value})
	}
	return out
}

// BenchmarkDecode measures Registry.Decode on realistic records against two
// raw baselines on the same bytes in the same run: json.Unmarshal into
// map[string]any, and json.Unmarshal of the envelope then of its payload
// into the typed struct, without strictness, validation or upcasts. The
// ratios (decode time over baseline time) compare across noisy runs.
//
//	go test -run '^$' -bench Decode -benchmem ./events/
func BenchmarkDecode(b *testing.B) {
	reg := events.NewCatalogRegistry()
	for _, rec := range benchRecords(b) {
		rawMap := func() error {
			var m map[string]any
			return json.Unmarshal(rec.value, &m)
		}
		rawStruct := func() error {
			var env events.Envelope
			if err := json.Unmarshal(rec.value, &env); err != nil {
				return err
			}
			d, _ := reg.Lookup(env.Type)
			return json.Unmarshal(env.Data, d.New())
		}
		decode := func() error {
			_, err := reg.Decode(rec.value)
			return err
		}
		for _, c := range []struct {
			name string
			run  func() error
		}{{"raw_map", rawMap}, {"raw_struct", rawStruct}, {"decode", decode}} {
			b.Run(rec.name+"/"+c.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(rec.value)))
				for b.Loop() {
					if err := c.run(); err != nil {
						b.Fatal(err)
					}
				}
				if c.name != "decode" {
					return
				}
				// The baselines again, interleaved with decode in short
				// rounds so that the machine's noise hits all three alike:
				// ratios of time per record compare across runs.
				runs := []func() error{decode, rawStruct, rawMap}
				spent := make([]time.Duration, len(runs))
				for range max(b.N/64, 8) {
					for k, run := range runs {
						start := time.Now()
						for range 64 {
							if err := run(); err != nil {
								b.Fatal(err)
							}
						}
						spent[k] += time.Since(start)
					}
				}
				b.ReportMetric(float64(spent[0])/float64(spent[1]), "x_raw_struct")
				b.ReportMetric(float64(spent[0])/float64(spent[2]), "x_raw_map")
			})
		}
	}
}
