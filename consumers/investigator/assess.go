package investigator

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/gather"
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
	gather   gather.Gatherer
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
	return &Assessor{cfg: cfg, registry: registry, policy: policy, stance: judge, now: now,
		gather: gather.Gatherer{Search: searcher, Registry: registry, Stance: judge, Policy: policy, Limits: gather.Limits{
			SearchResults: cfg.SearchResults, SearchTimeout: cfg.SearchTimeout, MaxPassages: cfg.MaxPassages,
			MaxPassageBytes: cfg.MaxPassageBytes, RecencyHalfLife: cfg.RecencyHalfLife}}}
}

// WithPolicy returns a copy of the assessor that applies policy (a run's
// configuration names its own).
func (a *Assessor) WithPolicy(policy evidence.Policy) *Assessor {
	c := *a
	c.policy, c.gather.Policy = policy, policy
	return &c
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
	if a.gather.Search != nil {
		err := a.gather.Searched(ctx, plan, func(ans gather.Answer) error {
			queriesRun = append(queriesRun, events.EvidenceQueryV1{Query: ans.Text, Kind: ans.Query.Kind,
				Results: len(ans.Results), Error: ans.Error})
			for _, r := range ans.Results {
				cands = append(cands, gather.Candidate{URL: r.URL, Title: r.Title, Text: nonEmpty(r.Snippet, r.Title),
					Origin: evidence.OriginSearch})
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	passages, more := a.gather.Resolve(cands)
	dropped = append(dropped, more...)

	results, err := a.judge(ctx, in, passages, &out)
	if err != nil {
		return out, err
	}
	srcs := a.gather.Finish(in.Claim.Text, passages, results, a.now())
	as := a.policy.Assess(true, passages)
	ev := &events.InvestigationClaimAssessedV1{AttemptRef: in.Ref, SubmissionID: in.SubmissionID,
		Causal: plan.Causal, Queries: queriesRun, Sources: srcs, Dropped: dropped,
		EMax: as.Features.EMax, EMean3: as.Features.EMean3, CMax: as.Features.CMax, AgreeDom: as.Features.AgreeDom,
		RelAvg: as.Features.RelAvg, RecMax: as.Features.RecMax, NumOK: as.Features.NumOK,
		Raw: as.Raw, Score: as.Score, Verdict: as.Verdict,
		Gate4: as.Gate.Level, Gate4Sources: as.Gate.Sources, Gate4Quality: as.Gate.Quality, Gate4Agreement: as.Gate.Agreement,
		RegistryVersion: a.registry.Version(), PolicyVersion: as.PolicyVersion, PublishMode: a.policy.PublishMode(),
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
	if in.NoStance != "" {
		return gather.Neutral(len(passages), in.NoStance), nil
	}
	prompt := a.stance.PromptRef()
	round := 0
	observe := func(t stance.Turn) {
		round++
		res := t.Response
		if res == nil {
			// No answer arrived (the request was refused before sending):
			// recorded all the same, so the failure counts.
			res = &llm.Response{Provider: a.stance.ProviderName(), Model: a.stance.Model()}
		}
		out.Exchanges = append(out.Exchanges, exchangeEvent(in.Ref, events.StageAssessor, in.SubmissionID, round, prompt, res, t.Err, nil))
	}
	// A failure outside an exchange is recorded as one all the same, so
	// that it counts towards the wait and the limit.
	got, err := a.gather.Stances(ctx, stance.Call{Claim: in.Claim.Text, Cred: in.Cred,
		Metadata: map[string]string{"investigation_id": in.Ref.InvestigationID, "submission_id": in.SubmissionID}}, passages, observe)
	if err != nil {
		return nil, fmt.Errorf("stance of submission %s: %w", in.SubmissionID, err)
	}
	return got, nil
}

// gatherOwn lists the candidates of the submission, the validator and the
// fetched pages, and drops the fetched pages it cannot use (so these drops
// come first in the event's list, then those of resolve, in source order).
func (a *Assessor) gatherOwn(in AssessInput) ([]gather.Candidate, []events.DroppedSourceV1) {
	var out []gather.Candidate
	dropped := []events.DroppedSourceV1{}
	for _, s := range in.Claim.Sources {
		out = append(out, gather.Candidate{URL: s.URL, Title: s.Title, Text: nonEmpty(s.Snippet, s.Title), Origin: evidence.OriginInvestigator})
	}
	for _, s := range in.ValidatorCitations {
		out = append(out, gather.Candidate{URL: s.URL, Title: s.Title, Text: nonEmpty(s.Snippet, s.Title), Origin: evidence.OriginValidator})
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
			dropped = append(dropped, events.DroppedSourceV1{URL: events.Clip(events.Clean(u), gather.MaxDroppedURLBytes),
				Origin: evidence.OriginFetch, Reason: reason})
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
		out = append(out, gather.Candidate{URL: u, Title: r.Title, Text: text, Origin: evidence.OriginFetch})
	}
	return out, dropped
}

// queriesPlan is the query decomposition of a claim: its keyword (and, for
// a causal claim, timeline) queries, pronouns resolved from its context.
func queriesPlan(c events.CorrectionV1) queries.Plan { return queries.Decompose(c.Text, c.Context) }

// Reasons a fetched page is dropped, besides those of every source
// (gather.Drop*, and the registry's own: sources.Reason). They are
// recorded, so they are stable values.
const (
	// DropFetchNoText: the fetch returned no text (it failed, or the page
	// is not text).
	DropFetchNoText = "fetch_no_text"
	// DropFetchLimit: AssessorConfig.FetchPages fetched pages are read already.
	DropFetchLimit = "fetch_limit"
	// DropNoKeyTerms: the fetched page never mentions the claim's key terms.
	DropNoKeyTerms = "no_key_terms"
)

const (
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
