-- The envelopes of every verdict analysis event with their log position
-- (audit.Reader.FullAnalysisTrail folds them with BuildAnalysis).
CREATE TABLE audit_analysis_events (
	event_id     uuid        PRIMARY KEY,
	analysis_id  uuid        NOT NULL,
	topic        text        NOT NULL,
	partition    int         NOT NULL,
	kafka_offset bigint      NOT NULL,
	event_type   text        NOT NULL,
	event_time   timestamptz NOT NULL,
	envelope     bytea       NOT NULL
);
CREATE INDEX audit_analysis_events_by_analysis ON audit_analysis_events (analysis_id, partition, kafka_offset);
