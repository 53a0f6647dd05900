-- Analysis configurations, their promotions and experiments (the control
-- events, one Kafka key: totally ordered), investigations per (post
-- version, configuration), and appeals with the retractions they decide.
-- Appeals and investigations live in other partitions than the control
-- events and than each other, so during a rebuild any of them may arrive
-- first: every apply is order-independent, and which investigation a
-- reader sees (the visible one) is decided when reading, never stored.

-- The default configuration ('') is the worker's own settings; it is
-- always promoted (rank 0). name, operator, reason and declared_at are
-- NULL only on a row a promotion created before its declaration.
CREATE TABLE analysis_configurations (
	id             text PRIMARY KEY,
	name           text UNIQUE,
	spec           jsonb,        -- events.AnalysisConfigurationV1; NULL for the default
	operator       text,
	reason         text,
	declared_at    timestamptz,
	promotion_rank bigint        -- NULL: never promoted; the highest is the active configuration
);
INSERT INTO analysis_configurations (id, name, spec, operator, reason, declared_at, promotion_rank)
	VALUES ('', 'default', NULL, 'system', 'the worker''s own settings', '1970-01-01T00:00:00Z', 0);

CREATE TABLE configuration_promotions (
	event_id                  uuid PRIMARY KEY,
	configuration_id          text NOT NULL,
	previous_configuration_id text NOT NULL,
	rollback                  boolean NOT NULL,
	operator                  text NOT NULL,
	reason                    text NOT NULL,
	promoted_at               timestamptz NOT NULL,
	rank                      bigint NOT NULL UNIQUE
);

CREATE TABLE experiments (
	id                         uuid PRIMARY KEY,
	name                       text NOT NULL,
	control_configuration_id   text NOT NULL,
	candidate_configuration_id text NOT NULL,
	candidate_share_bp         int  NOT NULL,
	operator                   text NOT NULL,
	reason                     text NOT NULL,
	started_at                 timestamptz NOT NULL,
	stopped_at                 timestamptz,
	stop_operator              text,
	stop_reason                text
);
-- At most one experiment runs.
CREATE UNIQUE INDEX experiments_running_idx ON experiments ((true)) WHERE stopped_at IS NULL;

ALTER TABLE investigations
	ADD COLUMN configuration_id text NOT NULL DEFAULT '',
	ADD COLUMN supersedes       uuid,
	ADD COLUMN experiment_id    uuid,
	ADD COLUMN arm              text,
	DROP CONSTRAINT investigations_post_version_id_key,
	ADD CONSTRAINT investigations_version_configuration_key UNIQUE (post_version_id, configuration_id);
CREATE INDEX investigations_supersedes_idx ON investigations (supersedes) WHERE supersedes IS NOT NULL;

-- An appeal row may be created by its decision (applied before the
-- filing during a rebuild): the filing's columns are NULL until it comes.
CREATE TABLE appeals (
	id               uuid PRIMARY KEY,
	claim_id         uuid NOT NULL,
	investigation_id uuid NOT NULL,
	post_version_id  uuid,
	role             text,
	reason           text,
	urls             jsonb,
	requester_key    text,
	filed_at         timestamptz,
	status           text NOT NULL,  -- OPEN, UPHELD, RETRACTED
	decided_at       timestamptz,
	decision_reason  text,
	policy_version   text
);
CREATE INDEX appeals_claim_idx ON appeals (claim_id, filed_at);
CREATE INDEX appeals_requester_idx ON appeals (requester_key, filed_at);

-- A retracted claim keeps its row (history) and leaves the current view.
-- When several appeals retract it, the earliest decision (time, then
-- appeal id) is the one recorded, whatever order they are applied in.
ALTER TABLE claims
	ADD COLUMN retracted_at        timestamptz,
	ADD COLUMN retracted_by_appeal uuid,
	ADD COLUMN retraction_reason   text;
