-- Analysis configurations, experiments and appeals (issue 18): which
-- configuration, experiment and arm each investigation ran under, the
-- model exchanges that give its tokens and model time, and the appeals
-- filed against its claims. Like every table, ReplacingMergeTree ending in
-- the event id: a redelivered or replayed event collapses under FINAL.
-- Control events share one partition (key analysis-control), an
-- investigation's events share one, an appeal's events share one; nothing
-- below orders events of different partitions by offset.

ALTER TABLE investigations ADD COLUMN IF NOT EXISTS configuration_id String DEFAULT '' COMMENT 'the configuration of the request, completion or failure ('''' = the default configuration)' AFTER series;
ALTER TABLE investigations ADD COLUMN IF NOT EXISTS experiment_id String DEFAULT '' COMMENT 'requests only: the experiment that assigned it; empty outside experiments' AFTER configuration_id;
ALTER TABLE investigations ADD COLUMN IF NOT EXISTS arm LowCardinality(String) DEFAULT '' COMMENT 'requests only: CONTROL or CANDIDATE; empty outside experiments' AFTER experiment_id;
ALTER TABLE investigations ADD COLUMN IF NOT EXISTS supersedes String DEFAULT '' COMMENT 'requests only: the investigation a re-processing re-does; empty otherwise' AFTER arm;

CREATE TABLE IF NOT EXISTS configurations (
    event_id            UUID COMMENT 'id of the configuration.declared event',
    configuration_id    String,
    name                String,
    provider            LowCardinality(String),
    model               LowCardinality(String),
    validator_model     LowCardinality(String),
    investigator_prompt LowCardinality(String),
    validator_prompt    LowCardinality(String),
    policy              LowCardinality(String),
    author_context      Bool,
    operator            String,
    declared_at         DateTime64(3, 'UTC'),
    log_partition       Int32,
    log_offset          Int64
) ENGINE = ReplacingMergeTree
ORDER BY (configuration_id, event_id)
COMMENT 'one row per configuration.declared event (the default configuration, id '''', is never declared: it is named default)';

CREATE TABLE IF NOT EXISTS experiments (
    event_id                   UUID COMMENT 'id of the experiment.started or experiment.stopped event',
    experiment_id              String,
    kind                       LowCardinality(String) COMMENT 'STARTED or STOPPED: which event this row is',
    name                       String COMMENT 'starts only',
    control_configuration_id   String COMMENT 'starts only',
    candidate_configuration_id String COMMENT 'starts only',
    candidate_share_bp         UInt16 COMMENT 'starts only: the candidate''s share in basis points',
    operator                   String,
    event_time                 DateTime64(3, 'UTC'),
    log_partition              Int32,
    log_offset                 Int64
) ENGINE = ReplacingMergeTree
ORDER BY (experiment_id, event_id)
COMMENT 'one row per experiment.started and experiment.stopped event';

CREATE TABLE IF NOT EXISTS appeals (
    event_id         UUID COMMENT 'id of the appeal.filed or appeal.decided event',
    appeal_id        UUID,
    kind             LowCardinality(String) COMMENT 'FILED or DECIDED: which event this row is',
    claim_id         UUID,
    investigation_id UUID,
    role             LowCardinality(String) COMMENT 'filings only: READER or AUTHOR',
    url_count        UInt32 COMMENT 'filings only: source URLs the appellant gave',
    outcome          LowCardinality(String) COMMENT 'decisions only: UPHELD or RETRACTED',
    policy_version   LowCardinality(String) COMMENT 'decisions only',
    event_time       DateTime64(3, 'UTC'),
    log_partition    Int32,
    log_offset       Int64
) ENGINE = ReplacingMergeTree
ORDER BY (appeal_id, event_id)
COMMENT 'one row per appeal.filed and appeal.decided event (no requester key, no appellant text)';

CREATE TABLE IF NOT EXISTS exchanges (
    event_id            UUID COMMENT 'id of the investigation.exchange_recorded event',
    investigation_id    UUID,
    series              UInt64,
    attempt             UInt64,
    stage               LowCardinality(String) COMMENT 'INVESTIGATOR, VALIDATOR, ASSESSOR, ...',
    round               UInt32,
    provider            LowCardinality(String),
    model               LowCardinality(String),
    http_status         Int32,
    failed              Bool COMMENT 'the exchange recorded an error',
    duration_ms         Int64,
    input_tokens        Int64,
    cached_input_tokens Int64,
    output_tokens       Int64,
    reasoning_tokens    Int64,
    total_tokens        Int64,
    recorded_at         DateTime64(3, 'UTC'),
    log_partition       Int32,
    log_offset          Int64
) ENGINE = ReplacingMergeTree
ORDER BY (investigation_id, series, attempt, event_id)
COMMENT 'one row per investigation.exchange_recorded event: usage and duration, without the exchanged bytes';

CREATE OR REPLACE VIEW configuration_names AS
SELECT configuration_id, name, model, investigator_prompt, policy, author_context
FROM
(
    SELECT '' AS configuration_id, 'default' AS name, '' AS model, '' AS investigator_prompt, '' AS policy, false AS author_context
    UNION ALL
    SELECT
        configuration_id,
        argMin(name, (declared_at, toString(event_id))),
        argMin(model, (declared_at, toString(event_id))),
        argMin(investigator_prompt, (declared_at, toString(event_id))),
        argMin(policy, (declared_at, toString(event_id))),
        argMin(author_context, (declared_at, toString(event_id)))
    FROM configurations FINAL
    WHERE configuration_id != ''
    GROUP BY configuration_id
)
COMMENT 'each configuration with its name and main settings: the default configuration (id '''', named default) and every declared one';

CREATE OR REPLACE VIEW experiment_names AS
SELECT
    experiment_id,
    argMinIf(name, (event_time, toString(event_id)), kind = 'STARTED') AS name,
    argMinIf(control_configuration_id, (event_time, toString(event_id)), kind = 'STARTED') AS control_configuration_id,
    argMinIf(candidate_configuration_id, (event_time, toString(event_id)), kind = 'STARTED') AS candidate_configuration_id,
    argMinIf(candidate_share_bp, (event_time, toString(event_id)), kind = 'STARTED') AS candidate_share_bp,
    if(countIf(kind = 'STARTED') > 0, minIf(event_time, kind = 'STARTED'), NULL) AS started_at,
    if(countIf(kind = 'STOPPED') > 0, minIf(event_time, kind = 'STOPPED'), NULL) AS stopped_at
FROM experiments FINAL
GROUP BY experiment_id
COMMENT 'each experiment: name, control and candidate configurations, the candidate''s share, when it started and stopped';

CREATE OR REPLACE VIEW investigation_cohorts AS
SELECT
    c.c_investigation_id AS investigation_id,
    c.c_configuration_id AS configuration_id,
    if(n.name = '', c.c_configuration_id, n.name) AS configuration_name,
    c.c_experiment_id AS experiment_id,
    e.name AS experiment_name,
    c.c_arm AS arm,
    c.c_supersedes AS supersedes
FROM
(
    SELECT
        investigation_id AS c_investigation_id,
        if(countIf(status = 'REQUESTED') > 0, argMinIf(configuration_id, log_offset, status = 'REQUESTED'),
            argMin(configuration_id, log_offset)) AS c_configuration_id,
        argMinIf(experiment_id, log_offset, status = 'REQUESTED') AS c_experiment_id,
        argMinIf(arm, log_offset, status = 'REQUESTED') AS c_arm,
        argMinIf(supersedes, log_offset, status = 'REQUESTED') AS c_supersedes
    FROM investigations FINAL
    GROUP BY investigation_id
) AS c
LEFT JOIN configuration_names AS n ON n.configuration_id = c.c_configuration_id
LEFT JOIN experiment_names AS e ON e.experiment_id = c.c_experiment_id
COMMENT 'each investigation with the configuration (and its name), experiment and arm of its first request, and the investigation it supersedes';

CREATE OR REPLACE VIEW investigation_outcomes AS
SELECT
    l.investigation_id AS investigation_id,
    l.post_version_id AS post_version_id,
    l.platform AS platform,
    k.configuration_id AS configuration_id,
    k.configuration_name AS configuration_name,
    k.experiment_id AS experiment_id,
    k.experiment_name AS experiment_name,
    k.arm AS arm,
    k.supersedes AS supersedes,
    l.claim_count AS claims,
    l.claim_count > 0 AS flagged,
    a.a_assessed AS assessed,
    a.a_withheld AS withheld,
    x.x_exchanges AS exchanges,
    x.x_input_tokens AS input_tokens,
    x.x_cached_input_tokens AS cached_input_tokens,
    x.x_output_tokens AS output_tokens,
    x.x_total_tokens AS total_tokens,
    x.x_model_ms AS model_ms,
    greatest(dateDiff('millisecond', assumeNotNull(l.requested_at), assumeNotNull(l.completed_at)), 0) AS latency_ms,
    p.p_appeals AS appeals,
    p.p_retracted_claims AS retracted_claims
FROM investigations_latest AS l
INNER JOIN investigation_cohorts AS k ON k.investigation_id = l.investigation_id
LEFT JOIN
(
    SELECT investigation_id AS a_investigation_id, count() AS a_assessed, countIf(NOT published) AS a_withheld
    FROM assessed_claims
    GROUP BY a_investigation_id
) AS a ON a.a_investigation_id = k.investigation_id
LEFT JOIN
(
    SELECT
        investigation_id AS x_investigation_id, count() AS x_exchanges,
        sum(input_tokens) AS x_input_tokens, sum(cached_input_tokens) AS x_cached_input_tokens,
        sum(output_tokens) AS x_output_tokens, sum(total_tokens) AS x_total_tokens, sum(duration_ms) AS x_model_ms
    FROM exchanges FINAL
    GROUP BY x_investigation_id
) AS x ON x.x_investigation_id = k.investigation_id
LEFT JOIN
(
    SELECT
        f.investigation_id AS p_investigation_id,
        uniqExact(f.appeal_id) AS p_appeals,
        uniqExactIf(f.claim_id, d.outcome = 'RETRACTED') AS p_retracted_claims
    FROM (SELECT appeal_id, any(claim_id) AS claim_id, any(investigation_id) AS investigation_id
          FROM appeals FINAL WHERE kind = 'FILED' GROUP BY appeal_id) AS f
    LEFT JOIN (SELECT appeal_id, argMin(outcome, (event_time, toString(event_id))) AS outcome
               FROM appeals FINAL WHERE kind = 'DECIDED' GROUP BY appeal_id) AS d ON d.appeal_id = f.appeal_id
    GROUP BY f.investigation_id
) AS p ON p.p_investigation_id = k.investigation_id
WHERE l.status = 'COMPLETE'
COMMENT 'each COMPLETE investigation with its configuration, experiment and arm: published claims, flagged (>= 1 claim), assessed and withheld claims, model exchanges with their tokens and model time (every attempt and stage), latency from its first request to its completion, appeals filed on its claims and claims retracted by a decided appeal';

CREATE OR REPLACE VIEW experiment_arms AS
SELECT
    experiment_id,
    any(experiment_name) AS experiment_name,
    arm,
    any(configuration_name) AS configuration_name,
    count() AS investigations,
    countIf(flagged) AS flagged_investigations,
    countIf(flagged) / count() AS flag_rate,
    sum(claims) / count() AS claims_per_post,
    sum(assessed) AS claims_assessed,
    sum(withheld) AS claims_withheld,
    if(sum(assessed) = 0, 0, sum(withheld) / sum(assessed)) AS withheld_rate,
    sum(total_tokens) / count() AS tokens_per_investigation,
    sum(input_tokens) / count() AS input_tokens_per_investigation,
    sum(cached_input_tokens) / count() AS cached_input_tokens_per_investigation,
    sum(output_tokens) / count() AS output_tokens_per_investigation,
    sum(model_ms) / count() AS model_ms_per_investigation,
    avg(latency_ms) AS mean_latency_ms,
    quantileExact(0.5)(latency_ms) AS median_latency_ms,
    sum(appeals) AS appeals_filed,
    if(sum(claims) = 0, 0, sum(appeals) / sum(claims)) AS appeal_rate,
    sum(retracted_claims) AS claims_retracted,
    if(sum(claims) = 0, 0, sum(retracted_claims) / sum(claims)) AS retraction_rate
FROM investigation_outcomes
WHERE experiment_id != ''
GROUP BY experiment_id, arm
COMMENT 'per experiment and arm, over COMPLETE investigations: flag rate, claims per post, withheld rate, tokens, model time and latency per investigation, appeal rate (appeals per published claim) and retraction rate (retracted claims per published claim)';

CREATE OR REPLACE VIEW configuration_outcomes AS
SELECT
    configuration_id,
    any(configuration_name) AS configuration_name,
    count() AS investigations,
    countIf(flagged) AS flagged_investigations,
    countIf(flagged) / count() AS flag_rate,
    sum(claims) / count() AS claims_per_post,
    sum(assessed) AS claims_assessed,
    sum(withheld) AS claims_withheld,
    if(sum(assessed) = 0, 0, sum(withheld) / sum(assessed)) AS withheld_rate,
    sum(total_tokens) / count() AS tokens_per_investigation,
    sum(input_tokens) / count() AS input_tokens_per_investigation,
    sum(cached_input_tokens) / count() AS cached_input_tokens_per_investigation,
    sum(output_tokens) / count() AS output_tokens_per_investigation,
    sum(model_ms) / count() AS model_ms_per_investigation,
    avg(latency_ms) AS mean_latency_ms,
    quantileExact(0.5)(latency_ms) AS median_latency_ms,
    sum(appeals) AS appeals_filed,
    if(sum(claims) = 0, 0, sum(appeals) / sum(claims)) AS appeal_rate,
    sum(retracted_claims) AS claims_retracted,
    if(sum(claims) = 0, 0, sum(retracted_claims) / sum(claims)) AS retraction_rate
FROM investigation_outcomes
GROUP BY configuration_id
COMMENT 'the same figures as experiment_arms per configuration, inside and outside experiments';

CREATE OR REPLACE VIEW cohort_assessments AS
SELECT
    c.submission_id AS submission_id,
    c.investigation_id AS investigation_id,
    k.configuration_id AS configuration_id,
    k.configuration_name AS configuration_name,
    k.experiment_id AS experiment_id,
    k.experiment_name AS experiment_name,
    k.arm AS arm,
    c.policy_version AS policy_version,
    c.verdict AS verdict,
    c.gate4 AS gate4,
    c.published AS published,
    c.reason AS reason
FROM assessed_claims AS c
INNER JOIN investigation_cohorts AS k ON k.investigation_id = c.investigation_id
COMMENT 'assessed_claims with the configuration, experiment and arm of their investigation';

CREATE OR REPLACE VIEW withheld_by_arm AS
SELECT
    w.experiment_id AS experiment_id, w.arm AS arm, w.reason AS reason, w.withheld AS withheld, n.assessed AS assessed,
    w.withheld / n.assessed AS withheld_rate
FROM
(
    SELECT experiment_id, arm, reason, count() AS withheld
    FROM cohort_assessments WHERE experiment_id != '' AND NOT published
    GROUP BY experiment_id, arm, reason
) AS w
INNER JOIN
(
    SELECT experiment_id, arm, count() AS assessed
    FROM cohort_assessments WHERE experiment_id != ''
    GROUP BY experiment_id, arm
) AS n ON n.experiment_id = w.experiment_id AND n.arm = w.arm
COMMENT 'per experiment, arm and reason (the first rule that failed): claims withheld, claims assessed in the arm, their ratio';

CREATE OR REPLACE VIEW withheld_by_configuration AS
SELECT
    w.configuration_id AS configuration_id, w.configuration_name AS configuration_name, w.reason AS reason,
    w.withheld AS withheld, n.assessed AS assessed, w.withheld / n.assessed AS withheld_rate
FROM
(
    SELECT configuration_id, any(configuration_name) AS configuration_name, reason, count() AS withheld
    FROM cohort_assessments WHERE NOT published
    GROUP BY configuration_id, reason
) AS w
INNER JOIN
(
    SELECT configuration_id, count() AS assessed
    FROM cohort_assessments
    GROUP BY configuration_id
) AS n ON n.configuration_id = w.configuration_id
COMMENT 'per configuration and reason: claims withheld, claims assessed under the configuration, their ratio';

CREATE OR REPLACE VIEW gate4_by_arm AS
SELECT
    g.experiment_id AS experiment_id, g.arm AS arm, g.gate4 AS gate4, g.claims AS claims, g.claims / n.assessed AS share
FROM
(
    SELECT experiment_id, arm, gate4, count() AS claims
    FROM cohort_assessments WHERE experiment_id != ''
    GROUP BY experiment_id, arm, gate4
) AS g
INNER JOIN
(
    SELECT experiment_id, arm, count() AS assessed
    FROM cohort_assessments WHERE experiment_id != ''
    GROUP BY experiment_id, arm
) AS n ON n.experiment_id = g.experiment_id AND n.arm = g.arm
COMMENT 'per experiment, arm and Gate 4 level (HIGH, MEDIUM, LOW, INSUFFICIENT): assessed claims and their share of the arm''s';

CREATE OR REPLACE VIEW gate4_by_configuration AS
SELECT
    g.configuration_id AS configuration_id, g.configuration_name AS configuration_name, g.gate4 AS gate4, g.claims AS claims,
    g.claims / n.assessed AS share
FROM
(
    SELECT configuration_id, any(configuration_name) AS configuration_name, gate4, count() AS claims
    FROM cohort_assessments
    GROUP BY configuration_id, gate4
) AS g
INNER JOIN
(
    SELECT configuration_id, count() AS assessed
    FROM cohort_assessments
    GROUP BY configuration_id
) AS n ON n.configuration_id = g.configuration_id
COMMENT 'per configuration and Gate 4 level: assessed claims and their share of the configuration''s';
