package analyst

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/gather"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/events"
)

// Bounds of recorded texts (bytes). A model or a search provider can send
// anything; the log keeps bounded, valid UTF-8 without NUL.
// Model texts keep verdict's bounds (in runes) as bytes, so a valid answer
// is never cut.
const (
	maxClaimBytes   = verdict.MaxClaimRunes * utf8.UTFMax
	maxContextBytes = verdict.MaxContextRunes * utf8.UTFMax
	maxReasonBytes  = verdict.MaxReasonRunes * utf8.UTFMax
	maxSummaryBytes = verdict.MaxSummaryRunes * utf8.UTFMax
	maxCaveatBytes  = verdict.MaxCaveatRunes * utf8.UTFMax
	maxCaveats      = 64
	maxPostSources  = 64
	maxURLBytes     = 2048
	maxTitleBytes   = gather.MaxTitleBytes
	maxSnippetBytes = 1000
)

// research runs a claim's queries, judges the passages of their results
// and appends, in this order: each query with its top results as it
// returns, then the stance exchanges, each source assessed and the claim's
// verdict.
func (a *run) research(ctx context.Context, c *claim) error {
	searched, unsearched, cands, err := a.search(ctx, c)
	if err != nil {
		return err
	}
	// What resolve leaves out is in the queries' recorded results.
	passages, _ := a.w.gather.Resolve(cands)
	var payloads []events.Payload
	results, err := a.judge(ctx, c, passages, &payloads)
	if err != nil {
		if len(payloads) > 0 {
			if aerr := a.append(ctx, payloads...); aerr != nil {
				return aerr
			}
		}
		return err
	}
	for _, src := range a.w.gather.Finish(c.triage.Text, passages, results, a.now) {
		payloads = append(payloads, &events.AnalysisSourceAssessedV1{AnalysisRef: a.ref, ClaimID: c.id, Source: src})
	}
	// The engine judges what was found; a claim no query answered for has
	// no assessment (the zero value), which the rubric counts as unsearched.
	var as evidence.Assessment
	if searched || len(passages) > 0 {
		as = a.w.Policy.Assess(true, passages)
	}
	summary := unsearched
	if searched {
		summary = claimSummary(as, passages)
	}
	payloads = append(payloads, a.verdict(c, as, passages, searched, summary))
	return a.append(ctx, payloads...)
}

// verdict judges a claim with the rubric from the engine's assessment of
// its passages, keeps the result on c and returns its claim_verdict.
func (a *run) verdict(c *claim, as evidence.Assessment, passages []evidence.Passage, searched bool, summary string) *events.AnalysisClaimVerdictV1 {
	res := a.w.Rubric.Claim(verdict.ClaimInput{Triage: c.triage, Assessment: as, Passages: passages, Searched: searched, Now: a.now})
	c.result, c.engine, c.passages = res, as.Verdict, passages
	f := as.Features
	return &events.AnalysisClaimVerdictV1{AnalysisRef: a.ref, ClaimID: c.id,
		EMax: f.EMax, EMean3: f.EMean3, CMax: f.CMax, AgreeDom: f.AgreeDom, RelAvg: f.RelAvg, RecMax: f.RecMax, NumOK: f.NumOK,
		Score: as.Score, Verdict: as.Verdict, Gate4: as.Gate.Level,
		TruthPercent: res.TruthPercent, Confidence: res.Confidence, Caps: caps(res.Caps), Label: res.Label, Band: res.Band,
		Summary: events.Clip(events.Clean(summary), maxSummaryBytes)}
}

// Why a researched claim was not searched (its claim_verdict's summary).
const (
	NotSearchedNoSearch         = "Not searched: no web search is configured."
	NotSearchedNoQuery          = "Not searched: the claim has too few words worth searching."
	NotSearchedAllQueriesFailed = "Not searched: every query failed."
)

// search runs the claim's queries (queries.Decompose) through the
// configured web search and appends each with its top results. A failing
// query is recorded with its error and never fails the attempt; only ctx's
// end does. searched says that at least one query answered; unsearched
// says why none did.
func (a *run) search(ctx context.Context, c *claim) (searched bool, unsearched string, out []gather.Candidate, err error) {
	if a.w.Search == nil {
		return false, NotSearchedNoSearch, nil, nil
	}
	plan := queries.Decompose(c.triage.Text, c.triage.Context)
	if len(plan.Queries) == 0 {
		return false, NotSearchedNoQuery, nil, nil
	}
	err = a.w.gather.Searched(ctx, plan, func(ans gather.Answer) error {
		ev := &events.AnalysisQueryIssuedV1{AnalysisRef: a.ref, ClaimID: c.id, Query: ans.Text, Kind: ans.Query.Kind,
			Error: ans.Error, Results: []events.SearchResultV1{}}
		searched = searched || !ans.Failed
		for _, r := range ans.Results {
			if len(ev.Results) == maxRecordedResults {
				break
			}
			rec := events.SearchResultV1{URL: events.Clip(events.Clean(r.URL), maxURLBytes),
				Title:   events.Clip(events.Clean(strings.TrimSpace(r.Title)), maxTitleBytes),
				Snippet: events.Clip(events.Clean(strings.TrimSpace(r.Snippet)), maxSnippetBytes)}
			if !r.PublishedAt.IsZero() {
				rec.PublishedAt = r.PublishedAt.UTC().Format(time.RFC3339)
			}
			ev.Results = append(ev.Results, rec)
			// The registry resolves the URL recorded; the passage's title
			// is bounded as the recorded one is.
			out = append(out, gather.Candidate{URL: rec.URL, Title: r.Title, Text: nonEmpty(rec.Snippet, rec.Title),
				PublishedAt: r.PublishedAt, Origin: evidence.OriginSearch})
		}
		return a.append(ctx, ev)
	})
	if err != nil {
		return false, "", nil, err
	}
	if !searched {
		return false, NotSearchedAllQueriesFailed, nil, nil
	}
	return true, "", out, nil
}

// judge asks the stance of every passage, adding an exchange event to
// payloads for each model exchange.
func (a *run) judge(ctx context.Context, c *claim, passages []evidence.Passage, payloads *[]events.Payload) ([]evidence.StanceResult, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	prompt := a.w.Stance.PromptRef()
	observe := func(t stance.Turn) {
		ex := a.exchange(StepStance, prompt, t.Response, t.Err)
		if t.Response == nil {
			ex.Model = a.w.Stance.Model()
		}
		*payloads = append(*payloads, ex)
	}
	got, err := a.w.gather.Stances(ctx, stance.Call{Claim: c.triage.Text, Cred: a.cred,
		Metadata: map[string]string{"analysis_id": a.ref.AnalysisID, "claim_id": c.id}}, passages, observe)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("stance of claim %s: %w", c.id, err)
	}
	return got, nil
}

// claimSummary says in one sentence what the search found.
func claimSummary(as evidence.Assessment, passages []evidence.Passage) string {
	if len(passages) == 0 {
		return "The search found no result that could be judged for this claim."
	}
	return fmt.Sprintf("%d %s judged; independent domains supporting the claim: %d, contradicting it: %d; engine verdict %s, Gate 4 %s.",
		len(passages), plural(len(passages), "source", "sources"), as.Supporting, as.Contradicting, as.Verdict, as.Gate.Level)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
