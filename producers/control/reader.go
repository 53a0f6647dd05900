package control

import (
	"context"

	"github.com/errata-dev/errata/projections/serving"
)

// The serving projection's view of analysis control, as the commands read
// it before deciding.
type (
	// Configuration is a declared configuration.
	Configuration = serving.Configuration
	// Promotion is one promotion (or rollback) in the history.
	Promotion = serving.Promotion
	// Experiment is a started experiment.
	Experiment = serving.Experiment
)

// Reader reads the serving projection's configurations, promotions and
// experiments (serving.Reader).
type Reader interface {
	ConfigurationByName(ctx context.Context, name string) (Configuration, error)
	ConfigurationByID(ctx context.Context, id string) (Configuration, error)
	ActiveConfiguration(ctx context.Context) (Configuration, error)
	Promotions(ctx context.Context) ([]Promotion, error)
	RunningExperiment(ctx context.Context) (*Experiment, error)
}

var _ Reader = (*serving.Reader)(nil)
