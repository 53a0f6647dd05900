-- Instance API keys (only their sha256 is known), integrity anomalies, and
-- investigations as requested so far (their lifecycle comes with the
-- investigator). Investigations live on another topic than posts, so during
-- a rebuild a request may arrive before its version: no foreign keys across
-- topics; readers join.

CREATE TABLE instance_api_keys (
	key_id     uuid PRIMARY KEY,
	key_sha256 text NOT NULL UNIQUE,
	label      text NOT NULL,
	created_at timestamptz NOT NULL,
	revoked_at timestamptz,
	revoke_reason text
);

CREATE TABLE integrity_anomalies (
	event_id        uuid PRIMARY KEY,
	post_id         uuid NOT NULL,
	post_version_id uuid NOT NULL,
	kind            text NOT NULL,
	field           text NOT NULL,
	observed_value  text NOT NULL,
	server_value    text NOT NULL,
	recorded_at     timestamptz NOT NULL
);
CREATE INDEX integrity_anomalies_post_idx ON integrity_anomalies (post_id, recorded_at);

CREATE TABLE investigations (
	id              uuid PRIMARY KEY,
	post_id         uuid NOT NULL,
	post_version_id uuid NOT NULL UNIQUE,  -- at most one investigation per version
	status          text NOT NULL,         -- PENDING -> PROCESSING -> COMPLETE | FAILED
	source          text NOT NULL,         -- who asked first: SELECTOR | INVESTIGATE_NOW
	request_count   int  NOT NULL,
	queued_at       timestamptz NOT NULL,
	updated_at      timestamptz NOT NULL
);
CREATE INDEX investigations_status_idx ON investigations (status);
CREATE INDEX investigations_post_idx ON investigations (post_id);
