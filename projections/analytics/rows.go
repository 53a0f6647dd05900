package analytics

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/events"
)

// position is where an event sits in the log.
type position struct {
	partition int32
	offset    int64
}

type postVersionRow struct {
	EventID, PostID, PostVersionID, Platform, ExternalID, URL, VersionHash string
	AuthorID, AuthorPlatformUserID, AuthorDisplayName                      string
	Provenance                                                             string
	WordCount                                                              uint32
	ReporterKeyHash                                                        string
	RegisteredAt                                                           time.Time
	position
}

type viewRow struct {
	EventID, PostID, PostVersionID, Platform, ViewerKind string
	Authenticated                                        bool
	ViewedAt, ViewedOn                                   time.Time
	position
}

type investigationRow struct {
	EventID, InvestigationID, PostID, PostVersionID string
	Status, Platform, Source                        string
	UniqueViewScore                                 int64
	Provenance, PromptVersion, Provider, Model      string
	ClaimCount                                      uint32
	FailureReason                                   string
	Attempts, Series                                uint32
	ConfigurationID, ExperimentID, Arm, Supersedes  string
	EventTime                                       time.Time
	position
}

type configurationRow struct {
	EventID, ConfigurationID, Name                                       string
	Provider, Model, ValidatorModel, InvestigatorPrompt, ValidatorPrompt string
	Policy                                                               string
	AuthorContext                                                        bool
	Operator                                                             string
	DeclaredAt                                                           time.Time
	position
}

type experimentRow struct {
	EventID, ExperimentID, Kind, Name                string
	ControlConfigurationID, CandidateConfigurationID string
	CandidateShareBP                                 uint16
	Operator                                         string
	EventTime                                        time.Time
	position
}

type appealRow struct {
	EventID, AppealID, Kind, ClaimID, InvestigationID, Role string
	URLCount                                                uint32
	Outcome, PolicyVersion                                  string
	EventTime                                               time.Time
	position
}

type exchangeRow struct {
	EventID, InvestigationID                     string
	Series, Attempt                              uint64
	Stage                                        string
	Round                                        uint32
	Provider, Model                              string
	HTTPStatus                                   int32
	Failed                                       bool
	DurationMS                                   int64
	InputTokens, CachedInputTokens, OutputTokens int64
	ReasoningTokens, TotalTokens                 int64
	RecordedAt                                   time.Time
	position
}

type claimRow struct {
	EventID, ClaimID, InvestigationID, PostID, PostVersionID string
	Position                                                 uint16
	Text, Summary                                            string
	SourceCount                                              uint16
	PublishedAt                                              time.Time
	position
}

type attemptRow struct {
	EventID, InvestigationID                string
	Series, Attempt                         uint64
	PromptName, PromptVersion, PromptSHA256 string
	Provider, Model, Credential             string
	StartedAt                               time.Time
	position
}

type assessmentRow struct {
	EventID, SubmissionID, InvestigationID           string
	Series, Attempt                                  uint64
	Causal                                           bool
	EMax, EMean3, CMax                               float64
	AgreeDom                                         int64
	RelAvg, RecMax                                   float64
	NumOK                                            int64
	Raw                                              float64
	Score                                            uint8
	Verdict, Gate4                                   string
	Gate4Sources                                     int64
	Gate4Quality, Gate4Agreement                     float64
	RegistryVersion, PolicyVersion, PublishMode      string
	Published                                        bool
	Reason                                           string
	Failed                                           []string
	QueryCount, QueryErrors                          uint32
	SourceCount, DroppedCount                        uint32
	StanceProvider, StanceModel, StancePromptVersion string
	AssessedAt                                       time.Time
	position
}

type assessmentSourceRow struct {
	EventID, SubmissionID, InvestigationID string
	Position                               uint32
	URL, Domain                            string
	Tier                                   uint8
	Rule, Origin                           string
	Entail, Contradict, Neutral            float64
	StanceNote, Num                        string
	Recency                                float64
	AssessedAt                             time.Time
	position
}

type analysisRow struct {
	EventID, AnalysisID                 string
	InputKind, Platform, Source, Prompt string
	TextLength                          uint32
	RequestedAt                         time.Time
	position
}

type analysisAttemptRow struct {
	EventID, AnalysisID                                     string
	Attempt                                                 uint32
	Prompts                                                 []string
	Provider, Model, RegistryVersion, PolicyVersion, Rubric string
	StartedAt                                               time.Time
	position
}

type postVerdictRow struct {
	EventID, AnalysisID                  string
	Attempt                              uint32
	Label, Band                          string
	TruthPercent, Confidence             uint8
	ConfidenceBand                       string
	Caps                                 []string
	ClaimCount, CaveatCount, SourceCount uint32
	FromSearch                           uint32
	VerdictAt                            time.Time
	position
}

// ConfidenceBand is the band of a 0-100 confidence the analysts' tables
// group by: 0-39, 40-69 or 70-100.
func ConfidenceBand(confidence int) string {
	switch {
	case confidence < 40:
		return "0-39"
	case confidence < 70:
		return "40-69"
	default:
		return "70-100"
	}
}

// Statuses of investigations rows: which event a row is.
const (
	StatusRequested = "REQUESTED"
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

// Kinds of experiments and appeals rows: which event a row is.
const (
	ExperimentStarted = "STARTED"
	ExperimentStopped = "STOPPED"
	AppealFiled       = "FILED"
	AppealDecided     = "DECIDED"
)

// rowSet is the rows of one batch of events, per table.
type rowSet struct {
	postVersions      []postVersionRow
	views             []viewRow
	investigations    []investigationRow
	claims            []claimRow
	attempts          []attemptRow
	assessments       []assessmentRow
	assessmentSources []assessmentSourceRow
	analyses          []analysisRow
	analysisAttempts  []analysisAttemptRow
	postVerdicts      []postVerdictRow
	configurations    []configurationRow
	experiments       []experimentRow
	appeals           []appealRow
	exchanges         []exchangeRow
}

// merge appends o's rows.
func (s *rowSet) merge(o *rowSet) {
	s.postVersions = append(s.postVersions, o.postVersions...)
	s.views = append(s.views, o.views...)
	s.investigations = append(s.investigations, o.investigations...)
	s.claims = append(s.claims, o.claims...)
	s.attempts = append(s.attempts, o.attempts...)
	s.assessments = append(s.assessments, o.assessments...)
	s.assessmentSources = append(s.assessmentSources, o.assessmentSources...)
	s.analyses = append(s.analyses, o.analyses...)
	s.analysisAttempts = append(s.analysisAttempts, o.analysisAttempts...)
	s.postVerdicts = append(s.postVerdicts, o.postVerdicts...)
	s.configurations = append(s.configurations, o.configurations...)
	s.experiments = append(s.experiments, o.experiments...)
	s.appeals = append(s.appeals, o.appeals...)
	s.exchanges = append(s.exchanges, o.exchanges...)
}

// handledTypes are the stored event types the projection reads (v1 views are
// upcast to v2 by the registry).
var handledTypes = map[string]bool{
	events.TypePostVersionRegisteredV1:  true,
	events.TypePostViewRecordedV1:       true,
	events.TypePostViewRecordedV2:       true,
	events.TypeInvestigationRequestedV1: true,
	events.TypeInvestigationCompletedV1: true,
	events.TypeInvestigationFailedV1:    true,
	// Attempts give assessments their prompt version and model.
	events.TypeInvestigationAttemptStartedV1: true,
	events.TypeInvestigationClaimAssessedV1:  true,
	// Verdict analyses: requests (platform, source), attempts (versions)
	// and post verdicts.
	events.TypeAnalysisRequestedV1:      true,
	events.TypeAnalysisAttemptStartedV1: true,
	events.TypeAnalysisPostVerdictV1:    true,
	// Configurations, experiments and appeals: the cohorts the
	// experiment views compare; exchanges give tokens and model time.
	events.TypeConfigurationDeclaredV1:         true,
	events.TypeExperimentStartedV1:             true,
	events.TypeExperimentStoppedV1:             true,
	events.TypeAppealFiledV1:                   true,
	events.TypeAppealDecidedV1:                 true,
	events.TypeInvestigationExchangeRecordedV1: true,
}

// Handles reports whether the projection reads events of the stored type t.
func Handles(t string) bool { return handledTypes[t] }

// handledFamily reports whether t is "<aggregate>.<name>.v<N>" for an
// aggregate and name the projection reads in some version.
func handledFamily(t string) bool {
	i := strings.LastIndex(t, ".v")
	if i <= 0 {
		return false
	}
	version := t[i+2:]
	if version == "" || version[0] == '0' || strings.Trim(version, "0123456789") != "" {
		return false
	}
	for h := range handledTypes {
		if j := strings.LastIndex(h, ".v"); h[:j] == t[:i] {
			return true
		}
	}
	return false
}

// The ranges of DateTime64(3, 'UTC') (up to 2299 in ClickHouse, but
// clickhouse-go encodes through UnixNano, which ends in 2262) and Date.
var (
	minDateTime64 = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDateTime64 = time.Unix(0, math.MaxInt64).UTC().Truncate(time.Millisecond)
	minDate       = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxDate       = time.Date(2149, 6, 6, 23, 59, 59, 999_000_000, time.UTC)
)

// ms truncates an event time to the tables' precision (DateTime64(3)).
func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// add turns one event into rows. Every row carries the event's own id, so
// the same event always yields the same rows.
func (s *rowSet) add(ev events.Event, pos position) error {
	at := ms(ev.Time)
	// ClickHouse stores a time outside its types' ranges as another time,
	// silently: such an event is refused instead.
	first, last := minDateTime64, maxDateTime64
	if _, view := ev.Payload.(*events.PostViewRecordedV2); view {
		first, last = minDate, maxDate // viewed_on is a Date
	}
	if at.Before(first) || at.After(last) {
		return fmt.Errorf("%w: event time %s is outside what ClickHouse stores (%s to %s)", errRowRefused,
			at.Format(time.RFC3339Nano), first.Format(time.DateOnly), last.Format(time.DateOnly))
	}
	switch p := ev.Payload.(type) {
	case *events.PostVersionRegisteredV1:
		r := postVersionRow{EventID: ev.ID, PostID: p.PostID, PostVersionID: p.PostVersionID, Platform: p.Platform,
			ExternalID: p.ExternalID, URL: p.URL, VersionHash: p.VersionHash, Provenance: p.Provenance,
			WordCount: toUint32(p.WordCount), ReporterKeyHash: p.ReporterKey, RegisteredAt: at, position: pos}
		if p.Author != nil {
			r.AuthorID = events.AuthorID(p.Platform, p.Author.PlatformUserID)
			r.AuthorPlatformUserID = p.Author.PlatformUserID
			r.AuthorDisplayName = p.Author.DisplayName
		}
		s.postVersions = append(s.postVersions, r)
	case *events.PostViewRecordedV2:
		s.views = append(s.views, viewRow{EventID: ev.ID, PostID: p.PostID, PostVersionID: p.PostVersionID,
			Platform: p.Platform, ViewerKind: p.ViewerKind, Authenticated: p.ViewerKind == events.ViewerInstanceAPIKey,
			ViewedAt: at, ViewedOn: time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC), position: pos})
	case *events.InvestigationRequestedV1:
		s.investigations = append(s.investigations, investigationRow{EventID: ev.ID, InvestigationID: p.InvestigationID,
			PostID: p.PostID, PostVersionID: p.PostVersionID, Status: StatusRequested, Platform: p.Platform,
			Source: p.Source, UniqueViewScore: p.UniqueViewScore, ConfigurationID: p.ConfigurationID,
			ExperimentID: p.ExperimentID, Arm: p.Arm, Supersedes: p.Supersedes, EventTime: at, position: pos})
	case *events.InvestigationCompletedV1:
		s.investigations = append(s.investigations, investigationRow{EventID: ev.ID, InvestigationID: p.InvestigationID,
			PostID: p.PostID, PostVersionID: p.PostVersionID, Status: StatusCompleted, Provenance: p.Provenance,
			PromptVersion: p.PromptVersion, Provider: p.Provider, Model: p.Model, ClaimCount: toUint32(len(p.Claims)),
			Series: toUint32(p.Series), ConfigurationID: p.ConfigurationID, EventTime: at, position: pos})
		for i, c := range p.Claims {
			s.claims = append(s.claims, claimRow{EventID: ev.ID, ClaimID: c.ID, InvestigationID: p.InvestigationID,
				PostID: p.PostID, PostVersionID: p.PostVersionID, Position: uint16(i), Text: c.Text, Summary: c.Summary,
				SourceCount: uint16(min(len(c.Sources), 65535)), PublishedAt: at, position: pos})
		}
	case *events.InvestigationFailedV1:
		s.investigations = append(s.investigations, investigationRow{EventID: ev.ID, InvestigationID: p.InvestigationID,
			PostID: p.PostID, PostVersionID: p.PostVersionID, Status: StatusFailed, Provenance: p.Provenance,
			FailureReason: p.Reason, Attempts: toUint32(p.Attempts), Series: toUint32(p.Series),
			ConfigurationID: p.ConfigurationID, EventTime: at, position: pos})
	case *events.InvestigationAttemptStartedV1:
		s.attempts = append(s.attempts, attemptRow{EventID: ev.ID, InvestigationID: p.InvestigationID,
			Series: toUint64(p.Series), Attempt: toUint64(p.Attempt), PromptName: p.Prompt.Name,
			PromptVersion: p.Prompt.Name + "@" + p.Prompt.Version, PromptSHA256: p.Prompt.SHA256,
			Provider: p.Provider, Model: p.Model, Credential: p.Credential, StartedAt: at, position: pos})
	case *events.InvestigationClaimAssessedV1:
		s.addAssessment(ev.ID, at, pos, p)
	case *events.AnalysisRequestedV1:
		s.analyses = append(s.analyses, analysisRow{EventID: ev.ID, AnalysisID: p.AnalysisID, InputKind: p.InputKind,
			Platform: p.Platform, Source: p.Source, Prompt: p.PromptVersion, TextLength: toUint32(utf8.RuneCountInString(p.Text)),
			RequestedAt: at, position: pos})
	case *events.AnalysisAttemptStartedV1:
		prompts := make([]string, len(p.Prompts))
		for i, pr := range p.Prompts {
			prompts[i] = pr.Name + "@" + pr.Version
		}
		s.analysisAttempts = append(s.analysisAttempts, analysisAttemptRow{EventID: ev.ID, AnalysisID: p.AnalysisID,
			Attempt: toUint32(p.Attempt), Prompts: prompts, Provider: p.Provider, Model: p.Model,
			RegistryVersion: p.RegistryVersion, PolicyVersion: p.PolicyVersion, Rubric: p.RubricVersion,
			StartedAt: at, position: pos})
	case *events.AnalysisPostVerdictV1:
		r := postVerdictRow{EventID: ev.ID, AnalysisID: p.AnalysisID, Attempt: toUint32(p.Attempt), Label: p.Label,
			Band: p.Band, TruthPercent: toUint8(p.TruthPercent), Confidence: toUint8(p.Confidence),
			ConfidenceBand: ConfidenceBand(p.Confidence), Caps: make([]string, len(p.Caps)),
			ClaimCount: toUint32(p.Claims), CaveatCount: toUint32(len(p.Caveats)), SourceCount: toUint32(len(p.Sources)),
			VerdictAt: at, position: pos}
		for i, c := range p.Caps {
			r.Caps[i] = c.Rule
		}
		for _, src := range p.Sources {
			if src.FromSearch {
				r.FromSearch++
			}
		}
		s.postVerdicts = append(s.postVerdicts, r)
	case *events.ConfigurationDeclaredV1:
		c := p.Configuration
		s.configurations = append(s.configurations, configurationRow{EventID: ev.ID, ConfigurationID: p.ConfigurationID,
			Name: c.Name, Provider: c.Provider, Model: c.Model, ValidatorModel: c.ValidatorModel,
			InvestigatorPrompt: c.InvestigatorPrompt, ValidatorPrompt: c.ValidatorPrompt, Policy: c.Policy,
			AuthorContext: c.AuthorContext, Operator: p.Operator, DeclaredAt: at, position: pos})
	case *events.ExperimentStartedV1:
		s.experiments = append(s.experiments, experimentRow{EventID: ev.ID, ExperimentID: p.ExperimentID, Kind: ExperimentStarted,
			Name: p.Name, ControlConfigurationID: p.ControlConfigurationID, CandidateConfigurationID: p.CandidateConfigurationID,
			CandidateShareBP: uint16(min(max(p.CandidateShareBP, 0), events.MaxShareBasisPoints)), Operator: p.Operator,
			EventTime: at, position: pos})
	case *events.ExperimentStoppedV1:
		s.experiments = append(s.experiments, experimentRow{EventID: ev.ID, ExperimentID: p.ExperimentID, Kind: ExperimentStopped,
			Operator: p.Operator, EventTime: at, position: pos})
	case *events.AppealFiledV1:
		s.appeals = append(s.appeals, appealRow{EventID: ev.ID, AppealID: p.AppealID, Kind: AppealFiled, ClaimID: p.ClaimID,
			InvestigationID: p.InvestigationID, Role: p.Role, URLCount: toUint32(len(p.URLs)), EventTime: at, position: pos})
	case *events.AppealDecidedV1:
		s.appeals = append(s.appeals, appealRow{EventID: ev.ID, AppealID: p.AppealID, Kind: AppealDecided, ClaimID: p.ClaimID,
			InvestigationID: p.InvestigationID, Outcome: p.Outcome, PolicyVersion: p.PolicyVersion, EventTime: at, position: pos})
	case *events.InvestigationExchangeRecordedV1:
		u := p.Usage
		s.exchanges = append(s.exchanges, exchangeRow{EventID: ev.ID, InvestigationID: p.InvestigationID,
			Series: toUint64(p.Series), Attempt: toUint64(p.Attempt), Stage: p.Stage, Round: toUint32(p.Round),
			Provider: p.Provider, Model: p.Model, HTTPStatus: int32(min(max(p.HTTPStatus, math.MinInt32), math.MaxInt32)),
			Failed: p.Error != nil, DurationMS: p.DurationMS, InputTokens: u.InputTokens, CachedInputTokens: u.CachedInputTokens,
			OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, TotalTokens: u.TotalTokens,
			RecordedAt: at, position: pos})
	default:
		return fmt.Errorf("metrics: unexpected payload %T", ev.Payload)
	}
	return nil
}

// addAssessment adds an assessment's row and one row per source. Every
// number is stored as recorded (validation bounds the score, tiers and
// probabilities; counts are Int64), so no value is silently changed.
func (s *rowSet) addAssessment(id string, at time.Time, pos position, p *events.InvestigationClaimAssessedV1) {
	r := assessmentRow{EventID: id, SubmissionID: p.SubmissionID, InvestigationID: p.InvestigationID,
		Series: toUint64(p.Series), Attempt: toUint64(p.Attempt), Causal: p.Causal,
		EMax: p.EMax, EMean3: p.EMean3, CMax: p.CMax, AgreeDom: int64(p.AgreeDom), RelAvg: p.RelAvg, RecMax: p.RecMax,
		NumOK: int64(p.NumOK), Raw: p.Raw, Score: toUint8(p.Score), Verdict: p.Verdict, Gate4: p.Gate4,
		Gate4Sources: int64(p.Gate4Sources), Gate4Quality: p.Gate4Quality, Gate4Agreement: p.Gate4Agreement,
		RegistryVersion: p.RegistryVersion, PolicyVersion: p.PolicyVersion, PublishMode: p.PublishMode,
		Published: p.Published, Reason: p.Reason, Failed: append([]string{}, p.Failed...),
		QueryCount: toUint32(len(p.Queries)), SourceCount: toUint32(len(p.Sources)), DroppedCount: toUint32(len(p.Dropped)),
		StanceProvider: p.StanceProvider, StanceModel: p.StanceModel, AssessedAt: at, position: pos}
	for _, q := range p.Queries {
		if q.Error != "" {
			r.QueryErrors++
		}
	}
	if sp := p.StancePrompt; sp != nil {
		r.StancePromptVersion = sp.Name + "@" + sp.Version
	}
	s.assessments = append(s.assessments, r)
	for i, src := range p.Sources {
		s.assessmentSources = append(s.assessmentSources, assessmentSourceRow{EventID: id, SubmissionID: p.SubmissionID,
			InvestigationID: p.InvestigationID, Position: uint32(i), URL: src.URL, Domain: src.Domain, Tier: toUint8(src.Tier),
			Rule: src.Rule, Origin: src.Origin, Entail: src.Entail, Contradict: src.Contradict, Neutral: src.Neutral,
			StanceNote: src.StanceNote, Num: src.Num, Recency: src.Recency, AssessedAt: at, position: pos})
	}
}

// toUint8, toUint32 and toUint64 fit a number into an unsigned column.
// Validation bounds every number of an accepted event (scores and
// percentages 0..100, tiers 1..5, attempts 1..N, series >= 1) and Kafka's
// record size bounds every count, so they change no value of a valid
// event; a number out of range saturates instead of wrapping around.
func toUint8(n int) uint8 { return uint8(min(max(n, 0), math.MaxUint8)) }

func toUint32(n int) uint32 { return uint32(min(toUint64(n), math.MaxUint32)) }

func toUint64(n int) uint64 { return uint64(max(n, 0)) }
