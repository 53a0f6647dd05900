package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/serving"
)

type (
	// ReprocessFilter selects the post versions to re-investigate.
	ReprocessFilter = serving.ReprocessFilter
	// ReprocessCandidate is a version to re-investigate and the visible
	// investigation the new one supersedes.
	ReprocessCandidate = serving.ReprocessCandidate
)

// CandidateReader pages through the versions a filter selects.
type CandidateReader interface {
	ReprocessCandidates(ctx context.Context, f ReprocessFilter, afterPostVersionID string, limit int) ([]ReprocessCandidate, error)
}

// BudgetCounter counts the REPROCESS requests for a configuration the
// serving projection has with a request time at or after since.
type BudgetCounter interface {
	ReprocessRequestsSince(ctx context.Context, configurationID string, since time.Time) (int, error)
}

// EventAppender is an Appender that can date an event (producers.Appender).
type EventAppender interface {
	NewEventAt(p events.Payload, at time.Time, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// Watermark waits until the serving projection applied a log position.
type Watermark interface {
	WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error
}

// Reprocessor appends re-investigation requests within a daily budget.
type Reprocessor struct {
	configs    Reader
	candidates CandidateReader
	budget     BudgetCounter
	appender   EventAppender
	watermark  Watermark
	now        func() time.Time
}

// NewReprocessor wires a reprocessor.
func NewReprocessor(configs Reader, candidates CandidateReader, budget BudgetCounter, a EventAppender, wm Watermark, now func() time.Time) *Reprocessor {
	if now == nil {
		now = time.Now
	}
	return &Reprocessor{configs: configs, candidates: candidates, budget: budget, appender: a, watermark: wm, now: now}
}

// ReprocessPlan is a re-processing run: the target and the budget.
type ReprocessPlan struct {
	Configuration string // name
	Filter        ReprocessFilter
	// DailyBudget is the most REPROCESS requests for the target per UTC day.
	DailyBudget int
	DryRun      bool
	// PageSize is how many candidates are read (and appended) at a time.
	PageSize int
	// WaitTimeout bounds the wait for the projection after each page.
	WaitTimeout time.Duration
	// Progress, when set, is told how many were requested so far of at most total.
	Progress func(done, total int)
}

// ReprocessResult reports a run.
type ReprocessResult struct {
	ConfigurationID string
	// Selected counts the versions the filter selects that have no
	// investigation under the target (a dry run counts them all).
	Selected int
	// UsedToday is how many REPROCESS requests for the target the serving
	// projection had today before this run; Remaining what was left.
	UsedToday, Remaining int
	// DailyBudget is the plan's budget.
	DailyBudget int
	Requested   int
}

// ErrBudgetSpent means the day's budget for the target is spent.
var ErrBudgetSpent = errors.New("the daily re-processing budget is spent")

// Run selects the versions and, unless DryRun, appends one
// investigation.requested (source REPROCESS) per version, at most the
// day's remaining budget. The requests' ids derive from (post version,
// configuration), so a repeated run requests nothing twice.
func (r *Reprocessor) Run(ctx context.Context, plan ReprocessPlan) (ReprocessResult, error) {
	if plan.PageSize <= 0 {
		plan.PageSize = 200
	}
	if plan.DailyBudget < 0 {
		return ReprocessResult{}, refuse("the budget must not be negative")
	}
	target, err := r.configurationByName(ctx, plan.Configuration)
	if err != nil {
		return ReprocessResult{}, err
	}
	if target.Spec == nil {
		return ReprocessResult{}, refuse("re-processing runs under a declared configuration, not the default one")
	}
	res := ReprocessResult{ConfigurationID: target.ID, DailyBudget: plan.DailyBudget}
	plan.Filter.Target = target.ID
	now := r.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if res.UsedToday, err = r.budget.ReprocessRequestsSince(ctx, target.ID, day); err != nil {
		return res, fmt.Errorf("budget used today: %w", err)
	}
	res.Remaining = max(0, plan.DailyBudget-res.UsedToday)
	if plan.DryRun {
		res.Selected, err = r.count(ctx, plan.Filter, plan.PageSize)
		return res, err
	}
	if res.Remaining == 0 {
		return res, ErrBudgetSpent
	}
	correlation := fmt.Sprintf("reprocess-%s-%d", target.ID, now.UnixNano())
	after := ""
	for res.Requested < res.Remaining {
		page, err := r.candidates.ReprocessCandidates(ctx, plan.Filter, after, min(plan.PageSize, res.Remaining-res.Requested))
		if err != nil {
			return res, fmt.Errorf("select versions: %w", err)
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1].PostVersionID
		evs := make([]events.Event, 0, len(page))
		for _, c := range page {
			ev, err := r.appender.NewEventAt(&events.InvestigationRequestedV1{
				InvestigationID: events.InvestigationIDFor(c.PostVersionID, target.ID),
				PostID:          c.PostID, PostVersionID: c.PostVersionID, Platform: c.Platform,
				ExternalID: c.ExternalID, VersionHash: c.VersionHash, Source: events.RequestSourceReprocess,
				ConfigurationID: target.ID, Configuration: target.Spec, Supersedes: c.Supersedes,
			}, now, correlation, "")
			if err != nil {
				return res, fmt.Errorf("request for %s: %w", c.PostVersionID, err)
			}
			evs = append(evs, ev)
		}
		positions, err := r.appender.Append(ctx, evs...)
		if err != nil {
			return res, err
		}
		res.Requested += len(evs)
		res.Selected += len(evs)
		if plan.Progress != nil {
			plan.Progress(res.Requested, res.Remaining)
		}
		// The next run (and the budget count) must see these requests.
		for _, p := range positions {
			if err := r.watermark.WaitFor(ctx, p.Topic, p.Partition, p.Offset, plan.WaitTimeout); err != nil {
				return res, fmt.Errorf("serving projection behind after %d requests: %w", res.Requested, err)
			}
		}
	}
	return res, nil
}

// count pages through every candidate (a dry run).
func (r *Reprocessor) count(ctx context.Context, f ReprocessFilter, pageSize int) (int, error) {
	n, after := 0, ""
	for {
		page, err := r.candidates.ReprocessCandidates(ctx, f, after, pageSize)
		if err != nil {
			return n, fmt.Errorf("select versions: %w", err)
		}
		n += len(page)
		if len(page) < pageSize {
			return n, nil
		}
		after = page[len(page)-1].PostVersionID
	}
}

func (r *Reprocessor) configurationByName(ctx context.Context, name string) (Configuration, error) {
	s := Service{reader: r.configs}
	return s.byName(ctx, name)
}
