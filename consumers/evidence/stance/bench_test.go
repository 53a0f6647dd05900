package stance

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/internal/testkit/fakeopenai"
)

// benchPassages are n passages of about 600 bytes, every other one a
// scripted source.
func benchPassages(n int) []string {
	out := make([]string, n)
	for i := range out {
		filler := strings.Repeat(fmt.Sprintf("Sentence %d of a page about the tower and its history. ", i), 10)
		if i%2 == 0 {
			out[i] = filler + "The tower was completed in March 1889."
		} else {
			out[i] = filler
		}
	}
	return out
}

const benchScript = `{"rules":[{"name":"tower","match":"Eiffel Tower","claims":[{"text":"The Eiffel Tower was completed in 1925.",
"context":"c","summary":"s","reasoning":"r","approved":true,"sources":[{"url":"https://www.britannica.com/topic/Eiffel-Tower",
"title":"Eiffel Tower","snippet":"The tower was completed in March 1889.","stance":{"entail":0.02,"contradict":0.95,"neutral":0.03}}]}]}]}`

// BenchmarkJudge is one claim with 16 passages (two batches) judged against
// the scripted fake through each provider: request building, the HTTP
// exchange on loopback, the fake's answer and the decoding. ns/passage is
// the per-passage cost outside any real provider's time.
func BenchmarkJudge(b *testing.B) {
	sc, err := fakeopenai.ParseScript([]byte(benchScript))
	if err != nil {
		b.Fatal(err)
	}
	passages := benchPassages(16)
	for _, ln := range lanes {
		b.Run(ln.name, func(b *testing.B) {
			bn := setup(b, ln, Config{})
			bn.fake.Play(sc, nil)
			call := Call{Claim: claim, Passages: passages, Cred: bn.cred}
			b.ReportAllocs()
			for b.Loop() {
				got, err := bn.p.Judge(context.Background(), call, nil)
				if err != nil || got[0].Stance.Contradict != 0.95 {
					b.Fatalf("%v %+v", err, got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(passages)), "ns/passage")
		})
	}
}

// BenchmarkRequestAndDecode is our own share of BenchmarkJudge for one
// batch of 8 passages: building the request (fence, prompt, sections) and
// decoding a valid answer, without HTTP.
func BenchmarkRequestAndDecode(b *testing.B) {
	p := New(nil, Config{})
	texts := benchPassages(8)
	idx := []int{0, 1, 2, 3, 4, 5, 6, 7}
	stances := make([]evidence.Stance, 8)
	for i := range stances {
		stances[i] = evidence.Stance{Entail: 0.1, Contradict: 0.8, Neutral: 0.1}
	}
	raw := []byte(answer(stances...))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.request(claim, texts, idx, nil); err != nil {
			b.Fatal(err)
		}
		if _, _, err := decodeAnswer(raw, 8); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(idx)), "ns/passage")
}
