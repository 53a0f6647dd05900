package analyst

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/verdict"
	"github.com/errata-dev/errata/consumers/websearch"
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
	maxTitleBytes   = 300
	maxSnippetBytes = 1000
	maxNoteBytes    = 300
	maxQueryBytes   = websearch.MaxQueryRunes * 4
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
	passages := a.resolve(cands)
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
	for i := range passages {
		p := &passages[i]
		st, note := results[i].Stance, results[i].Note
		if err := st.Validate(); err != nil {
			st, note = evidence.NeutralStance, nonEmpty(note, clip("unusable stance: "+err.Error(), maxNoteBytes))
		}
		p.Stance = st
		p.Num = checks.Numbers(c.triage.Text, p.Snippet)
		p.Recency = a.w.Policy.UnknownRecency
		if r, ok := checks.Recency(p.PublishedAt, a.now, a.w.cfg.RecencyHalfLife); ok && r >= 0 && r <= 1 {
			p.Recency = r
		}
		src := events.AssessedSourceV1{URL: p.URL, Domain: p.Domain, Tier: p.Tier, Rule: p.Rule, Title: p.Title,
			Snippet: p.Snippet, Origin: p.Origin, Entail: st.Entail, Contradict: st.Contradict, Neutral: st.Neutral,
			StanceNote: clip(clean(note), maxNoteBytes), Num: string(p.Num), Recency: p.Recency}
		if !p.PublishedAt.IsZero() {
			src.PublishedAt = p.PublishedAt.UTC().Format(time.RFC3339)
		}
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
		Summary: clip(clean(summary), maxSummaryBytes)}
}

// candidate is a search result before the registry resolved it.
type candidate struct {
	url, title, text string
	published        time.Time
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
func (a *run) search(ctx context.Context, c *claim) (searched bool, unsearched string, out []candidate, err error) {
	if a.w.Search == nil {
		return false, NotSearchedNoSearch, nil, nil
	}
	plan := queries.Decompose(c.triage.Text, c.triage.Context)
	if len(plan.Queries) == 0 {
		return false, NotSearchedNoQuery, nil, nil
	}
	for _, q := range plan.Queries {
		qctx, cancel := context.WithTimeout(ctx, a.w.cfg.SearchTimeout)
		results, serr := a.w.Search.Search(qctx, q.Text, a.w.cfg.SearchResults)
		cancel()
		if ctx.Err() != nil {
			return false, "", nil, ctx.Err()
		}
		ev := &events.AnalysisQueryIssuedV1{AnalysisRef: a.ref, ClaimID: c.id, Query: clip(clean(q.Text), maxQueryBytes),
			Kind: q.Kind, Results: []events.SearchResultV1{}}
		if serr != nil {
			ev.Error = clip(clean(serr.Error()), maxNoteBytes)
			results = nil
		} else {
			searched = true
		}
		for _, r := range results {
			if len(ev.Results) == maxRecordedResults {
				break
			}
			rec := events.SearchResultV1{URL: clip(clean(r.URL), maxURLBytes), Title: clip(clean(strings.TrimSpace(r.Title)), maxTitleBytes),
				Snippet: clip(clean(strings.TrimSpace(r.Snippet)), maxSnippetBytes)}
			if !r.PublishedAt.IsZero() {
				rec.PublishedAt = r.PublishedAt.UTC().Format(time.RFC3339)
			}
			ev.Results = append(ev.Results, rec)
			out = append(out, candidate{url: rec.URL, title: rec.Title, text: nonEmpty(rec.Snippet, rec.Title), published: r.PublishedAt})
		}
		if err := a.append(ctx, ev); err != nil {
			return false, "", nil, err
		}
	}
	if !searched {
		return false, NotSearchedAllQueriesFailed, nil, nil
	}
	return true, "", out, nil
}

// resolve looks every candidate up in the registry, in order, and keeps
// the first of each normalized URL with text to judge, up to MaxPassages.
// What it leaves out is in the query's recorded results.
func (a *run) resolve(cands []candidate) []evidence.Passage {
	var out []evidence.Passage
	seen := map[string]bool{}
	for _, c := range cands {
		if len(out) == a.w.cfg.MaxPassages {
			break
		}
		m, err := a.w.Registry.Lookup(c.url)
		if err != nil || !usableMatch(m) || seen[m.URL] {
			continue // unparseable, private, not http(s), or a repeat
		}
		text := clip(strings.TrimSpace(c.text), a.w.cfg.MaxPassageBytes)
		if text == "" {
			continue
		}
		seen[m.URL] = true
		out = append(out, evidence.Passage{URL: m.URL, Domain: m.Domain, Tier: m.Tier, Rule: m.Rule,
			Title: c.title, Snippet: text, PublishedAt: c.published, Origin: evidence.OriginSearch})
	}
	return out
}

// judge asks the stance of every passage, adding an exchange event to
// payloads for each model exchange.
func (a *run) judge(ctx context.Context, c *claim, passages []evidence.Passage, payloads *[]events.Payload) ([]evidence.StanceResult, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	texts := make([]string, len(passages))
	for i, p := range passages {
		texts[i] = p.Snippet
	}
	prompt := a.w.Stance.PromptRef()
	lastFailed := false
	observe := func(t stance.Turn) {
		lastFailed = t.Err != nil
		ex := a.exchange(StepStance, prompt, t.Response, t.Err)
		if t.Response == nil {
			ex.Model = a.w.Stance.Model()
		}
		*payloads = append(*payloads, ex)
	}
	got, err := a.w.Stance.Judge(ctx, stance.Call{Claim: c.triage.Text, Passages: texts, Cred: a.cred,
		Metadata: map[string]string{"analysis_id": a.ref.AnalysisID, "claim_id": c.id}}, observe)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !lastFailed {
			// It failed outside an exchange: recorded as one all the same.
			observe(stance.Turn{Err: err})
		}
		return nil, fmt.Errorf("stance of claim %s: %w", c.id, err)
	}
	if len(got) != len(passages) {
		note := fmt.Sprintf("the stance provider judged %d passages of %d", len(got), len(passages))
		got = make([]evidence.StanceResult, len(passages))
		for i := range got {
			got[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: note}
		}
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

// usableMatch reports whether a registry answer can be recorded: an
// absolute http(s) URL, a domain, a rule and a tier of 1-5.
func usableMatch(m sources.Match) bool {
	return (strings.HasPrefix(m.URL, "https://") || strings.HasPrefix(m.URL, "http://")) &&
		m.Domain != "" && m.Rule != "" && m.Tier >= 1 && m.Tier <= 5 && utf8.ValidString(m.URL) &&
		!strings.ContainsRune(m.URL, 0) && len(m.URL) <= maxURLBytes
}

// clean makes s valid UTF-8 without NUL bytes.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.ReplaceAll(s, "\x00", "")
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
