-- The fold behind the analyses index: what a search document of a
-- COMPLETE verdict analysis needs. As in serving, each identity keeps the
-- row of its earliest event (event time, then event id), so any order of
-- folding the same events gives the same rows.

CREATE TABLE analyses (
	analysis_id   uuid PRIMARY KEY,
	input_kind    text NOT NULL,
	platform      text,
	external_id   text,
	url           text,
	title         text,
	created_at    timestamptz NOT NULL,
	request_event uuid NOT NULL
);

CREATE TABLE analysis_claims (
	claim_id    uuid PRIMARY KEY,
	analysis_id uuid NOT NULL,
	attempt     int  NOT NULL,
	idx         int  NOT NULL,
	text        text NOT NULL,
	at          timestamptz NOT NULL,
	event_id    uuid NOT NULL
);
CREATE INDEX analysis_claims_analysis_idx ON analysis_claims (analysis_id, attempt, idx);

CREATE TABLE analysis_post_verdicts (
	analysis_id   uuid NOT NULL,
	attempt       int  NOT NULL,
	label         text NOT NULL,
	band          text NOT NULL,
	truth_percent int  NOT NULL,
	confidence    int  NOT NULL,
	summary       text NOT NULL,
	caveats       jsonb NOT NULL,
	at            timestamptz NOT NULL,
	event_id      uuid NOT NULL,
	PRIMARY KEY (analysis_id, attempt)
);

CREATE TABLE analysis_completions (
	analysis_id  uuid NOT NULL,
	attempt      int  NOT NULL,
	completed_at timestamptz NOT NULL,
	event_id     uuid NOT NULL,
	PRIMARY KEY (analysis_id, attempt)
);

-- revision counts the events folded into an analysis's document (its
-- Elasticsearch external version), as documents does for investigations.
CREATE TABLE analysis_documents (
	analysis_id uuid PRIMARY KEY,
	revision    bigint NOT NULL CHECK (revision > 0)
);
