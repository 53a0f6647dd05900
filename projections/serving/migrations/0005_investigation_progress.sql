-- Live progress of running investigations: the attempt that runs, and the
-- claims it submitted with the validator's decision so far (pendingClaims
-- and confirmedClaims of the API).
ALTER TABLE investigations
	ADD COLUMN attempt int NOT NULL DEFAULT 0;

CREATE TABLE investigation_progress_claims (
	submission_id    uuid PRIMARY KEY,
	investigation_id uuid NOT NULL REFERENCES investigations (id) ON DELETE CASCADE,
	series           int  NOT NULL,
	attempt          int  NOT NULL,
	seq              int  NOT NULL,
	text             text NOT NULL,
	context          text NOT NULL,
	summary          text NOT NULL,
	reasoning        text NOT NULL,
	sources          jsonb NOT NULL,
	outcome          text,              -- NULL: pending; APPROVED, REJECTED, ERROR
	submitted_at     timestamptz NOT NULL
);
CREATE INDEX investigation_progress_claims_attempt_idx
	ON investigation_progress_claims (investigation_id, series, attempt, seq);
