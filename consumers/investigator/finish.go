package investigator

import (
	"context"
	"fmt"

	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/events"
)

// finish publishes a finished attempt once every accepted submission has a
// verdict: the retained prior claims first, in the order they were
// retained, then the approved new claims in the order they were submitted.
func (w *Worker) finish(ctx context.Context, run runstate.Run) error {
	ref := run.Ref()
	subs, err := w.Store.Submissions(ctx, ref)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if s.Outcome == "" {
			return nil // a validation is still running
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
				add(c)
			}
		}
	}
	for _, s := range subs {
		if s.Outcome == events.ValidationApproved {
			c := s.Correction
			add(events.ClaimV1{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: c.Sources})
		}
	}
	completed := &events.InvestigationCompletedV1{InvestigationID: run.InvestigationID, PostID: run.PostID,
		PostVersionID: run.PostVersionID, Provenance: in.Provenance, PromptVersion: run.Prompt,
		Provider: run.Provider, Model: run.Model, Claims: claims, Series: ref.Series, Attempt: ref.Attempt}
	if err := w.Appender.Append(context.WithoutCancel(ctx), run.InvestigationID, completed); err != nil {
		return err
	}
	w.Log.Info("investigation complete", "investigation", run.InvestigationID, "claims", len(claims),
		"submitted", len(subs), "retained", len(retained))
	w.forgetKey(context.WithoutCancel(ctx), run.InvestigationID)
	return nil
}
