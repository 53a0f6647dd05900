-- Events the projector parked instead of applying: records it cannot decode
-- (class decode) and events whose rows ClickHouse refuses deterministically
-- (class deterministic; their rows are deleted). Each is also copied to the
-- dead-letter topic. A rebuild parks the same events, so this table is part
-- of the canonical dump (without reason, whose text may name the database).

CREATE TABLE IF NOT EXISTS _parked (
    topic         LowCardinality(String) COMMENT 'logical topic of the record (posts, investigations)',
    log_partition Int32,
    log_offset    Int64,
    event_id      String COMMENT 'the record''s errata-id header, else the decoded event id; any bytes in a record that is not an event',
    event_type    String COMMENT 'the record''s errata-type header',
    class         LowCardinality(String) COMMENT 'decode or deterministic',
    reason        String COMMENT 'why it was parked',
    record_time   DateTime64(3, 'UTC') COMMENT 'the record''s Kafka timestamp'
) ENGINE = ReplacingMergeTree
ORDER BY (topic, log_partition, log_offset)
COMMENT 'records the metrics projector parked (also on the dead-letter topic); one row per record, redeliveries collapse';
