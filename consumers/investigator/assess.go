package investigator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
	"github.com/errata-dev/errata/consumers/evidence/queries"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
)

// StanceJudge judges passages against a claim with a provider
// (stance.Provider) and reports every model exchange it makes.
type StanceJudge interface {
	Judge(ctx context.Context, call stance.Call, observe func(stance.Turn)) ([]evidence.StanceResult, error)
	PromptRef() events.PromptRefV1
	Model() string
	ProviderName() string
}

// SourceRegistry maps a source URL to its tier (sources.Registry).
type SourceRegistry interface {
	Lookup(raw string) (sources.Match, error)
	Version() string
}

// AssessorConfig bounds what the assessor reads for one claim.
type AssessorConfig struct {
	// SearchResults is the number of results asked of each query of our
	// own search (default 5); SearchTimeout bounds one query (default 20s).
	SearchResults int
	SearchTimeout time.Duration
	// MaxPassages bounds the passages judged for one claim (default 24);
	// sources beyond it are dropped, in origin order.
	MaxPassages int
	// MaxPassageBytes bounds a passage's text (default 1500 bytes).
	MaxPassageBytes int
	// FetchPages bounds the fetched pages read for one claim (default 8);
	// of each, at most FetchWindows windows (default 3) of FetchWindowBytes
	// (default 400) around the claim's key terms are read.
	FetchPages       int
	FetchWindows     int
	FetchWindowBytes int
	// RecencyHalfLife is the age at which a source's recency weight halves
	// (default two years).
	RecencyHalfLife time.Duration
}

func (c *AssessorConfig) defaults() {
	if c.SearchResults <= 0 {
		c.SearchResults = 5
	}
	if c.SearchTimeout <= 0 {
		c.SearchTimeout = 20 * time.Second
	}
	if c.MaxPassages <= 0 {
		c.MaxPassages = 24
	}
	if c.MaxPassageBytes <= 0 {
		c.MaxPassageBytes = 1500
	}
	if c.FetchPages <= 0 {
		c.FetchPages = 8
	}
	if c.FetchWindows <= 0 {
		c.FetchWindows = 3
	}
	if c.FetchWindowBytes <= 0 {
		c.FetchWindowBytes = 400
	}
	if c.RecencyHalfLife <= 0 {
		c.RecencyHalfLife = 2 * 365 * 24 * time.Hour
	}
}

// Assessor gathers the evidence for a claim the validator approved, has
// its stance judged, and applies the evidence policy: the
// claim_assessed event it builds says whether the claim is published.
//
// Sources come, in this order of priority, from the investigator's
// submission, the validator's citations, the pages the investigator
// fetched (windows around the claim's key terms) and our own search
// (queries.Decompose, when a search provider is configured). Each URL is
// normalized and looked up in the source registry; one that does not
// resolve, and every later source with the same normalized URL, is
// dropped with its reason, so the first origin in that order keeps a page
// that several name: the investigator's own snippet is what it cited,
// the validator's words come next, and text we selected ourselves last.
type Assessor struct {
	cfg      AssessorConfig
	registry SourceRegistry
	policy   evidence.Policy
	stance   StanceJudge
	search   websearch.Searcher
	now      func() time.Time
}

// NewAssessor returns an assessor. searcher may be nil (no search of our
// own); now nil is time.Now.
func NewAssessor(cfg AssessorConfig, registry SourceRegistry, policy evidence.Policy, judge StanceJudge,
	searcher websearch.Searcher, now func() time.Time) *Assessor {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Assessor{cfg: cfg, registry: registry, policy: policy, stance: judge, search: searcher, now: now}
}

// AssessInput is one approved submission and what the assessor reads
// besides its sources.
type AssessInput struct {
	Ref          events.AttemptRef
	SubmissionID string
	Claim        events.CorrectionV1
	// ValidatorCitations are the sources the validator's answer cited.
	ValidatorCitations []events.SourceV1
	// Fetched are the fetch_url tool outputs of the attempt (fetchurl.Result
	// JSON) recorded before the submission, in order.
	Fetched []string
	Cred    llm.Credentials
	// NoStance, when set, says why no stance can be asked (the provider
	// failed too often, no usable credentials): every passage is neutral
	// with this note, and the policy decides on that.
	NoStance string
}

// Assessed is the outcome of one assessment: the event and the stance
// exchanges to record before it. On error Event is nil, and Exchanges
// holds the exchanges made so far (to record all the same).
type Assessed struct {
	Event     *events.InvestigationClaimAssessedV1
	Exchanges []events.Payload
}

// Assess judges one approved submission. An error means no assessment now
// (a stance provider failure, or ctx's end): the caller records the
// exchanges and tries again later; nothing is published meanwhile.
func (a *Assessor) Assess(ctx context.Context, in AssessInput) (Assessed, error) {
	var out Assessed
	cands, dropped := a.gatherOwn(in)
	plan := queriesPlan(in.Claim)
	queriesRun := []events.EvidenceQueryV1{}
	if a.search != nil {
		found, recs, err := a.searchClaim(ctx, plan)
		if err != nil {
			return out, err
		}
		cands, queriesRun = append(cands, found...), recs
	}
	passages, more := a.resolve(cands)
	dropped = append(dropped, more...)

	results, err := a.judge(ctx, in, passages, &out)
	if err != nil {
		return out, err
	}
	now := a.now()
	ps := make([]evidence.Passage, len(passages))
	srcs := make([]events.AssessedSourceV1, len(passages))
	for i, p := range passages {
		st := results[i].Stance
		note := results[i].Note
		if err := st.Validate(); err != nil {
			st, note = evidence.NeutralStance, nonEmpty(note, clip("unusable stance: "+err.Error(), maxNoteBytes))
		}
		p.Stance = st
		p.Num = checks.Numbers(in.Claim.Text, p.Snippet)
		p.Recency = a.policy.UnknownRecency
		if r, ok := checks.Recency(p.PublishedAt, now, a.cfg.RecencyHalfLife); ok && r >= 0 && r <= 1 {
			p.Recency = r
		}
		ps[i] = p
		srcs[i] = events.AssessedSourceV1{URL: p.URL, Domain: p.Domain, Tier: p.Tier, Rule: p.Rule, Title: p.Title,
			Snippet: p.Snippet, Origin: p.Origin, Entail: st.Entail, Contradict: st.Contradict, Neutral: st.Neutral,
			StanceNote: note, Num: string(p.Num), Recency: p.Recency}
		if !p.PublishedAt.IsZero() {
			srcs[i].PublishedAt = p.PublishedAt.UTC().Format(time.RFC3339)
		}
	}
	as := a.policy.Assess(true, ps)
	ev := &events.InvestigationClaimAssessedV1{AttemptRef: in.Ref, SubmissionID: in.SubmissionID,
		Causal: plan.Causal, Queries: queriesRun, Sources: srcs, Dropped: dropped,
		EMax: as.Features.EMax, EMean3: as.Features.EMean3, CMax: as.Features.CMax, AgreeDom: as.Features.AgreeDom,
		RelAvg: as.Features.RelAvg, RecMax: as.Features.RecMax, NumOK: as.Features.NumOK,
		Raw: as.Raw, Score: as.Score, Verdict: as.Verdict,
		Gate4: as.Gate.Level, Gate4Sources: as.Gate.Sources, Gate4Quality: as.Gate.Quality, Gate4Agreement: as.Gate.Agreement,
		RegistryVersion: a.registry.Version(), PolicyVersion: as.PolicyVersion, PublishMode: a.policy.Publish.Mode,
		Published: as.Decision.Publish, Reason: as.Decision.Reason, Failed: append([]string{}, as.Decision.Failed...)}
	if len(passages) > 0 && in.NoStance == "" {
		prompt := a.stance.PromptRef()
		ev.StanceProvider, ev.StanceModel, ev.StancePrompt = a.stance.ProviderName(), a.stance.Model(), &prompt
	}
	if err := ev.Validate(); err != nil {
		return out, fmt.Errorf("assessment of submission %s: %w", in.SubmissionID, err)
	}
	out.Event = ev
	return out, nil
}

// judge asks the stance of every passage, recording each exchange in out.
func (a *Assessor) judge(ctx context.Context, in AssessInput, passages []evidence.Passage, out *Assessed) ([]evidence.StanceResult, error) {
	results := make([]evidence.StanceResult, len(passages))
	if len(passages) == 0 {
		return results, nil
	}
	if in.NoStance != "" {
		for i := range results {
			results[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: clip(in.NoStance, maxNoteBytes)}
		}
		return results, nil
	}
	texts := make([]string, len(passages))
	for i, p := range passages {
		texts[i] = p.Snippet
	}
	prompt := a.stance.PromptRef()
	round, lastFailed := 0, false
	observe := func(t stance.Turn) {
		round++
		lastFailed = t.Err != nil
		res := t.Response
		if res == nil {
			// No answer arrived (the request was refused before sending):
			// recorded all the same, so the failure counts.
			res = &llm.Response{Provider: a.stance.ProviderName(), Model: a.stance.Model()}
		}
		out.Exchanges = append(out.Exchanges, exchangeEvent(in.Ref, events.StageAssessor, in.SubmissionID, round, prompt, res, t.Err, nil))
	}
	got, err := a.stance.Judge(ctx, stance.Call{Claim: in.Claim.Text, Passages: texts, Cred: in.Cred,
		Metadata: map[string]string{"investigation_id": in.Ref.InvestigationID, "submission_id": in.SubmissionID}}, observe)
	if err != nil {
		if !lastFailed && ctx.Err() == nil {
			// It failed outside an exchange: recorded as one all the same,
			// so that the failure counts towards the wait and the limit.
			observe(stance.Turn{Err: err})
		}
		return nil, fmt.Errorf("stance of submission %s: %w", in.SubmissionID, err)
	}
	if len(got) != len(passages) {
		note := fmt.Sprintf("the stance provider judged %d passages of %d", len(got), len(passages))
		for i := range results {
			results[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: note}
		}
		return results, nil
	}
	return got, nil
}

// candidate is a source before the registry resolved it.
type candidate struct {
	url, title, text, origin string
}

// gatherOwn lists the candidates of the submission, the validator and the
// fetched pages, and drops the fetched pages it cannot use (so these drops
// come first in the event's list, then those of resolve, in source order).
func (a *Assessor) gatherOwn(in AssessInput) ([]candidate, []events.DroppedSourceV1) {
	var out []candidate
	dropped := []events.DroppedSourceV1{}
	for _, s := range in.Claim.Sources {
		out = append(out, candidate{url: s.URL, title: s.Title, text: nonEmpty(s.Snippet, s.Title), origin: evidence.OriginInvestigator})
	}
	for _, s := range in.ValidatorCitations {
		out = append(out, candidate{url: s.URL, title: s.Title, text: nonEmpty(s.Snippet, s.Title), origin: evidence.OriginValidator})
	}
	terms := keyTerms(in.Claim.Text)
	pages := 0
	for _, raw := range in.Fetched {
		var r fetchurl.Result
		if json.Unmarshal([]byte(raw), &r) != nil {
			continue // not a fetch_url answer: nothing to read
		}
		u := nonEmpty(r.FinalURL, r.URL)
		if u == "" {
			continue // not a fetch of a page (a refused call)
		}
		drop := func(reason string) {
			dropped = append(dropped, events.DroppedSourceV1{URL: clip(clean(u), maxDroppedURLBytes), Origin: evidence.OriginFetch, Reason: reason})
		}
		if strings.TrimSpace(r.Text) == "" {
			drop(DropFetchNoText)
			continue
		}
		if pages == a.cfg.FetchPages {
			drop(DropFetchLimit)
			continue
		}
		text := windows(r.Text, terms, a.cfg.FetchWindows, a.cfg.FetchWindowBytes)
		if text == "" {
			drop(DropNoKeyTerms)
			continue
		}
		pages++
		out = append(out, candidate{url: u, title: r.Title, text: text, origin: evidence.OriginFetch})
	}
	return out, dropped
}

// queriesPlan is the query decomposition of a claim: its keyword (and, for
// a causal claim, timeline) queries, pronouns resolved from its context.
func queriesPlan(c events.CorrectionV1) queries.Plan { return queries.Decompose(c.Text, c.Context) }

// searchClaim runs the plan's queries. A failing query is recorded with
// its error and never fails the assessment; only ctx's end does.
func (a *Assessor) searchClaim(ctx context.Context, plan queries.Plan) ([]candidate, []events.EvidenceQueryV1, error) {
	var out []candidate
	recs := []events.EvidenceQueryV1{}
	for _, q := range plan.Queries {
		qctx, cancel := context.WithTimeout(ctx, a.cfg.SearchTimeout)
		results, err := a.search.Search(qctx, q.Text, a.cfg.SearchResults)
		cancel()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		rec := events.EvidenceQueryV1{Query: clip(clean(q.Text), websearch.MaxQueryRunes*4), Kind: q.Kind, Results: len(results)}
		if err != nil {
			rec.Results, rec.Error = 0, clip(clean(err.Error()), maxNoteBytes)
			results = nil
		}
		recs = append(recs, rec)
		for _, r := range results {
			out = append(out, candidate{url: r.URL, title: r.Title, text: nonEmpty(r.Snippet, r.Title), origin: evidence.OriginSearch})
		}
	}
	return out, recs, nil
}

// resolve looks every candidate up in the registry, in order, and keeps
// the first of each normalized URL, up to MaxPassages; the rest are
// dropped with the reason.
func (a *Assessor) resolve(cands []candidate) ([]evidence.Passage, []events.DroppedSourceV1) {
	var out []evidence.Passage
	dropped := []events.DroppedSourceV1{}
	seen := map[string]bool{} // normalized URLs kept
	for _, c := range cands {
		drop := func(reason string) {
			dropped = append(dropped, events.DroppedSourceV1{URL: clip(clean(c.url), maxDroppedURLBytes), Origin: c.origin, Reason: reason})
		}
		m, err := a.registry.Lookup(c.url)
		var ue *sources.URLError
		switch {
		case errors.As(err, &ue):
			drop(string(ue.Reason))
			continue
		case err != nil:
			drop(clip(clean(err.Error()), maxNoteBytes))
			continue
		case !usableMatch(m):
			drop(DropRegistryAnswer)
			continue
		case seen[m.URL]:
			drop(DropDuplicate)
			continue
		}
		text := clip(clean(strings.TrimSpace(c.text)), a.cfg.MaxPassageBytes)
		if text == "" {
			drop(DropNoText)
			continue
		}
		if len(out) == a.cfg.MaxPassages {
			drop(DropPassageLimit)
			continue
		}
		seen[m.URL] = true
		out = append(out, evidence.Passage{URL: m.URL, Domain: m.Domain, Tier: m.Tier, Rule: m.Rule,
			Title: clip(clean(strings.TrimSpace(c.title)), maxTitleBytes), Snippet: text, Origin: c.origin})
	}
	return out, dropped
}

// usableMatch reports whether a registry answer can be recorded: an
// absolute http(s) URL, a domain, a rule and a tier of 1-5.
func usableMatch(m sources.Match) bool {
	return (strings.HasPrefix(m.URL, "https://") || strings.HasPrefix(m.URL, "http://")) &&
		m.Domain != "" && m.Rule != "" && m.Tier >= 1 && m.Tier <= 5 && utf8.ValidString(m.URL) &&
		!strings.ContainsRune(m.URL, 0)
}

// Reasons a source is dropped, besides the registry's own
// (sources.Reason: unparseable, no_public_suffix, ...). They are recorded,
// so they are stable values.
const (
	// DropDuplicate: an earlier source has the same normalized URL.
	DropDuplicate = "duplicate"
	// DropNoText: the source has neither a snippet nor a title to judge.
	DropNoText = "no_text"
	// DropPassageLimit: AssessorConfig.MaxPassages passages are kept already.
	DropPassageLimit = "passage_limit"
	// DropFetchNoText: the fetch returned no text (it failed, or the page
	// is not text).
	DropFetchNoText = "fetch_no_text"
	// DropFetchLimit: AssessorConfig.FetchPages fetched pages are read already.
	DropFetchLimit = "fetch_limit"
	// DropNoKeyTerms: the fetched page never mentions the claim's key terms.
	DropNoKeyTerms = "no_key_terms"
	// DropRegistryAnswer: the registry's answer cannot be recorded.
	DropRegistryAnswer = "registry_answer_unusable"
)

// Bounds of recorded texts.
const (
	maxNoteBytes       = 300
	maxTitleBytes      = 300
	maxDroppedURLBytes = 2048
	// maxWindowHits bounds the key-term occurrences of a page considered
	// as window centres.
	maxWindowHits = 256
)

// windowSeparator joins the windows of one page.
const windowSeparator = " … "

// stopwords are frequent words that say nothing about what a claim is
// about (only words of four letters or more are key terms anyway).
var stopwords = wordSet(`about above after again against also among because been before being below
	between both but cannot could does doing down during each even ever every from further have having here
	however into just many more most much must never only other over same should since some such than that their
	theirs them then there these they this those through under until upon very were what when where which while
	whom whose will with within without would your yours`)

func wordSet(words string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(words) {
		out[w] = true
	}
	return out
}

// token is a word of a text: its byte span and lower-case form.
type token struct {
	start, end int
	word       string
}

// tokens splits text into runs of letters and digits.
func tokens(text string) []token {
	out := make([]token, 0, len(text)/6) // about one word per six bytes of prose
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, token{start: start, end: i, word: strings.ToLower(text[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{start: start, end: len(text), word: strings.ToLower(text[start:])})
	}
	return out
}

// keyTerms are the words of a claim that a passage about it would repeat:
// numbers, and words of four letters or more that are not stopwords.
func keyTerms(claim string) map[string]bool {
	out := map[string]bool{}
	for _, t := range tokens(claim) {
		digits := strings.IndexFunc(t.word, unicode.IsDigit) >= 0
		if digits || (utf8.RuneCountInString(t.word) >= 4 && !stopwords[t.word]) {
			out[t.word] = true
		}
	}
	return out
}

// windows selects up to n non-overlapping windows of about size bytes of
// text, centred on occurrences of the key terms, that hold the most
// distinct terms (ties: the earlier; a window with less than half the best
// one's is left out), and joins them in text order. It returns "" when the
// text holds no key term.
func windows(text string, terms map[string]bool, n, size int) string {
	if len(terms) == 0 {
		return ""
	}
	toks := tokens(text)
	type span struct{ first, last, score int }
	var spans []span
	for h, t := range toks {
		if !terms[t.word] {
			continue
		}
		if len(spans) == maxWindowHits {
			break
		}
		lo, hi := t.start-size/2, t.start+size/2
		first := sort.Search(len(toks), func(i int) bool { return toks[i].start >= lo })
		last := h
		for last+1 < len(toks) && toks[last+1].end <= hi {
			last++
		}
		distinct := map[string]bool{}
		for _, x := range toks[first : last+1] {
			if terms[x.word] {
				distinct[x.word] = true
			}
		}
		spans = append(spans, span{first: first, last: last, score: len(distinct)})
	}
	if len(spans) == 0 {
		return ""
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	var chosen []span
	for _, s := range spans {
		if len(chosen) == n || 2*s.score < spans[0].score {
			break
		}
		overlaps := false
		for _, c := range chosen {
			if s.first <= c.last && c.first <= s.last {
				overlaps = true
				break
			}
		}
		if !overlaps {
			chosen = append(chosen, s)
		}
	}
	slices.SortFunc(chosen, func(a, b span) int { return cmp.Compare(a.first, b.first) })
	parts := make([]string, len(chosen))
	for i, c := range chosen {
		parts[i] = strings.Join(strings.Fields(text[toks[c.first].start:toks[c.last].end]), " ")
	}
	return strings.Join(parts, windowSeparator)
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
