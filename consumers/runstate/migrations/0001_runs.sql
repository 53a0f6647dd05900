-- The run state of investigations, folded from the investigations topic by
-- the investigator's and the validator's consumer groups (each group keeps
-- its own copy in its own schema). Every column derives from events, except
-- the leases table, which is the workers' runtime coordination.

CREATE TABLE runs (
	investigation_id uuid PRIMARY KEY,
	post_id          uuid NOT NULL,
	post_version_id  uuid NOT NULL,
	-- PENDING, RUNNING, RETRY_WAIT, FINISHING, COMPLETE, FAILED
	status           text NOT NULL,
	series           int  NOT NULL,
	-- the last attempt started in the series (0: none yet)
	attempt          int  NOT NULL DEFAULT 0,
	-- when the next stage-1 attempt may start (event time or retry_at)
	due_at           timestamptz NOT NULL,
	input_event_id   uuid,
	user_key         boolean NOT NULL DEFAULT false,
	last_failure     text,
	-- what runs the current attempt
	prompt           text,
	provider         text,
	model            text,
	updated_at       timestamptz NOT NULL
);
CREATE INDEX runs_work_idx ON runs (status, due_at);

-- The input snapshot of an investigation (first one wins).
CREATE TABLE inputs (
	investigation_id uuid PRIMARY KEY,
	event_id         uuid NOT NULL,
	payload          jsonb NOT NULL
);

-- Accepted claim submissions and the validator's decision (outcome NULL:
-- not validated yet).
CREATE TABLE submissions (
	submission_id    uuid PRIMARY KEY,
	investigation_id uuid NOT NULL,
	series           int  NOT NULL,
	attempt          int  NOT NULL,
	seq              int  NOT NULL,
	correction       jsonb NOT NULL,
	outcome          text,
	reason           text,
	submitted_at     timestamptz NOT NULL
);
CREATE INDEX submissions_attempt_idx ON submissions (investigation_id, series, attempt, seq);
CREATE INDEX submissions_open_idx ON submissions (submitted_at) WHERE outcome IS NULL;

-- Prior claims kept by retain_correction, in the order they were retained.
CREATE TABLE retains (
	investigation_id uuid NOT NULL,
	series           int  NOT NULL,
	attempt          int  NOT NULL,
	prior_claim_id   uuid NOT NULL,
	retained_at      timestamptz NOT NULL,
	ord              bigint NOT NULL,
	PRIMARY KEY (investigation_id, series, attempt, prior_claim_id)
);

-- Runtime leases of workers on units of work (not derived from events and
-- not part of any comparison of projections).
CREATE UNLOGGED TABLE leases (
	work_id          text PRIMARY KEY,
	investigation_id uuid NOT NULL,
	owner            text NOT NULL,
	until            timestamptz NOT NULL
);
CREATE INDEX leases_investigation_idx ON leases (investigation_id);
