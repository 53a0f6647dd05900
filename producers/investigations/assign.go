package investigations

import (
	"context"
	"fmt"

	"github.com/errata-dev/errata/projections/serving"
)

// ServingReader is what ServingAssigner reads (serving.Reader).
type ServingReader interface {
	Assign(ctx context.Context, postVersionID string) (serving.Assignment, error)
	InvestigationHistory(ctx context.Context, postVersionID string) ([]serving.InvestigationHistoryEntry, error)
	ConfigurationByID(ctx context.Context, id string) (serving.Configuration, error)
}

// ServingAssigner decides assignments from the serving projection.
type ServingAssigner struct{ r ServingReader }

// NewServingAssigner returns an assigner reading r.
func NewServingAssigner(r ServingReader) *ServingAssigner { return &ServingAssigner{r: r} }

var _ Assigner = (*ServingAssigner)(nil)

// Assign implements Assigner: the running experiment's arm, else the
// active configuration.
func (a *ServingAssigner) Assign(ctx context.Context, postVersionID string) (Assignment, error) {
	return a.r.Assign(ctx, postVersionID)
}

// Of implements Assigner: the configuration and arm the investigation was
// requested under, with the configuration's settings.
func (a *ServingAssigner) Of(ctx context.Context, postVersionID, investigationID string) (Assignment, error) {
	history, err := a.r.InvestigationHistory(ctx, postVersionID)
	if err != nil {
		return Assignment{}, err
	}
	for _, e := range history {
		if e.ID != investigationID {
			continue
		}
		c, err := a.r.ConfigurationByID(ctx, e.ConfigurationID)
		if err != nil {
			return Assignment{}, fmt.Errorf("configuration %q of investigation %s: %w", e.ConfigurationID, investigationID, err)
		}
		return Assignment{ConfigurationID: c.ID, Configuration: c.Spec, ExperimentID: e.ExperimentID, Arm: e.Arm}, nil
	}
	return Assignment{}, fmt.Errorf("investigation %s of version %s: %w", investigationID, postVersionID, serving.ErrNotFound)
}
