-- Results of investigations: the terminal state, what produced it, and the
-- published claims (every claim stored is an incorrect claim).
ALTER TABLE investigations
	ADD COLUMN provenance     text,         -- of the investigated content, from the input snapshot
	ADD COLUMN checked_at     timestamptz,  -- when it completed or failed
	ADD COLUMN prompt_version text,
	ADD COLUMN provider       text,
	ADD COLUMN model          text,
	ADD COLUMN failure_reason text,
	ADD COLUMN attempt_series int NOT NULL DEFAULT 1;
CREATE INDEX investigations_complete_idx ON investigations (post_id, checked_at DESC) WHERE status = 'COMPLETE';

CREATE TABLE claims (
	id               uuid PRIMARY KEY,
	investigation_id uuid NOT NULL REFERENCES investigations (id) ON DELETE CASCADE,
	ord              int  NOT NULL,
	text             text NOT NULL,
	context          text NOT NULL,
	summary          text NOT NULL,
	reasoning        text NOT NULL,
	sources          jsonb NOT NULL,  -- [{url, title, snippet}]
	created_at       timestamptz NOT NULL,
	UNIQUE (investigation_id, ord)
);
