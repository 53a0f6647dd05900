// Package analysistest builds the events of realistic verdict analyses
// for the read models' tests: a post whose verdict is False (a first
// attempt that fails and is retried, two claims extracted and triaged, one
// researched with queries, sources, a capped claim verdict, and a capped
// post verdict with caveats and sources, one filled from the search), a
// submission that is opinion only (no search), and a URL submission whose
// two attempts fail. Ids and times derive from the fixture's name, so
// goldens are stable.
package analysistest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
)

// Start is the time of a fixture's first event.
var Start = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// PromptVersion is the analyses' prompt version.
const PromptVersion = "verdict-v1"

// Texts of the three analyses.
const (
	PostText    = "The Eiffel Tower was completed in 1925 for the World's Fair. Honestly it is the most beautiful building in Paris."
	OpinionText = "I think pineapple on pizza is delicious and everyone should try it."
	FailedText  = "The Great Wall of China is visible from the Moon with the naked eye."
	// FalseClaim is the researched claim of the post.
	FalseClaim = "The Eiffel Tower was completed in 1925 for the World's Fair"
)

// Fixture is the events of the three analyses.
type Fixture struct {
	// CompleteID is the post's analysis (COMPLETE, False), OpinionID the
	// opinion-only submission's (COMPLETE, Opinion), FailedID the URL
	// submission's (FAILED).
	CompleteID, OpinionID, FailedID string
	Platform, ExternalID            string
	PostID, PostVersionID           string
	// Complete, Opinion and Failed are each analysis's events in log order.
	Complete, Opinion, Failed []events.Event
}

// All is every event, the three analyses one after the other.
func (f *Fixture) All() []events.Event {
	out := append([]events.Event{}, f.Complete...)
	out = append(out, f.Opinion...)
	return append(out, f.Failed...)
}

// Hash is the hex sha256 of s.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

type seq struct {
	name string
	n    int
	at   time.Time
	reg  *events.Registry
	out  *[]events.Event
}

func (s *seq) add(p events.Payload) {
	s.n++
	s.at = s.at.Add(1250 * time.Millisecond)
	ev, err := s.reg.New(p, events.Meta{
		ID:            uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("analysistest/%s/%d", s.name, s.n))).String(),
		Time:          s.at,
		CorrelationID: "req-" + s.name,
	})
	if err != nil {
		panic(fmt.Sprintf("analysistest: %T: %v", p, err))
	}
	*s.out = append(*s.out, ev)
}

var (
	extractPrompt = events.PromptRefV1{Name: "verdict-extract", Version: "v1", SHA256: Hash("extract prompt v1")}
	stancePrompt  = events.PromptRefV1{Name: "stance", Version: "v1", SHA256: Hash("stance prompt v1")}
	verdictPrompt = events.PromptRefV1{Name: "verdict-summary", Version: "v1", SHA256: Hash("verdict prompt v1")}
)

// Versions the fixture's attempts record.
const (
	Provider        = "openai-responses"
	Model           = "gpt-5"
	RegistryVersion = "starter-v1@1db44c3b699b"
	PolicyVersion   = "strict-v1@a176a28a7d06"
	RubricVersion   = "factsocial-v1@0123456789ab"
)

func started(id string, attempt int) *events.AnalysisAttemptStartedV1 {
	return &events.AnalysisAttemptStartedV1{AnalysisRef: events.AnalysisRef{AnalysisID: id, Attempt: attempt},
		Worker: "worker-1", Prompts: []events.PromptRefV1{extractPrompt, stancePrompt, verdictPrompt},
		Provider: Provider, Model: Model, RegistryVersion: RegistryVersion, PolicyVersion: PolicyVersion, RubricVersion: RubricVersion}
}

func exchange(ref events.AnalysisRef, step string, n int, prompt events.PromptRefV1, status int, response, errText string) *events.AnalysisExchangeRecordedV1 {
	return &events.AnalysisExchangeRecordedV1{AnalysisRef: ref, Step: step, Seq: n, Prompt: prompt, Provider: Provider,
		Model: Model, HTTPStatus: status, DurationMS: int64(900 + 100*n),
		RawRequest:  fmt.Sprintf(`{"model":"gpt-5","input":"%s step %d of %s"}`, step, n, ref.AnalysisID),
		RawResponse: response, Error: errText,
		Usage: events.UsageV1{InputTokens: 800, OutputTokens: 120, TotalTokens: 920}}
}

// New builds the fixture; name makes its ids unique.
func New(name string) *Fixture {
	reg := events.NewCatalogRegistry()
	f := &Fixture{Platform: events.PlatformX, ExternalID: "1869000000000" + fmt.Sprintf("%06d", len(name))}
	f.PostID = events.PostID(f.Platform, f.ExternalID)
	f.PostVersionID = events.PostVersionID(f.PostID, Hash("version:"+name))

	// The post: requested twice; attempt 1 fails (retryable); attempt 2
	// runs to a False verdict.
	postSHA := Hash(name + "/" + PostText)
	f.CompleteID = events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputPost, f.PostVersionID, postSHA),
		events.AnalysisTypeVerdict, PromptVersion)
	s := &seq{name: name + "/complete", at: Start, reg: reg, out: &f.Complete}
	req := &events.AnalysisRequestedV1{AnalysisID: f.CompleteID, AnalysisType: events.AnalysisTypeVerdict,
		PromptVersion: PromptVersion, InputKind: events.AnalysisInputPost, Platform: f.Platform, ExternalID: f.ExternalID,
		PostID: f.PostID, PostVersionID: f.PostVersionID, URL: "https://x.com/someone/status/" + f.ExternalID,
		Text: PostText, ContentSHA256: postSHA, Source: events.AnalysisSourceExtension, RequesterKey: Hash("requester")}
	s.add(req)
	again := *req
	again.RequesterKey = Hash("another requester")
	s.add(&again)
	a1 := events.AnalysisRef{AnalysisID: f.CompleteID, Attempt: 1}
	s.add(started(f.CompleteID, 1))
	s.add(&events.AnalysisClaimExtractedV1{AnalysisRef: a1, ClaimID: events.AnalysisClaimID(f.CompleteID, 1, 0), Index: 0,
		Text: "a claim of the failed attempt", Context: PostText})
	s.add(exchange(a1, "extract", 0, extractPrompt, 503, `{"error":{"message":"overloaded"}}`, "provider overloaded (HTTP 503)"))
	s.add(&events.AnalysisFailedV1{AnalysisRef: a1, Reason: "provider overloaded (HTTP 503)", Retryable: true})

	a2 := events.AnalysisRef{AnalysisID: f.CompleteID, Attempt: 2}
	c0, c1 := events.AnalysisClaimID(f.CompleteID, 2, 0), events.AnalysisClaimID(f.CompleteID, 2, 1)
	s.add(started(f.CompleteID, 2))
	s.add(exchange(a2, "extract", 0, extractPrompt, 200, `{"id":"resp_extract","output_text":"{\"claims\":[…]}"}`, ""))
	s.add(&events.AnalysisClaimExtractedV1{AnalysisRef: a2, ClaimID: c0, Index: 0, Text: FalseClaim, Context: PostText})
	s.add(&events.AnalysisClaimExtractedV1{AnalysisRef: a2, ClaimID: c1, Index: 1,
		Text: "it is the most beautiful building in Paris", Context: "Honestly it is the most beautiful building in Paris."})
	s.add(&events.AnalysisClaimTriagedV1{AnalysisRef: a2, ClaimID: c0, Kind: events.TriageFactual, Specificity: 0.9,
		Numeric: true, Researched: true, Reason: "a dated, checkable construction fact"})
	s.add(&events.AnalysisClaimTriagedV1{AnalysisRef: a2, ClaimID: c1, Kind: events.TriageOpinion, Specificity: 0.2,
		Reason: "a matter of taste"})
	s.add(&events.AnalysisQueryIssuedV1{AnalysisRef: a2, ClaimID: c0, Query: "Eiffel Tower completed year", Kind: "keyword",
		Results: []events.SearchResultV1{
			{URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Title: "Eiffel Tower | History",
				Snippet: "The tower was completed in 1889 for the Exposition Universelle.", PublishedAt: "2024-05-02T00:00:00Z"},
			{URL: "https://someblog.example/eiffel", Title: "Fun facts about Paris", Snippet: "Built for the 1889 fair."},
		}})
	s.add(&events.AnalysisQueryIssuedV1{AnalysisRef: a2, ClaimID: c0, Query: "Eiffel Tower World's Fair 1925", Kind: "keyword",
		Results: []events.SearchResultV1{}, Error: "search provider timed out"})
	s.add(exchange(a2, "stance", 1, stancePrompt, 200, `{"id":"resp_stance"}`, ""))
	s.add(&events.AnalysisSourceAssessedV1{AnalysisRef: a2, ClaimID: c0, Source: events.AssessedSourceV1{
		URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Domain: "britannica.com", Tier: 2,
		Rule: "britannica.com", Title: "Eiffel Tower | History", Snippet: "The tower was completed in 1889 for the Exposition Universelle.",
		PublishedAt: "2024-05-02T00:00:00Z", Origin: "search", Entail: 0.02, Contradict: 0.95, Neutral: 0.03, Num: "mismatch", Recency: 0.9}})
	s.add(&events.AnalysisSourceAssessedV1{AnalysisRef: a2, ClaimID: c0, Source: events.AssessedSourceV1{
		URL: "https://someblog.example/eiffel", Domain: "someblog.example", Tier: 4, Rule: "default",
		Title: "Fun facts about Paris", Snippet: "Built for the 1889 fair.", Origin: "search",
		Entail: 0.05, Contradict: 0.7, Neutral: 0.25, Recency: 0.5}})
	caps := []events.CapV1{{Rule: "approximate_numeric_evidence", Cap: 70, Before: 88}}
	s.add(&events.AnalysisClaimVerdictV1{AnalysisRef: a2, ClaimID: c0, EMax: 0.05, EMean3: 0.035, CMax: 0.95, AgreeDom: 0,
		RelAvg: 0.7, RecMax: 0.9, NumOK: 0, Score: 4, Verdict: events.EvidenceRefuted, Gate4: "MEDIUM",
		TruthPercent: 6, Confidence: 70, Caps: caps, Label: events.LabelFalse, Band: events.BandFalse,
		Summary: "The Eiffel Tower was completed in 1889, for the Exposition Universelle."})
	s.add(exchange(a2, "verdict", 2, verdictPrompt, 200, `{"id":"resp_verdict"}`, ""))
	s.add(&events.AnalysisPostVerdictV1{AnalysisRef: a2, TruthPercent: 6, Confidence: 70, Caps: caps,
		Label: events.LabelFalse, Band: events.BandFalse,
		Summary: "The post dates the Eiffel Tower 36 years late: it was completed in 1889 for the Exposition Universelle. The rest of the post is opinion.",
		Caveats: []string{"One of two searches failed.", "The claim about beauty is an opinion and was not checked."},
		Sources: []events.VerdictSourceV1{
			{URL: "https://www.britannica.com/topic/Eiffel-Tower-Paris-France", Title: "Eiffel Tower | History", Domain: "britannica.com", Tier: 2},
			{URL: "https://someblog.example/eiffel", Title: "Fun facts about Paris", Domain: "someblog.example", Tier: 4, FromSearch: true},
		}, Claims: 2})
	s.add(&events.AnalysisCompletedV1{AnalysisRef: a2, Claims: 2, Researched: 1})

	// The opinion-only submission: one claim, no search.
	opSHA := Hash(name + "/" + OpinionText)
	f.OpinionID = events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputText, "", opSHA), events.AnalysisTypeVerdict, PromptVersion)
	s = &seq{name: name + "/opinion", at: Start.Add(time.Hour), reg: reg, out: &f.Opinion}
	s.add(&events.AnalysisRequestedV1{AnalysisID: f.OpinionID, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: PromptVersion,
		InputKind: events.AnalysisInputText, Text: OpinionText, ContentSHA256: opSHA, Source: events.AnalysisSourceWorkbench})
	o1 := events.AnalysisRef{AnalysisID: f.OpinionID, Attempt: 1}
	oc := events.AnalysisClaimID(f.OpinionID, 1, 0)
	s.add(started(f.OpinionID, 1))
	s.add(exchange(o1, "extract", 0, extractPrompt, 200, `{"id":"resp_opinion"}`, ""))
	s.add(&events.AnalysisClaimExtractedV1{AnalysisRef: o1, ClaimID: oc, Index: 0,
		Text: "pineapple on pizza is delicious", Context: OpinionText})
	s.add(&events.AnalysisClaimTriagedV1{AnalysisRef: o1, ClaimID: oc, Kind: events.TriageOpinion, Specificity: 0.1,
		Reason: "a personal taste, not a checkable fact"})
	s.add(&events.AnalysisPostVerdictV1{AnalysisRef: o1, TruthPercent: 50, Confidence: 0, Caps: []events.CapV1{},
		Label: events.LabelOpinion, Band: events.BandUnverified,
		Summary: "The text states a personal taste. There is nothing to check.",
		Caveats: []string{}, Sources: []events.VerdictSourceV1{}, Claims: 1})
	s.add(&events.AnalysisCompletedV1{AnalysisRef: o1, Claims: 1, Researched: 0})

	// The URL submission: two attempts, both fail; the second for good.
	flSHA := Hash(name + "/" + FailedText)
	f.FailedID = events.AnalysisID(events.AnalysisContentKey(events.AnalysisInputURL, "", flSHA), events.AnalysisTypeVerdict, PromptVersion)
	s = &seq{name: name + "/failed", at: Start.Add(2 * time.Hour), reg: reg, out: &f.Failed}
	s.add(&events.AnalysisRequestedV1{AnalysisID: f.FailedID, AnalysisType: events.AnalysisTypeVerdict, PromptVersion: PromptVersion,
		InputKind: events.AnalysisInputURL, URL: "https://example.org/great-wall", Title: "Myths about the Great Wall",
		Text: FailedText, ContentSHA256: flSHA, Source: events.AnalysisSourceAPI, RequesterKey: Hash("script")})
	for attempt := 1; attempt <= 2; attempt++ {
		ref := events.AnalysisRef{AnalysisID: f.FailedID, Attempt: attempt}
		s.add(started(f.FailedID, attempt))
		s.add(exchange(ref, "extract", 0, extractPrompt, 500, `{"error":{"message":"internal"}}`, "provider error (HTTP 500)"))
		s.add(&events.AnalysisFailedV1{AnalysisRef: ref, Reason: "provider error (HTTP 500)", Retryable: attempt < 2})
	}
	return f
}
