// Package gather gathers the evidence for one claim, the way both of its
// users do it: the investigator's assessor (a claim the validator
// approved) and the analyst (a claim of a verdict analysis). It runs the
// claim's queries through the configured web search, resolves every
// candidate source in the source registry (normalized URL, tier, the first
// of each URL kept), has the passages' stance judged with every model
// exchange reported, and finishes each passage with the numeric and
// recency checks for the evidence engine. What it returns is what the
// callers record: bounded, valid UTF-8 without NUL.
package gather

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
)

// Bounds of recorded texts (bytes).
const (
	// MaxNoteBytes bounds a query's error and a passage's stance note.
	MaxNoteBytes = 300
	// MaxTitleBytes bounds a passage's title.
	MaxTitleBytes = 300
	// MaxDroppedURLBytes bounds the URL of a dropped source.
	MaxDroppedURLBytes = 2048
	// maxQueryBytes bounds a recorded query (the providers refuse longer).
	maxQueryBytes = websearch.MaxQueryRunes * utf8.UTFMax
)

// Registry maps a source URL to its tier (sources.Registry).
type Registry interface {
	Lookup(raw string) (sources.Match, error)
}

// Judge judges passages against a claim (stance.Provider) and reports
// every model exchange it makes.
type Judge interface {
	Judge(ctx context.Context, call stance.Call, observe func(stance.Turn)) ([]evidence.StanceResult, error)
}

// Limits bound what is gathered for one claim.
type Limits struct {
	// SearchResults is the results asked of each query; SearchTimeout
	// bounds one query.
	SearchResults int
	SearchTimeout time.Duration
	// MaxPassages bounds the passages judged; MaxPassageBytes a passage's
	// text.
	MaxPassages     int
	MaxPassageBytes int
	// MaxURLBytes bounds a passage's normalized URL below the registry's
	// own bound (sources.MaxURLBytes); 0: the registry's.
	MaxURLBytes int
	// RecencyHalfLife is the age at which a source's recency weight halves.
	RecencyHalfLife time.Duration
}

// Gatherer gathers evidence with its collaborators. Search may be nil (no
// web search is configured).
type Gatherer struct {
	Search   websearch.Searcher
	Registry Registry
	Stance   Judge
	Policy   evidence.Policy
	Limits   Limits
}

// Answer is one query of a claim's plan as it returned.
type Answer struct {
	Query queries.Query
	// Text is the query as recorded.
	Text string
	// Failed says the query failed; Error says why, as recorded. Results
	// are the provider's, best first (none when it failed).
	Failed  bool
	Error   string
	Results []websearch.Result
}

// Searched runs the plan's queries in order, handing each answer to each
// as it returns. A failing query is an answer with its error, never an
// error: only ctx's end, or an error of each, stops the search.
func (g *Gatherer) Searched(ctx context.Context, plan queries.Plan, each func(Answer) error) error {
	for _, q := range plan.Queries {
		qctx, cancel := context.WithTimeout(ctx, g.Limits.SearchTimeout)
		results, err := g.Search.Search(qctx, q.Text, g.Limits.SearchResults)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a := Answer{Query: q, Text: events.Clip(events.Clean(q.Text), maxQueryBytes), Results: results}
		if err != nil {
			a.Failed, a.Error, a.Results = true, events.Clip(events.Clean(err.Error()), MaxNoteBytes), nil
		}
		if err := each(a); err != nil {
			return err
		}
	}
	return nil
}

// Candidate is a source before the registry resolved it.
type Candidate struct {
	URL, Title, Text string
	// Origin is where it comes from (evidence.Origin*).
	Origin string
	// PublishedAt is when it was published, zero when unknown.
	PublishedAt time.Time
}

// Reasons a source is dropped, besides the registry's own
// (sources.Reason: unparseable, no_public_suffix, ...). They are recorded,
// so they are stable values.
const (
	// DropDuplicate: an earlier source has the same normalized URL.
	DropDuplicate = "duplicate"
	// DropNoText: the source has neither a snippet nor a title to judge.
	DropNoText = "no_text"
	// DropPassageLimit: Limits.MaxPassages passages are kept already.
	DropPassageLimit = "passage_limit"
	// DropRegistryAnswer: the registry's answer cannot be recorded.
	DropRegistryAnswer = "registry_answer_unusable"
)

// Resolve looks every candidate up in the registry, in order, and keeps
// the first of each normalized URL that has text to judge, up to
// MaxPassages; the rest are dropped with the reason.
func (g *Gatherer) Resolve(cands []Candidate) ([]evidence.Passage, []events.DroppedSourceV1) {
	var out []evidence.Passage
	dropped := []events.DroppedSourceV1{}
	seen := map[string]bool{} // normalized URLs kept
	for _, c := range cands {
		drop := func(reason string) {
			dropped = append(dropped, events.DroppedSourceV1{URL: events.Clip(events.Clean(c.URL), MaxDroppedURLBytes),
				Origin: c.Origin, Reason: reason})
		}
		m, err := g.Registry.Lookup(c.URL)
		var ue *sources.URLError
		switch {
		case errors.As(err, &ue):
			drop(string(ue.Reason))
			continue
		case err != nil:
			drop(events.Clip(events.Clean(err.Error()), MaxNoteBytes))
			continue
		case !Usable(m) || (g.Limits.MaxURLBytes > 0 && len(m.URL) > g.Limits.MaxURLBytes):
			drop(DropRegistryAnswer)
			continue
		case seen[m.URL]:
			drop(DropDuplicate)
			continue
		}
		text := events.Clip(events.Clean(strings.TrimSpace(c.Text)), g.Limits.MaxPassageBytes)
		if text == "" {
			drop(DropNoText)
			continue
		}
		if len(out) == g.Limits.MaxPassages {
			drop(DropPassageLimit)
			continue
		}
		seen[m.URL] = true
		out = append(out, evidence.Passage{URL: m.URL, Domain: m.Domain, Tier: m.Tier, Rule: m.Rule,
			Title: events.Clip(events.Clean(strings.TrimSpace(c.Title)), MaxTitleBytes), Snippet: text,
			PublishedAt: c.PublishedAt, Origin: c.Origin})
	}
	return out, dropped
}

// Usable reports whether a registry answer can be recorded: an absolute
// http(s) URL, a domain, a rule and a tier of 1-5.
func Usable(m sources.Match) bool {
	return (strings.HasPrefix(m.URL, "https://") || strings.HasPrefix(m.URL, "http://")) &&
		m.Domain != "" && m.Rule != "" && m.Tier >= 1 && m.Tier <= 5 && utf8.ValidString(m.URL) &&
		!strings.ContainsRune(m.URL, 0)
}

// Stances asks the stance of every passage (call's claim, credentials and
// metadata; its passages are theirs), reporting each model exchange to
// observe, and a failure outside any exchange as one more, so that every
// failure is recorded. A judge that answers for another number of
// passages leaves them all neutral, with a note saying so. On error
// nothing is judged: ctx's end, or the judge's failure.
func (g *Gatherer) Stances(ctx context.Context, call stance.Call, passages []evidence.Passage,
	observe func(stance.Turn)) ([]evidence.StanceResult, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	call.Passages = make([]string, len(passages))
	for i, p := range passages {
		call.Passages[i] = p.Snippet
	}
	lastFailed := false
	got, err := g.Stance.Judge(ctx, call, func(t stance.Turn) {
		lastFailed = t.Err != nil
		observe(t)
	})
	if err != nil {
		if !lastFailed && ctx.Err() == nil {
			observe(stance.Turn{Err: err})
		}
		return nil, err
	}
	if len(got) != len(passages) {
		return Neutral(len(passages), fmt.Sprintf("the stance provider judged %d passages of %d", len(got), len(passages))), nil
	}
	return got, nil
}

// Neutral is n neutral stances, each with note.
func Neutral(n int, note string) []evidence.StanceResult {
	out := make([]evidence.StanceResult, n)
	for i := range out {
		out[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: note}
	}
	return out
}

// Finish gives each passage its stance (an unusable one is neutral, with a
// note saying why), its numeric check against claim and its recency at
// now (the policy's weight for an unknown date), and returns the sources
// as recorded, in order.
func (g *Gatherer) Finish(claim string, passages []evidence.Passage, results []evidence.StanceResult, now time.Time) []events.AssessedSourceV1 {
	out := make([]events.AssessedSourceV1, len(passages))
	for i := range passages {
		p := &passages[i]
		st, note := results[i].Stance, results[i].Note
		if err := st.Validate(); err != nil {
			st, note = evidence.NeutralStance, nonEmpty(note, events.Clip("unusable stance: "+err.Error(), MaxNoteBytes))
		}
		p.Stance = st
		p.Num = checks.Numbers(claim, p.Snippet)
		p.Recency = g.Policy.UnknownRecency()
		if r, ok := checks.Recency(p.PublishedAt, now, g.Limits.RecencyHalfLife); ok && r >= 0 && r <= 1 {
			p.Recency = r
		}
		out[i] = events.AssessedSourceV1{URL: p.URL, Domain: p.Domain, Tier: p.Tier, Rule: p.Rule, Title: p.Title,
			Snippet: p.Snippet, Origin: p.Origin, Entail: st.Entail, Contradict: st.Contradict, Neutral: st.Neutral,
			StanceNote: events.Clip(events.Clean(note), MaxNoteBytes), Num: string(p.Num), Recency: p.Recency}
		if !p.PublishedAt.IsZero() {
			out[i].PublishedAt = p.PublishedAt.UTC().Format(time.RFC3339)
		}
	}
	return out
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
