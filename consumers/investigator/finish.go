package investigator

import (
	"context"
	"fmt"

	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
)

// finish publishes a finished attempt once every accepted submission has a
// verdict and every approved one its assessment: the retained prior claims
// first, in the order they were retained, then, in the order they were
// submitted, the approved new claims whose assessment publishes them (the
// first assessment of each: runstate keeps it). A published claim keeps
// the sources its submission cited (the wire contract); its assessment,
// named by SubmissionID, holds the evidence that was judged.
//
// Retained prior claims are published again unchanged and not assessed
// anew: a prior investigation published each of them under the policy in
// force then (its own assessment, or none before the engine existed), and
// retaining only says its quoted text is still in the post. An assessment
// belongs to a submission, and no new evidence was gathered for them; an
// operator who wants them judged under a newer policy asks for a fresh
// investigation.
func (w *Worker) finish(ctx context.Context, run runstate.Run) error {
	ref := run.Ref()
	subs, err := w.Store.Submissions(ctx, ref)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if s.Outcome == "" || (s.Outcome == events.ValidationApproved && !s.Assessed) {
			return nil // a validation or an assessment is still running
		}
	}
	in, _, err := w.Store.Input(ctx, run.InvestigationID)
	if err != nil {
		return fmt.Errorf("input of %s: %w", run.InvestigationID, err)
	}
	retained, err := w.Store.Retained(ctx, ref)
	if err != nil {
		return err
	}
	claims := []events.ClaimV1{}
	add := func(c events.ClaimV1) {
		c.ID = events.ClaimID(run.InvestigationID, len(claims))
		claims = append(claims, c)
	}
	if in.Update != nil {
		byID := map[string]events.ClaimV1{}
		for _, c := range in.Update.PriorClaims {
			byID[c.ID] = c
		}
		for _, id := range retained {
			if c, ok := byID[id]; ok {
				c.SubmissionID = "" // a submission of the prior investigation, not of this one
				add(c)
			}
		}
	}
	withheld := 0
	for _, s := range subs {
		if s.Outcome != events.ValidationApproved {
			continue
		}
		if !s.Published {
			withheld++
			continue
		}
		c := s.Correction
		add(events.ClaimV1{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: c.Sources,
			SubmissionID: s.ID})
	}
	completed := &events.InvestigationCompletedV1{InvestigationID: run.InvestigationID, PostID: run.PostID,
		PostVersionID: run.PostVersionID, Provenance: in.Provenance, PromptVersion: run.Prompt,
		Provider: run.Provider, Model: run.Model, Claims: claims, Series: ref.Series, Attempt: ref.Attempt,
		ConfigurationID: run.ConfigurationID}
	if err := w.Appender.Append(context.WithoutCancel(ctx), run.InvestigationID, completed); err != nil {
		return err
	}
	w.Log.Info("investigation complete", "investigation", run.InvestigationID, "claims", len(claims),
		"submitted", len(subs), "retained", len(retained), "withheld", withheld)
	w.forgetKey(context.WithoutCancel(ctx), run.InvestigationID)
	return nil
}
