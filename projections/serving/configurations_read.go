package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// Configuration is a declared analysis configuration.
type Configuration struct {
	ID   string
	Name string
	// Spec is nil for the default configuration.
	Spec       *events.AnalysisConfigurationV1
	Operator   string
	Reason     string
	DeclaredAt time.Time
	// PromotionRank is nil when the configuration was never promoted; the
	// default's is 0; the highest is the active configuration.
	PromotionRank *int64
	Active        bool
}

// Promotion is one promotion (or rollback) of a configuration.
type Promotion struct {
	EventID                 string
	ConfigurationID         string
	PreviousConfigurationID string
	Rollback                bool
	Operator                string
	Reason                  string
	At                      time.Time
	Rank                    int64
}

// Experiment is a prompt experiment, running or stopped.
type Experiment struct {
	ID                       string
	Name                     string
	ControlConfigurationID   string
	CandidateConfigurationID string
	CandidateShareBP         int
	Operator                 string
	Reason                   string
	StartedAt                time.Time
	StoppedAt                *time.Time
	StopOperator             string
	StopReason               string
}

// Assignment is the configuration a new investigation of a version runs
// under, and the experiment arm that chose it when one runs.
type Assignment struct {
	ConfigurationID string
	// Configuration is nil for the default configuration.
	Configuration *events.AnalysisConfigurationV1
	ExperimentID  string
	Arm           string
}

// configurationColumns read a declared configuration (a row a promotion
// created before its declaration has no name and is not listed); the
// active one is the declared configuration of highest rank.
const configurationColumns = `c.id, c.name, c.spec, COALESCE(c.operator, ''), COALESCE(c.reason, ''), c.declared_at,
	c.promotion_rank, c.promotion_rank IS NOT NULL AND c.promotion_rank =
		(SELECT max(m.promotion_rank) FROM analysis_configurations m WHERE m.name IS NOT NULL)`

func scanConfiguration(row pgx.Row) (Configuration, error) {
	var c Configuration
	var spec []byte
	if err := row.Scan(&c.ID, &c.Name, &spec, &c.Operator, &c.Reason, &c.DeclaredAt, &c.PromotionRank, &c.Active); err != nil {
		return Configuration{}, err
	}
	if spec != nil {
		c.Spec = &events.AnalysisConfigurationV1{}
		if err := json.Unmarshal(spec, c.Spec); err != nil {
			return Configuration{}, fmt.Errorf("configuration %q spec: %w", c.ID, err)
		}
	}
	return c, nil
}

func (r *Reader) oneConfiguration(ctx context.Context, what, where string, arg any) (Configuration, error) {
	c, err := scanConfiguration(r.pool.QueryRow(ctx, `SELECT `+configurationColumns+`
		FROM analysis_configurations c WHERE c.name IS NOT NULL AND `+where, arg))
	if errors.Is(err, pgx.ErrNoRows) {
		return Configuration{}, ErrNotFound
	}
	if err != nil {
		return Configuration{}, fmt.Errorf("configuration %s: %w", what, err)
	}
	return c, nil
}

// Configurations lists the declared configurations: the default first,
// then by declaration time.
func (r *Reader) Configurations(ctx context.Context) ([]Configuration, error) {
	rows, err := r.pool.Query(ctx, `SELECT `+configurationColumns+`
		FROM analysis_configurations c WHERE c.name IS NOT NULL
		ORDER BY c.id <> '', c.declared_at, c.id`)
	if err != nil {
		return nil, fmt.Errorf("configurations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Configuration, error) { return scanConfiguration(row) })
	if err != nil {
		return nil, fmt.Errorf("configurations: %w", err)
	}
	return out, nil
}

// ConfigurationByName finds a declared configuration by name ("default"
// is the default configuration); ErrNotFound when none has it.
func (r *Reader) ConfigurationByName(ctx context.Context, name string) (Configuration, error) {
	if !plainText(name) {
		return Configuration{}, ErrNotFound
	}
	return r.oneConfiguration(ctx, fmt.Sprintf("named %q", name), `c.name = $1`, name)
}

// ConfigurationByID finds a declared configuration by id ("" is the
// default); ErrNotFound when none has it.
func (r *Reader) ConfigurationByID(ctx context.Context, id string) (Configuration, error) {
	if id != "" && !isUUID(id) {
		return Configuration{}, ErrNotFound
	}
	return r.oneConfiguration(ctx, fmt.Sprintf("%q", id), `c.id = $1`, id)
}

// ActiveConfiguration is the declared configuration promoted last (the
// default until anything is promoted).
func (r *Reader) ActiveConfiguration(ctx context.Context) (Configuration, error) {
	c, err := scanConfiguration(r.pool.QueryRow(ctx, `SELECT `+configurationColumns+`
		FROM analysis_configurations c WHERE c.name IS NOT NULL AND c.promotion_rank IS NOT NULL
		ORDER BY c.promotion_rank DESC LIMIT 1`))
	if err != nil {
		return Configuration{}, fmt.Errorf("active configuration: %w", err)
	}
	return c, nil
}

// Promotions lists every promotion, oldest first.
func (r *Reader) Promotions(ctx context.Context) ([]Promotion, error) {
	rows, err := r.pool.Query(ctx, `SELECT event_id::text, configuration_id, previous_configuration_id, rollback,
			operator, reason, promoted_at, rank
		FROM configuration_promotions ORDER BY rank`)
	if err != nil {
		return nil, fmt.Errorf("promotions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Promotion, error) {
		var p Promotion
		err := row.Scan(&p.EventID, &p.ConfigurationID, &p.PreviousConfigurationID, &p.Rollback, &p.Operator,
			&p.Reason, &p.At, &p.Rank)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("promotions: %w", err)
	}
	return out, nil
}

const experimentColumns = `id::text, name, control_configuration_id, candidate_configuration_id, candidate_share_bp,
	operator, reason, started_at, stopped_at, COALESCE(stop_operator, ''), COALESCE(stop_reason, '')`

func scanExperiment(row pgx.Row) (Experiment, error) {
	var e Experiment
	err := row.Scan(&e.ID, &e.Name, &e.ControlConfigurationID, &e.CandidateConfigurationID, &e.CandidateShareBP,
		&e.Operator, &e.Reason, &e.StartedAt, &e.StoppedAt, &e.StopOperator, &e.StopReason)
	return e, err
}

// Experiments lists every experiment, oldest first.
func (r *Reader) Experiments(ctx context.Context) ([]Experiment, error) {
	rows, err := r.pool.Query(ctx, `SELECT `+experimentColumns+` FROM experiments ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Experiment, error) { return scanExperiment(row) })
	if err != nil {
		return nil, fmt.Errorf("experiments: %w", err)
	}
	return out, nil
}

// RunningExperiment is the running experiment, nil when none runs.
func (r *Reader) RunningExperiment(ctx context.Context) (*Experiment, error) {
	e, err := scanExperiment(r.pool.QueryRow(ctx, `SELECT `+experimentColumns+` FROM experiments WHERE stopped_at IS NULL`))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("running experiment: %w", err)
	}
	return &e, nil
}

// Assign decides the configuration of a new investigation of a version:
// the arm of the running experiment (events.ExperimentArm) when one runs,
// else the active configuration. It does not check whether the version
// has a visible investigation already (the caller does). An arm whose
// configuration is not declared is an error: the request must carry the
// configuration's content.
func (r *Reader) Assign(ctx context.Context, postVersionID string) (Assignment, error) {
	exp, err := r.RunningExperiment(ctx)
	if err != nil {
		return Assignment{}, err
	}
	if exp == nil {
		c, err := r.ActiveConfiguration(ctx)
		if err != nil {
			return Assignment{}, err
		}
		return Assignment{ConfigurationID: c.ID, Configuration: c.Spec}, nil
	}
	arm := events.ExperimentArm(exp.ID, postVersionID, exp.CandidateShareBP)
	id := exp.ControlConfigurationID
	if arm == events.ArmCandidate {
		id = exp.CandidateConfigurationID
	}
	c, err := r.ConfigurationByID(ctx, id)
	if err != nil {
		return Assignment{}, fmt.Errorf("assign %s: experiment %s arm %s configuration %q: %w", postVersionID, exp.Name, arm, id, err)
	}
	return Assignment{ConfigurationID: c.ID, Configuration: c.Spec, ExperimentID: exp.ID, Arm: arm}, nil
}

// plainText reports whether s can be a configuration name at all: short
// valid UTF-8 without NUL (which Postgres text refuses).
func plainText(s string) bool {
	return len(s) <= 200 && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
