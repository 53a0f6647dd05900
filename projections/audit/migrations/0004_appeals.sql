-- The envelopes of every appeal event with their log position
-- (audit.Reader.FullAppealTrail folds them with BuildAppeal).
CREATE TABLE audit_appeal_events (
	event_id     uuid        PRIMARY KEY,
	appeal_id    uuid        NOT NULL,
	topic        text        NOT NULL,
	partition    int         NOT NULL,
	kafka_offset bigint      NOT NULL,
	event_type   text        NOT NULL,
	event_time   timestamptz NOT NULL,
	envelope     bytea       NOT NULL
);
CREATE INDEX audit_appeal_events_by_appeal ON audit_appeal_events (appeal_id, partition, kafka_offset);
