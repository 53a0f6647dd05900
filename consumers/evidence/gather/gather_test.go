package gather_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
)

var now = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

func gatherer() *gather.Gatherer {
	return &gather.Gatherer{Registry: sources.Default(), Policy: evidence.DefaultPolicy(), Limits: gather.Limits{
		SearchResults: 5, SearchTimeout: time.Second, MaxPassages: 2, MaxPassageBytes: 10, RecencyHalfLife: 365 * 24 * time.Hour}}
}

// oddRegistry answers with a match no event can hold.
type oddRegistry struct{}

func (oddRegistry) Lookup(string) (sources.Match, error) {
	return sources.Match{URL: "https://x.org/\x00", Domain: "x.org", Rule: "default", Tier: 3}, nil
}

// Candidates resolve in order: the registry's refusals, an unusable
// answer, repeats and empty texts are dropped with their reason; texts and
// titles are trimmed, made valid and bounded; beyond MaxPassages every
// source is dropped.
func TestResolve(t *testing.T) {
	g := gatherer()
	published := now.Add(-time.Hour)
	passages, dropped := g.Resolve([]gather.Candidate{
		{URL: "ftp://reuters.com/a", Text: "t", Origin: evidence.OriginSearch},
		{URL: "https://www.reuters.com/world/a?utm_source=x", Title: " Reuters \xff", Text: "  Paris \x00tower is 330 m tall  ",
			Origin: evidence.OriginSearch, PublishedAt: published},
		{URL: "https://reuters.com/world/a", Text: "again", Origin: evidence.OriginValidator},
		{URL: "https://apnews.com/b", Text: "   ", Origin: evidence.OriginSearch},
		{URL: "https://apnews.com/c", Text: "AP", Origin: evidence.OriginFetch},
		{URL: "https://bbc.co.uk/d", Text: "BBC", Origin: evidence.OriginSearch},
	})
	require.Equal(t, []evidence.Passage{
		{URL: "https://reuters.com/world/a", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com", Title: "Reuters \uFFFD",
			Snippet: "Paris towe", PublishedAt: published, Origin: evidence.OriginSearch},
		{URL: "https://apnews.com/c", Domain: "apnews.com", Tier: 2, Rule: "exact:apnews.com", Snippet: "AP", Origin: evidence.OriginFetch},
	}, passages)
	require.Equal(t, []events.DroppedSourceV1{
		{URL: "ftp://reuters.com/a", Origin: evidence.OriginSearch, Reason: "unsupported_scheme"},
		{URL: "https://reuters.com/world/a", Origin: evidence.OriginValidator, Reason: gather.DropDuplicate},
		{URL: "https://apnews.com/b", Origin: evidence.OriginSearch, Reason: gather.DropNoText},
		{URL: "https://bbc.co.uk/d", Origin: evidence.OriginSearch, Reason: gather.DropPassageLimit},
	}, dropped)

	g.Registry = oddRegistry{}
	passages, dropped = g.Resolve([]gather.Candidate{{URL: "https://x.org/", Text: "t", Origin: evidence.OriginSearch}})
	require.Empty(t, passages)
	require.Equal(t, []events.DroppedSourceV1{{URL: "https://x.org/", Origin: evidence.OriginSearch, Reason: gather.DropRegistryAnswer}}, dropped)

	// A normalized URL over MaxURLBytes is not kept.
	g = gatherer()
	long := "https://reuters.com/" + strings.Repeat("a", 40)
	g.Limits.MaxURLBytes = len(long) - 1
	passages, dropped = g.Resolve([]gather.Candidate{{URL: long, Text: "t", Origin: evidence.OriginSearch}})
	require.Empty(t, passages)
	require.Equal(t, gather.DropRegistryAnswer, dropped[0].Reason)
	g.Limits.MaxURLBytes = len(long)
	passages, _ = g.Resolve([]gather.Candidate{{URL: long, Text: "t", Origin: evidence.OriginSearch}})
	require.Len(t, passages, 1)
}

// judge answers with a script: turns to report, then results or an error.
type judge struct {
	turns   []stance.Turn
	results []evidence.StanceResult
	err     error
	calls   []stance.Call
}

func (j *judge) Judge(_ context.Context, call stance.Call, observe func(stance.Turn)) ([]evidence.StanceResult, error) {
	j.calls = append(j.calls, call)
	for _, t := range j.turns {
		observe(t)
	}
	return j.results, j.err
}

// Every exchange is reported, and a failure outside any exchange as one
// more; a judge answering for another number of passages leaves them all
// neutral with a note; without passages nothing is asked.
func TestStances(t *testing.T) {
	ps := []evidence.Passage{{Snippet: "one"}, {Snippet: "two"}}
	call := stance.Call{Claim: "claim", Metadata: map[string]string{"k": "v"}}
	supports := evidence.Stance{Entail: 0.9, Neutral: 0.1}
	failure := errors.New("provider down")
	for _, tc := range []struct {
		name     string
		j        *judge
		want     []evidence.StanceResult
		err      error
		observed []error
	}{
		{"judged", &judge{turns: []stance.Turn{{Try: 1}}, results: []evidence.StanceResult{{Stance: supports}, {Stance: supports}}},
			[]evidence.StanceResult{{Stance: supports}, {Stance: supports}}, nil, []error{nil}},
		{"too few", &judge{results: []evidence.StanceResult{{Stance: supports}}},
			[]evidence.StanceResult{{Stance: evidence.NeutralStance, Note: "the stance provider judged 1 passages of 2"},
				{Stance: evidence.NeutralStance, Note: "the stance provider judged 1 passages of 2"}}, nil, nil},
		{"failed in an exchange", &judge{turns: []stance.Turn{{Try: 1, Err: failure}}, err: failure}, nil, failure, []error{failure}},
		{"failed outside an exchange", &judge{turns: []stance.Turn{{Try: 1}}, err: failure}, nil, failure, []error{nil, failure}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gatherer()
			g.Stance = tc.j
			var observed []error
			got, err := g.Stances(context.Background(), call, ps, func(t stance.Turn) { observed = append(observed, t.Err) })
			require.Equal(t, tc.err, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.observed, observed)
			require.Equal(t, []stance.Call{{Claim: "claim", Passages: []string{"one", "two"}, Metadata: map[string]string{"k": "v"}}}, tc.j.calls)
		})
	}

	g := gatherer()
	j := &judge{err: failure}
	g.Stance = j
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Stances(ctx, call, ps, func(stance.Turn) { t.Fatal("nothing to record at ctx's end") })
	require.Equal(t, failure, err)
	got, err := g.Stances(context.Background(), call, nil, func(stance.Turn) {})
	require.NoError(t, err)
	require.Empty(t, got)
	require.Len(t, j.calls, 1, "no passages: nothing asked")
}

// Each passage gets its stance (an unusable one is neutral with a note),
// its numeric check and its recency (the policy's weight without a date);
// the sources are what is recorded.
func TestFinish(t *testing.T) {
	g := gatherer()
	ps := []evidence.Passage{
		{URL: "https://reuters.com/a", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com", Snippet: "The tower is 330 m tall.",
			PublishedAt: now.Add(-365 * 24 * time.Hour), Origin: evidence.OriginSearch},
		{URL: "https://apnews.com/b", Domain: "apnews.com", Tier: 2, Rule: "exact:apnews.com", Snippet: "It is tall.", Origin: evidence.OriginFetch},
	}
	results := []evidence.StanceResult{
		{Stance: evidence.Stance{Entail: 0.9, Neutral: 0.1}},
		{Stance: evidence.Stance{Entail: 2}, Note: ""},
	}
	srcs := g.Finish("The tower is 330 m tall.", ps, results, now)
	require.Equal(t, []events.AssessedSourceV1{
		{URL: "https://reuters.com/a", Domain: "reuters.com", Tier: 2, Rule: "exact:reuters.com", Snippet: "The tower is 330 m tall.",
			Origin: evidence.OriginSearch, Entail: 0.9, Neutral: 0.1, Num: "match", Recency: 0.5, PublishedAt: "2025-03-14T12:00:00Z"},
		{URL: "https://apnews.com/b", Domain: "apnews.com", Tier: 2, Rule: "exact:apnews.com", Snippet: "It is tall.",
			Origin: evidence.OriginFetch, Neutral: 1, StanceNote: srcs[1].StanceNote, Recency: 0.5},
	}, srcs)
	require.True(t, strings.HasPrefix(srcs[1].StanceNote, "unusable stance: "), srcs[1].StanceNote)
	require.Equal(t, evidence.NeutralStance, ps[1].Stance)
	require.Equal(t, evidence.NumMatch, ps[0].Num)
	require.Equal(t, 0.5, ps[0].Recency)

	// A note is recorded valid, without NUL and bounded.
	srcs = g.Finish("c", ps[:1], []evidence.StanceResult{{Stance: evidence.NeutralStance, Note: "bad\x00 \xff" + strings.Repeat("n", 400)}}, now)
	require.Equal(t, "bad \uFFFD"+strings.Repeat("n", gather.MaxNoteBytes-len("bad \uFFFD")), srcs[0].StanceNote)
}

// searcher answers each query with its script.
type searcher struct {
	answers map[string][]websearch.Result
	asked   []string
}

func (s *searcher) Search(_ context.Context, q string, limit int) ([]websearch.Result, error) {
	s.asked = append(s.asked, q)
	if r, ok := s.answers[q]; ok {
		return r, nil
	}
	return []websearch.Result{{URL: "https://partial.example/"}}, errors.New("search: provider unavailable: \x00 at 10.0.0.1")
}

func (*searcher) Provider() string { return "script" }

// The plan's queries run in order; a failing one is an answer with its
// error (bounded, valid) and no results; each's error stops the search.
func TestSearched(t *testing.T) {
	g := gatherer()
	s := &searcher{answers: map[string][]websearch.Result{"eiffel tower height": {{URL: "https://a.example/", Title: "A"}}}}
	g.Search = s
	plan := queries.Plan{Queries: []queries.Query{{Text: "eiffel tower height", Kind: "keyword"}, {Text: "tower \xff", Kind: "timeline"}}}
	var got []gather.Answer
	require.NoError(t, g.Searched(context.Background(), plan, func(a gather.Answer) error { got = append(got, a); return nil }))
	require.Equal(t, []gather.Answer{
		{Query: plan.Queries[0], Text: "eiffel tower height", Results: []websearch.Result{{URL: "https://a.example/", Title: "A"}}},
		{Query: plan.Queries[1], Text: "tower \uFFFD", Failed: true, Error: "search: provider unavailable:  at 10.0.0.1"},
	}, got)

	stop := errors.New("stop")
	s.asked = nil
	require.Equal(t, stop, g.Searched(context.Background(), plan, func(gather.Answer) error { return stop }))
	require.Equal(t, []string{"eiffel tower height"}, s.asked)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, g.Searched(ctx, plan, func(gather.Answer) error { t.Fatal("nothing after ctx's end"); return nil }), context.Canceled)
}
