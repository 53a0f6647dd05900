package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/errata-dev/errata/events"
)

// IsAppealType reports whether t is an event of the appeal aggregate.
func IsAppealType(t string) bool { return strings.HasPrefix(t, "appeal.") }

// AppealTrail is the trail of one appeal: the filing, every review
// attempt with what it searched, fetched, asked and assessed, and the
// decision. Field order is the JSON order and stays stable.
type AppealTrail struct {
	AppealID string          `json:"appeal_id"`
	Status   string          `json:"status"`
	Filed    *AppealFiling   `json:"filed"`
	Reviews  []*AppealReview `json:"reviews"`
	Decision *AppealDecision `json:"decision"`
	Steps    int             `json:"steps"`
}

// AppealFiling is the appeal as filed. The reason and URLs are the
// appellant's untrusted input, shown as text.
type AppealFiling struct {
	Step            Step     `json:"step"`
	ClaimID         string   `json:"claim_id"`
	InvestigationID string   `json:"investigation_id"`
	PostID          string   `json:"post_id"`
	PostVersionID   string   `json:"post_version_id"`
	Role            string   `json:"role"`
	Reason          string   `json:"reason"`
	URLs            []string `json:"urls"`
	RequesterKey    string   `json:"requester_key,omitempty"`
}

// AppealReview is one review attempt.
type AppealReview struct {
	Attempt         int                  `json:"attempt"`
	Started         *Step                `json:"started"`
	Worker          string               `json:"worker,omitempty"`
	ClaimText       string               `json:"claim_text"`
	PolicyVersion   string               `json:"policy_version"`
	RegistryVersion string               `json:"registry_version"`
	Search          string               `json:"search"`
	StancePrompt    Prompt               `json:"stance_prompt"`
	StanceModel     string               `json:"stance_model"`
	Fetched         []AppealFetch        `json:"fetched"`
	Queries         []AppealQuery        `json:"queries"`
	Exchanges       []AppealExchange     `json:"exchanges"`
	Assessed        *AppealAssessment    `json:"assessed"`
	Failed          *AppealReviewFailure `json:"failed"`
}

// AppealFetch is one of the appellant's pages as the review read it.
type AppealFetch struct {
	Step  Step   `json:"step"`
	URL   string `json:"url"`
	Title string `json:"title"`
	Text  string `json:"text"`
	Error string `json:"error,omitempty"`
}

// AppealQuery is one search of the review.
type AppealQuery struct {
	Step    Step                    `json:"step"`
	Query   string                  `json:"query"`
	Kind    string                  `json:"kind"`
	Results []events.SearchResultV1 `json:"results"`
	Error   string                  `json:"error,omitempty"`
}

// AppealExchange is one model exchange of the review (exact bytes only
// in the full trail).
type AppealExchange struct {
	Step        Step   `json:"step"`
	Seq         int    `json:"seq"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	HTTPStatus  int    `json:"http_status"`
	DurationMS  int64  `json:"duration_ms"`
	Usage       Usage  `json:"usage"`
	Error       string `json:"error,omitempty"`
	RawRequest  string `json:"raw_request,omitempty"`
	RawResponse string `json:"raw_response,omitempty"`
}

// AppealAssessment is the evidence engine's judgement in the review.
type AppealAssessment struct {
	Step          Step                      `json:"step"`
	Sources       []events.AssessedSourceV1 `json:"sources"`
	Dropped       []events.DroppedSourceV1  `json:"dropped"`
	Score         int                       `json:"score"`
	Verdict       string                    `json:"verdict"`
	Gate4         string                    `json:"gate4"`
	PolicyVersion string                    `json:"policy_version"`
	Published     bool                      `json:"published"`
	Reason        string                    `json:"reason"`
}

// AppealReviewFailure ends a review attempt without a decision.
type AppealReviewFailure struct {
	Step      Step   `json:"step"`
	Reason    string `json:"reason"`
	Retryable bool   `json:"retryable"`
	RetryAt   string `json:"retry_at,omitempty"`
}

// AppealDecision is the outcome.
type AppealDecision struct {
	Step          Step   `json:"step"`
	Outcome       string `json:"outcome"`
	Reason        string `json:"reason"`
	PolicyVersion string `json:"policy_version"`
}

// BuildAppeal folds the records of one appeal (log order) into its trail.
// Records of other subjects and repeated event ids are skipped; the first
// decision is the appeal's.
func BuildAppeal(appealID string, recs []Record) (*AppealTrail, error) {
	t := &AppealTrail{AppealID: appealID, Status: "OPEN", Reviews: []*AppealReview{}}
	reviews := map[int]*AppealReview{}
	review := func(n int) *AppealReview {
		r := reviews[n]
		if r == nil {
			r = &AppealReview{Attempt: n, Fetched: []AppealFetch{}, Queries: []AppealQuery{}, Exchanges: []AppealExchange{}}
			reviews[n] = r
			t.Reviews = append(t.Reviews, r)
		}
		return r
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		if rec.Event.Subject != appealID || seen[rec.Event.ID] {
			continue
		}
		seen[rec.Event.ID] = true
		t.Steps++
		st := stepOf(rec)
		switch p := rec.Event.Payload.(type) {
		case *events.AppealFiledV1:
			if t.Filed == nil {
				t.Filed = &AppealFiling{Step: st, ClaimID: p.ClaimID, InvestigationID: p.InvestigationID, PostID: p.PostID,
					PostVersionID: p.PostVersionID, Role: p.Role, Reason: p.Reason, URLs: p.URLs, RequesterKey: p.RequesterKey}
			}
		case *events.AppealReviewStartedV1:
			r := review(p.Attempt)
			if r.Started != nil {
				continue
			}
			r.Started, r.Worker, r.ClaimText, r.PolicyVersion = &st, p.Worker, p.ClaimText, p.PolicyVersion
			r.RegistryVersion, r.Search, r.StancePrompt, r.StanceModel = p.RegistryVersion, p.Search, promptOf(p.StancePrompt), p.StanceModel
		case *events.AppealURLFetchedV1:
			r := review(p.Attempt)
			r.Fetched = append(r.Fetched, AppealFetch{Step: st, URL: p.URL, Title: p.Title, Text: p.Text, Error: p.Error})
		case *events.AppealQueryIssuedV1:
			r := review(p.Attempt)
			r.Queries = append(r.Queries, AppealQuery{Step: st, Query: p.Query, Kind: p.Kind, Results: p.Results, Error: p.Error})
		case *events.AppealExchangeRecordedV1:
			r := review(p.Attempt)
			r.Exchanges = append(r.Exchanges, AppealExchange{Step: st, Seq: p.Seq, Provider: p.Provider, Model: p.Model,
				HTTPStatus: p.HTTPStatus, DurationMS: p.DurationMS, Usage: usageOf(p.Usage), Error: p.Error,
				RawRequest: p.RawRequest, RawResponse: p.RawResponse})
		case *events.AppealEvidenceAssessedV1:
			r := review(p.Attempt)
			r.Assessed = &AppealAssessment{Step: st, Sources: p.Sources, Dropped: p.Dropped, Score: p.Score, Verdict: p.Verdict,
				Gate4: p.Gate4, PolicyVersion: p.PolicyVersion, Published: p.Published, Reason: p.Reason}
		case *events.AppealReviewFailedV1:
			r := review(p.Attempt)
			r.Failed = &AppealReviewFailure{Step: st, Reason: p.Reason, Retryable: p.Retryable, RetryAt: p.RetryAt}
			if !p.Retryable && t.Decision == nil {
				t.Status = "FAILED"
			}
		case *events.AppealDecidedV1:
			if t.Decision == nil {
				t.Decision = &AppealDecision{Step: st, Outcome: p.Outcome, Reason: p.Reason, PolicyVersion: p.PolicyVersion}
				t.Status = p.Outcome
			}
		default:
			return nil, fmt.Errorf("appeal %s: unexpected event %s", appealID, rec.Event.Type())
		}
	}
	return t, nil
}

// Public is the trail as anyone may read it: without the requester's
// keyed hash, worker names, correlation ids and the exchanges' exact
// bodies. The appeal, the review and the outcome all stay.
func (t *AppealTrail) Public() (*AppealTrail, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	var p AppealTrail
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("copy trail: %w", err)
	}
	pub := func(s *Step) {
		if s != nil {
			s.CorrelationID, s.CausationID = "", ""
		}
	}
	if p.Filed != nil {
		pub(&p.Filed.Step)
		p.Filed.RequesterKey = ""
	}
	for _, r := range p.Reviews {
		pub(r.Started)
		r.Worker = ""
		for i := range r.Fetched {
			pub(&r.Fetched[i].Step)
		}
		for i := range r.Queries {
			pub(&r.Queries[i].Step)
		}
		for i := range r.Exchanges {
			pub(&r.Exchanges[i].Step)
			r.Exchanges[i].RawRequest, r.Exchanges[i].RawResponse = "", ""
		}
		if r.Assessed != nil {
			pub(&r.Assessed.Step)
		}
		if r.Failed != nil {
			pub(&r.Failed.Step)
		}
	}
	if p.Decision != nil {
		pub(&p.Decision.Step)
	}
	return &p, nil
}

// AppealJSON renders the trail as indented JSON with a trailing newline.
func AppealJSON(t *AppealTrail) ([]byte, error) { return renderJSON(t) }

// AppealText renders the trail for people. Every text from the log is
// quoted, so an appellant's words cannot pass for the trail's own lines.
func AppealText(w io.Writer, t *AppealTrail) error {
	var b strings.Builder
	fmt.Fprintf(&b, "appeal %s: %s (%d events)\n", t.AppealID, t.Status, t.Steps)
	if f := t.Filed; f != nil {
		fmt.Fprintf(&b, "filed %s by %s on claim %s (investigation %s, post version %s)\n",
			f.Step.Time.Format(time.RFC3339), f.Role, f.ClaimID, f.InvestigationID, f.PostVersionID)
		fmt.Fprintf(&b, "  reason (untrusted): %q\n", f.Reason)
		for _, u := range f.URLs {
			fmt.Fprintf(&b, "  url (untrusted): %q\n", u)
		}
	}
	for _, r := range t.Reviews {
		fmt.Fprintf(&b, "review %d: claim %q, policy %s, registry %s, search %s, stance %s %s@%s\n", r.Attempt, r.ClaimText,
			r.PolicyVersion, r.RegistryVersion, r.Search, r.StanceModel, r.StancePrompt.Name, r.StancePrompt.Version)
		for _, f := range r.Fetched {
			if f.Error != "" {
				fmt.Fprintf(&b, "  fetched %q: %q\n", f.URL, f.Error)
			} else {
				fmt.Fprintf(&b, "  fetched %q: %q (%d bytes of text)\n", f.URL, f.Title, len(f.Text))
			}
		}
		for _, q := range r.Queries {
			fmt.Fprintf(&b, "  query %q (%s): %d results%s\n", q.Query, q.Kind, len(q.Results), errText(q.Error))
		}
		for _, x := range r.Exchanges {
			fmt.Fprintf(&b, "  exchange %d: %s %s HTTP %d, %d tokens%s\n", x.Seq, x.Provider, x.Model, x.HTTPStatus,
				x.Usage.TotalTokens, errText(x.Error))
		}
		if a := r.Assessed; a != nil {
			fmt.Fprintf(&b, "  assessed: %s, score %d, Gate 4 %s, %s (%s)\n", a.Verdict, a.Score, a.Gate4,
				map[bool]string{true: "still published", false: "no longer published"}[a.Published], a.Reason)
			for _, s := range a.Sources {
				fmt.Fprintf(&b, "    source %q tier %d (%s): entail %.2f contradict %.2f neutral %.2f\n", s.URL, s.Tier, s.Origin,
					s.Entail, s.Contradict, s.Neutral)
			}
			for _, d := range a.Dropped {
				fmt.Fprintf(&b, "    dropped %q (%s): %s\n", d.URL, d.Origin, d.Reason)
			}
		}
		if f := r.Failed; f != nil {
			fmt.Fprintf(&b, "  failed (retryable %t): %q\n", f.Retryable, f.Reason)
		}
	}
	if d := t.Decision; d != nil {
		fmt.Fprintf(&b, "decided %s: %s under %s\n  %q\n", d.Step.Time.Format(time.RFC3339), d.Outcome, d.PolicyVersion, d.Reason)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// errText is an error as the end of a text line: quoted, or nothing.
func errText(e string) string {
	if e == "" {
		return ""
	}
	return fmt.Sprintf(", error %q", e)
}

// ErrAppealNotFound is returned for an appeal id not on the log.
var ErrAppealNotFound = errors.New("appeal not found")

// ReadAppealLog reads the trail of one appeal straight from Kafka: the
// partition of the investigations topic its id maps to, from its start to
// its end offset at the time of the call.
func ReadAppealLog(ctx context.Context, src LogSource, appealID string) (*AppealTrail, error) {
	if !isUUID(appealID) {
		return nil, fmt.Errorf("appeal id must be a UUID: %q", appealID)
	}
	topic := src.Topics.Name(events.TopicInvestigations)
	recs, err := readAggregate(ctx, src, topic, appealID, IsAppealType)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: %s is not on %s", ErrAppealNotFound, appealID, topic)
	}
	return BuildAppeal(appealID, recs)
}
