-- The evidence engine's assessment of approved submissions, and what the
-- assessor reads besides a submission's own sources: the pages stage 1
-- fetched with fetch_url and the sources the validator's answer cited.

-- assessed, published, assess_reason: the first claim_assessed event of the
-- submission (a repeated one changes nothing).
-- fetches_before: how many fetch_url results of the attempt were folded
-- before the submission, the ones its assessment reads (so that the
-- evidence does not depend on when the assessment runs).
-- validator_citations: the url_citation sources of the validator's last
-- successful exchange before its verdict ([{url, title, snippet}]).
-- assess_failures, assess_failed_at: the assessor's failed provider
-- exchanges (provider failures, not unusable answers) and the time of the
-- last one: the assessment waits before it is tried again.
ALTER TABLE submissions
	ADD COLUMN assessed            boolean NOT NULL DEFAULT false,
	ADD COLUMN published           boolean,
	ADD COLUMN assess_reason       text,
	ADD COLUMN fetches_before      int NOT NULL DEFAULT 0,
	ADD COLUMN validator_citations jsonb NOT NULL DEFAULT '[]',
	ADD COLUMN assess_failures     int NOT NULL DEFAULT 0,
	ADD COLUMN assess_failed_at    timestamptz;
CREATE INDEX submissions_unassessed_idx ON submissions (submitted_at) WHERE outcome = 'APPROVED' AND NOT assessed;

-- The fetch_url results of stage-1 attempts, in the order they were
-- recorded (ord), as the tool output the model received.
CREATE TABLE fetches (
	investigation_id uuid NOT NULL,
	series           int  NOT NULL,
	attempt          int  NOT NULL,
	ord              int  NOT NULL,
	call_id          text NOT NULL,
	output           text NOT NULL,
	PRIMARY KEY (investigation_id, series, attempt, ord),
	UNIQUE (investigation_id, series, attempt, call_id)
);
