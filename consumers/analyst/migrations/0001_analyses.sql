-- The run state of verdict analyses, folded from the analyses topic by the
-- analyst's consumer group. Every column derives from events, except the
-- leases table, which is the workers' runtime coordination.

-- One row per analysis id: the first analysis.requested.v1 of the id
-- creates it, later requests change nothing.
CREATE TABLE analyses (
	analysis_id      uuid PRIMARY KEY,
	request_event_id uuid NOT NULL,
	-- the first request's payload as JSON text (text, not jsonb: jsonb
	-- refuses the escape of NUL, and a request must never be parked)
	request          text NOT NULL,
	-- PENDING, RUNNING, RETRY_WAIT, COMPLETE, FAILED
	status           text NOT NULL,
	-- the last attempt started or failed (0: none yet)
	attempt          int  NOT NULL DEFAULT 0,
	-- when the next attempt may start (request time, or the failure's retry_at)
	due_at           timestamptz NOT NULL,
	-- the current attempt has appended its post verdict: only completed is missing
	post_verdict     boolean NOT NULL DEFAULT false,
	last_failure     text,
	requested_at     timestamptz NOT NULL,
	updated_at       timestamptz NOT NULL
);
CREATE INDEX analyses_work_idx ON analyses (status, due_at);

-- The claims each attempt extracted and whether triage sent them to
-- research (completed counts them).
CREATE TABLE claims (
	claim_id    uuid PRIMARY KEY,
	analysis_id uuid NOT NULL,
	attempt     int  NOT NULL,
	researched  boolean NOT NULL
);
CREATE INDEX claims_attempt_idx ON claims (analysis_id, attempt);

-- Runtime leases of workers on analyses, in the shape runstate.Store
-- reads (investigation_id holds the analysis id). Not derived from events
-- and not part of any comparison of run states.
CREATE UNLOGGED TABLE leases (
	work_id          text PRIMARY KEY,
	investigation_id uuid NOT NULL,
	owner            text NOT NULL,
	until            timestamptz NOT NULL
);
CREATE INDEX leases_investigation_idx ON leases (investigation_id);
