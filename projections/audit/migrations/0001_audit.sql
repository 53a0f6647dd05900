-- The audit projection: the envelopes of every investigation event with
-- their log position, and the folded registration facts of every post
-- version (audit.PostVersion as JSON). Built only from the log.
CREATE TABLE audit_events (
	event_id         uuid        PRIMARY KEY,
	investigation_id uuid        NOT NULL,
	topic            text        NOT NULL,
	partition        int         NOT NULL,
	kafka_offset     bigint      NOT NULL,
	event_type       text        NOT NULL,
	event_time       timestamptz NOT NULL,
	envelope         bytea       NOT NULL
);
CREATE INDEX audit_events_by_investigation ON audit_events (investigation_id, partition, kafka_offset);

CREATE TABLE audit_post_versions (
	post_version_id uuid  PRIMARY KEY,
	facts           jsonb NOT NULL
);
