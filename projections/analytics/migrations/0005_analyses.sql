-- Verdict analyses (the analyses topic): requests, attempts with their
-- versions, and post verdicts. Like every table, ReplacingMergeTree ending
-- in the event id: a redelivered or replayed event collapses under FINAL.
-- An analysis's events share one partition, so log_offset orders them.

CREATE TABLE IF NOT EXISTS analyses (
    event_id       UUID COMMENT 'id of the analysis.requested event',
    analysis_id    UUID,
    input_kind     LowCardinality(String) COMMENT 'POST, TEXT or URL',
    platform       LowCardinality(String) COMMENT 'the post''s platform; empty for a submission',
    source         LowCardinality(String) COMMENT 'EXTENSION, WORKBENCH or API',
    prompt_version LowCardinality(String) COMMENT 'the analysis''s prompt version (part of its identity)',
    text_length    UInt32 COMMENT 'characters of the analysed text',
    requested_at   DateTime64(3, 'UTC'),
    log_partition  Int32,
    log_offset     Int64
) ENGINE = ReplacingMergeTree
ORDER BY (analysis_id, event_id)
COMMENT 'one row per analysis.requested event (a repeated request has its own row)';

CREATE TABLE IF NOT EXISTS analysis_attempts (
    event_id         UUID COMMENT 'id of the analysis.attempt_started event',
    analysis_id      UUID,
    attempt          UInt32,
    prompts          Array(String) COMMENT 'name@version of every prompt of the attempt',
    provider         LowCardinality(String),
    model            LowCardinality(String),
    registry_version LowCardinality(String),
    policy_version   LowCardinality(String),
    rubric_version   LowCardinality(String) COMMENT 'the confidence rubric and its caps',
    started_at       DateTime64(3, 'UTC'),
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (analysis_id, attempt, event_id)
COMMENT 'one row per analysis.attempt_started event: the versions an attempt ran with';

CREATE TABLE IF NOT EXISTS post_verdicts (
    event_id         UUID COMMENT 'id of the analysis.post_verdict event',
    analysis_id      UUID,
    attempt          UInt32,
    label            LowCardinality(String) COMMENT 'factSocial''s: True, MostlyTrue, Mixed, Misleading, False, Unverifiable, Opinion',
    band             LowCardinality(String) COMMENT 'FactHarbor''s: TRUE, MOSTLY-TRUE, LEANING-TRUE, MIXED, UNVERIFIED, LEANING-FALSE, MOSTLY-FALSE, FALSE',
    truth_percent    UInt8,
    confidence       UInt8 COMMENT '0-100 after the rubric''s caps',
    confidence_band  LowCardinality(String) COMMENT '0-39, 40-69 or 70-100',
    caps             Array(String) COMMENT 'rules of the caps the rubric applied',
    claim_count      UInt32,
    caveat_count     UInt32,
    source_count     UInt32,
    from_search      UInt32 COMMENT 'sources filled from the search results (the model omitted them)',
    verdict_at       DateTime64(3, 'UTC'),
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (analysis_id, attempt, event_id)
COMMENT 'one row per analysis.post_verdict event';

CREATE OR REPLACE VIEW analysis_verdicts AS
SELECT
    v.v_analysis_id AS analysis_id,
    v.v_attempt AS attempt,
    r.r_input_kind AS input_kind,
    if(r.r_input_kind = 'POST', r.r_platform, r.r_input_kind) AS platform,
    r.r_source AS source,
    r.r_prompt_version AS prompt_version,
    t.t_model AS model,
    t.t_registry_version AS registry_version,
    t.t_policy_version AS policy_version,
    t.t_rubric_version AS rubric_version,
    v.v_label AS label,
    v.v_band AS band,
    v.v_truth_percent AS truth_percent,
    v.v_confidence AS confidence,
    v.v_confidence_band AS confidence_band,
    v.v_caps AS caps,
    v.v_claim_count AS claim_count,
    v.v_source_count AS source_count,
    v.v_verdict_at AS verdict_at
FROM
(
    SELECT
        analysis_id AS v_analysis_id,
        argMax(attempt, (attempt, -log_offset)) AS v_attempt,
        argMax(label, (attempt, -log_offset)) AS v_label,
        argMax(band, (attempt, -log_offset)) AS v_band,
        argMax(truth_percent, (attempt, -log_offset)) AS v_truth_percent,
        argMax(confidence, (attempt, -log_offset)) AS v_confidence,
        argMax(confidence_band, (attempt, -log_offset)) AS v_confidence_band,
        argMax(caps, (attempt, -log_offset)) AS v_caps,
        argMax(claim_count, (attempt, -log_offset)) AS v_claim_count,
        argMax(source_count, (attempt, -log_offset)) AS v_source_count,
        argMax(verdict_at, (attempt, -log_offset)) AS v_verdict_at
    FROM post_verdicts FINAL
    GROUP BY analysis_id
) AS v
INNER JOIN
(
    SELECT
        analysis_id AS r_analysis_id,
        argMin(input_kind, log_offset) AS r_input_kind,
        argMin(platform, log_offset) AS r_platform,
        argMin(source, log_offset) AS r_source,
        argMin(prompt_version, log_offset) AS r_prompt_version
    FROM analyses FINAL
    GROUP BY analysis_id
) AS r ON r.r_analysis_id = v.v_analysis_id
LEFT JOIN
(
    SELECT
        analysis_id AS t_analysis_id, attempt AS t_attempt,
        argMin(model, log_offset) AS t_model,
        argMin(registry_version, log_offset) AS t_registry_version,
        argMin(policy_version, log_offset) AS t_policy_version,
        argMin(rubric_version, log_offset) AS t_rubric_version
    FROM analysis_attempts FINAL
    GROUP BY analysis_id, attempt
) AS t ON t.t_analysis_id = v.v_analysis_id AND t.t_attempt = v.v_attempt
COMMENT 'one row per requested analysis with a post verdict: the verdict of its latest attempt that has one (the first such event), with the platform (or TEXT or URL for a submission), source and prompt version of its first request, and the model and registry, policy and rubric versions of that attempt';

CREATE OR REPLACE VIEW verdict_distribution AS
SELECT
    platform,
    label,
    confidence_band,
    count() AS analyses,
    avg(truth_percent) AS mean_truth_percent,
    avg(confidence) AS mean_confidence
FROM analysis_verdicts
GROUP BY platform, label, confidence_band
COMMENT 'verdicts per platform (TEXT or URL for submissions), label and confidence band: analyses, mean truth percentage, mean confidence';
