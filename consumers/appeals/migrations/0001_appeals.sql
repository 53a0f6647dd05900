-- The run state of appeal reviews, folded from the investigations topic by
-- the appeals consumer group. Every column derives from events, except the
-- leases table, which is the workers' runtime coordination.

-- Published claims (investigation.completed.v1): what a review re-examines.
CREATE TABLE claims (
	claim_id         uuid PRIMARY KEY,
	investigation_id uuid NOT NULL,
	text             text NOT NULL,
	context          text NOT NULL,
	submission_id    uuid
);

-- The policy each assessed submission was judged by and the sources it
-- read (investigation.claim_assessed.v1): a review judges by the same
-- policy and reads those sources again.
CREATE TABLE assessments (
	submission_id  uuid PRIMARY KEY,
	policy_version text NOT NULL,
	-- the assessed sources as JSON text
	sources        text NOT NULL
);

-- One row per appeal: the first appeal.filed.v1 of the id creates it.
CREATE TABLE appeals (
	appeal_id     uuid PRIMARY KEY,
	claim_id      uuid NOT NULL,
	-- the filed payload as JSON text (text: jsonb refuses some escapes)
	filed         text NOT NULL,
	-- PENDING, RUNNING, RETRY_WAIT, DECIDED, FAILED
	status        text NOT NULL,
	-- the last attempt started or failed (0: none yet)
	attempt       int  NOT NULL DEFAULT 0,
	due_at        timestamptz NOT NULL,
	-- the current attempt's evidence_assessed payload as JSON text: only
	-- the decision is missing
	assessed      text,
	last_failure  text,
	filed_at      timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);
CREATE INDEX appeals_work_idx ON appeals (status, due_at);

-- Runtime leases of workers on appeals, in the shape runstate.Store reads
-- (investigation_id holds the appeal id). Not derived from events.
CREATE UNLOGGED TABLE leases (
	work_id          text PRIMARY KEY,
	investigation_id uuid NOT NULL,
	owner            text NOT NULL,
	until            timestamptz NOT NULL
);
CREATE INDEX leases_investigation_idx ON leases (investigation_id);
