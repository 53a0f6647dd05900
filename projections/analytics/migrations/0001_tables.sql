-- One row per event of each kind that matters. Every table is a
-- ReplacingMergeTree whose sorting key ends in the event id, so a redelivered
-- or replayed event inserts a duplicate row that FINAL (and, later, merges)
-- collapses. log_partition and log_offset are the event's Kafka position: they
-- order one aggregate's events (a post's or an investigation's events share a
-- partition).

CREATE TABLE IF NOT EXISTS post_versions (
    event_id                UUID COMMENT 'id of the post.version_registered event',
    post_id                 UUID,
    post_version_id         UUID,
    platform                LowCardinality(String) COMMENT 'LESSWRONG, X, SUBSTACK or WIKIPEDIA',
    external_id             String COMMENT 'the platform''s id of the post',
    url                     String,
    version_hash            String,
    author_id               String COMMENT 'events.AuthorID(platform, platform user id); empty when the registration named no author',
    author_platform_user_id String,
    author_display_name     String,
    provenance              LowCardinality(String) COMMENT 'SERVER_VERIFIED or CLIENT_FALLBACK',
    word_count              UInt32,
    reporter_key_hash       String COMMENT 'keyed hash of the authenticated reporter; empty when anonymous',
    registered_at           DateTime64(3, 'UTC') COMMENT 'event time of the registration',
    log_partition           Int32,
    log_offset              Int64
) ENGINE = ReplacingMergeTree
ORDER BY (post_version_id, event_id)
COMMENT 'one row per registration (observation) of a post version; a version registered twice has two rows';

CREATE TABLE IF NOT EXISTS views (
    event_id        UUID COMMENT 'id of the post.view_recorded event',
    post_id         UUID,
    post_version_id UUID,
    platform        LowCardinality(String),
    viewer_kind     LowCardinality(String) COMMENT 'INSTANCE_API_KEY or ANONYMOUS_SESSION',
    authenticated   Bool COMMENT 'viewer_kind = INSTANCE_API_KEY',
    viewed_at       DateTime64(3, 'UTC') COMMENT 'event time of the view',
    viewed_on       Date COMMENT 'UTC day of viewed_at',
    log_partition   Int32,
    log_offset      Int64
) ENGINE = ReplacingMergeTree
ORDER BY (platform, viewed_on, event_id)
COMMENT 'one row per recorded view (no viewer or network hashes)';

CREATE TABLE IF NOT EXISTS investigations (
    event_id          UUID COMMENT 'id of the investigation state event',
    investigation_id  UUID,
    post_id           UUID,
    post_version_id   UUID,
    status            LowCardinality(String) COMMENT 'REQUESTED, COMPLETED or FAILED: which event this row is',
    platform          LowCardinality(String) COMMENT 'requests only (completions and failures do not carry it)',
    source            LowCardinality(String) COMMENT 'requests only: SELECTOR or INVESTIGATE_NOW',
    unique_view_score Int64 COMMENT 'requests by the selector: the post''s score when chosen',
    provenance        LowCardinality(String) COMMENT 'completions and failures: provenance of the content investigated',
    prompt_version    LowCardinality(String) COMMENT 'completions only',
    provider          LowCardinality(String) COMMENT 'completions only',
    model             LowCardinality(String) COMMENT 'completions only',
    claim_count       UInt32 COMMENT 'completions only: published claims',
    failure_reason    String COMMENT 'failures only',
    attempts          UInt32 COMMENT 'failures only',
    series            UInt32 COMMENT 'completions and failures: attempt series (0 when the event predates series)',
    event_time        DateTime64(3, 'UTC'),
    log_partition     Int32,
    log_offset        Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, event_id)
COMMENT 'one row per investigation.requested, investigation.completed and investigation.failed event';

CREATE TABLE IF NOT EXISTS claims (
    event_id         UUID COMMENT 'id of the investigation.completed event that published the claim',
    claim_id         UUID,
    investigation_id UUID,
    post_id          UUID,
    post_version_id  UUID,
    position         UInt16 COMMENT 'order of the claim in its completion',
    text             String COMMENT 'the claim as quoted from the post',
    summary          String,
    source_count     UInt16,
    published_at     DateTime64(3, 'UTC') COMMENT 'event time of the completion',
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, claim_id, event_id)
COMMENT 'one row per claim published by an investigation.completed event';

CREATE TABLE IF NOT EXISTS _positions (
    topic       String,
    partition   Int32,
    next_offset Int64,
    event_time  DateTime64(3, 'UTC') COMMENT 'event time of the last record applied'
) ENGINE = ReplacingMergeTree(next_offset)
ORDER BY (topic, partition)
COMMENT 'the metrics projector''s next offset per partition, written after the rows it covers; read with max(next_offset)';
