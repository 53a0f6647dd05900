-- The evidence engine's assessments (investigation.claim_assessed) and the
-- attempts they belong to (investigation.attempt_started: prompt and model).
-- Like every table, ReplacingMergeTree ending in the event id: a redelivered
-- or replayed event collapses under FINAL.

CREATE TABLE IF NOT EXISTS attempts (
    event_id         UUID COMMENT 'id of the investigation.attempt_started event',
    investigation_id UUID,
    series           UInt64,
    attempt          UInt64,
    prompt_name      LowCardinality(String) COMMENT 'the investigator prompt',
    prompt_version   LowCardinality(String) COMMENT 'name@version, as completions record it',
    prompt_sha256    String,
    provider         LowCardinality(String),
    model            LowCardinality(String),
    credential       LowCardinality(String) COMMENT 'INSTANCE or USER: whose key paid',
    started_at       DateTime64(3, 'UTC'),
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, series, attempt, event_id)
COMMENT 'one row per investigation.attempt_started event: the prompt, provider and model of an attempt';

CREATE TABLE IF NOT EXISTS claim_assessments (
    event_id              UUID COMMENT 'id of the investigation.claim_assessed event',
    submission_id         UUID COMMENT 'the approved submission assessed',
    investigation_id      UUID,
    series                UInt64,
    attempt               UInt64,
    causal                Bool COMMENT 'a timeline query ran',
    e_max                 Float64,
    e_mean3               Float64,
    c_max                 Float64,
    agree_dom             Int64 COMMENT 'independent domains that support the claim',
    rel_avg               Float64 COMMENT 'mean reliability of the top three passages',
    rec_max               Float64,
    num_ok                Int64,
    raw                   Float64 COMMENT 'Tsao''s weighted raw score',
    score                 UInt8 COMMENT 'round(100 * sigmoid((raw - 0.5) / 0.15))',
    verdict               LowCardinality(String) COMMENT 'SUPPORTED, REFUTED, CONTESTED or NOT_ENOUGH_EVIDENCE',
    gate4                 LowCardinality(String) COMMENT 'HIGH, MEDIUM, LOW or INSUFFICIENT',
    gate4_sources         Int64,
    gate4_quality         Float64,
    gate4_agreement       Float64,
    registry_version      LowCardinality(String),
    policy_version        LowCardinality(String),
    publish_mode          LowCardinality(String) COMMENT 'strict or validator-only',
    published             Bool,
    reason                LowCardinality(String) COMMENT '''published'' or the first rule that failed',
    failed                Array(String) COMMENT 'every rule that failed',
    query_count           UInt32,
    query_errors          UInt32 COMMENT 'queries of our own search that failed',
    source_count          UInt32,
    dropped_count         UInt32 COMMENT 'sources the engine did not read',
    stance_provider       LowCardinality(String),
    stance_model          LowCardinality(String),
    stance_prompt_version LowCardinality(String) COMMENT 'name@version of the stance prompt; empty when no passage needed one',
    assessed_at           DateTime64(3, 'UTC'),
    log_partition         Int32,
    log_offset            Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, submission_id, event_id)
COMMENT 'one row per investigation.claim_assessed event; the first per submission counts (assessed_claims)';

CREATE TABLE IF NOT EXISTS assessment_sources (
    event_id         UUID COMMENT 'id of the investigation.claim_assessed event',
    submission_id    UUID,
    investigation_id UUID,
    position         UInt32 COMMENT 'order of the source in its assessment',
    url              String,
    domain           String COMMENT 'registrable domain, the unit of independence',
    tier             UInt8 COMMENT '1 official .. 5 known unreliable',
    rule             String COMMENT 'the source registry rule that gave the tier',
    origin           LowCardinality(String) COMMENT 'investigator, validator, search or fetch_url',
    entail           Float64,
    contradict       Float64,
    neutral          Float64,
    stance_note      String COMMENT 'why the stance is the neutral default; empty when judged',
    num              LowCardinality(String) COMMENT 'numeric check: empty, match or mismatch',
    recency          Float64,
    assessed_at      DateTime64(3, 'UTC'),
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, submission_id, position, event_id)
COMMENT 'one row per source of an investigation.claim_assessed event';

CREATE OR REPLACE VIEW assessed_claims AS
SELECT
    a.a_event_id AS event_id,
    a.a_submission_id AS submission_id,
    a.a_investigation_id AS investigation_id,
    a.a_series AS series,
    a.a_attempt AS attempt,
    i.platform AS platform,
    t.t_prompt_version AS prompt_version,
    t.t_model AS model,
    a.a_verdict AS verdict,
    a.a_score AS score,
    a.a_gate4 AS gate4,
    a.a_registry_version AS registry_version,
    a.a_policy_version AS policy_version,
    a.a_publish_mode AS publish_mode,
    a.a_published AS published,
    a.a_reason AS reason,
    a.a_failed AS failed,
    a.a_source_count AS source_count,
    a.a_assessed_at AS assessed_at
FROM
(
    SELECT
        event_id AS a_event_id, submission_id AS a_submission_id, investigation_id AS a_investigation_id,
        series AS a_series, attempt AS a_attempt, verdict AS a_verdict, score AS a_score, gate4 AS a_gate4,
        registry_version AS a_registry_version, policy_version AS a_policy_version, publish_mode AS a_publish_mode,
        published AS a_published, reason AS a_reason, failed AS a_failed, source_count AS a_source_count,
        assessed_at AS a_assessed_at
    FROM claim_assessments FINAL
    ORDER BY a_submission_id, log_offset, a_event_id
    LIMIT 1 BY a_submission_id
) AS a
LEFT JOIN investigations_latest AS i ON i.investigation_id = a.a_investigation_id
LEFT JOIN
(
    SELECT
        investigation_id AS t_investigation_id, series AS t_series, attempt AS t_attempt,
        argMin(prompt_version, log_offset) AS t_prompt_version, argMin(model, log_offset) AS t_model
    FROM attempts FINAL
    GROUP BY investigation_id, series, attempt
) AS t ON t.t_investigation_id = a.a_investigation_id AND t.t_series = a.a_series AND t.t_attempt = a.a_attempt
COMMENT 'one row per assessed submission (its first assessment), with the platform of its investigation and the investigator prompt version and model of its attempt';

CREATE OR REPLACE VIEW withheld_by_reason AS
SELECT
    w.w_policy_version AS policy_version,
    w.w_reason AS reason,
    w.w_withheld AS withheld,
    n.n_assessed AS assessed,
    w.w_withheld / n.n_assessed AS withheld_rate
FROM
(
    SELECT policy_version AS w_policy_version, reason AS w_reason, count() AS w_withheld
    FROM assessed_claims
    WHERE NOT published
    GROUP BY policy_version, reason
) AS w
INNER JOIN
(
    SELECT policy_version AS n_policy_version, count() AS n_assessed
    FROM assessed_claims
    GROUP BY policy_version
) AS n ON n.n_policy_version = w.w_policy_version
COMMENT 'per policy version and reason (the first rule that failed): claims withheld, claims assessed, and their ratio';

CREATE OR REPLACE VIEW verdicts_by_policy AS
SELECT
    platform,
    prompt_version,
    policy_version,
    verdict,
    count() AS claims,
    countIf(is_published) AS published,
    countIf(NOT is_published) AS withheld
FROM (SELECT platform, prompt_version, policy_version, verdict, published AS is_published FROM assessed_claims)
GROUP BY platform, prompt_version, policy_version, verdict
COMMENT 'assessed claims per platform, investigator prompt version, policy version and verdict, published and withheld';

CREATE OR REPLACE VIEW source_tier_mix AS
SELECT
    m.m_registry_version AS registry_version,
    m.m_tier AS tier,
    m.m_sources AS sources,
    m.m_domains AS domains,
    m.m_claims AS claims,
    m.m_sources / n.n_sources AS share
FROM
(
    SELECT c.registry_version AS m_registry_version, s.s_tier AS m_tier, count() AS m_sources,
        uniqExact(s.s_domain) AS m_domains, uniqExact(s.s_submission_id) AS m_claims
    FROM (SELECT event_id AS s_event_id, submission_id AS s_submission_id, tier AS s_tier, domain AS s_domain
          FROM assessment_sources FINAL) AS s
    INNER JOIN assessed_claims AS c ON c.event_id = s.s_event_id
    GROUP BY m_registry_version, m_tier
) AS m
INNER JOIN
(
    SELECT c.registry_version AS n_registry_version, count() AS n_sources
    FROM (SELECT event_id AS s_event_id FROM assessment_sources FINAL) AS s
    INNER JOIN assessed_claims AS c ON c.event_id = s.s_event_id
    GROUP BY n_registry_version
) AS n ON n.n_registry_version = m.m_registry_version
COMMENT 'per registry version and tier, over the sources of assessed claims: sources, distinct domains, claims citing the tier, and the share of the version''s sources';
