-- Views read every table with FINAL, so answers are exact before merges
-- collapse redelivered rows.

CREATE OR REPLACE VIEW version_authors AS
SELECT
    post_version_id,
    argMax(post_id, log_offset)             AS post_id,
    argMax(platform, log_offset)            AS platform,
    argMax(author_id, log_offset)           AS author_id,
    argMax(author_display_name, log_offset) AS author_display_name,
    min(registered_at)                      AS first_registered_at,
    count()                                 AS registrations
FROM post_versions FINAL
GROUP BY post_version_id
COMMENT 'each post version with the platform and author of its latest registration';

CREATE OR REPLACE VIEW investigations_latest AS
SELECT
    i.l_investigation_id AS investigation_id,
    i.l_post_id AS post_id,
    i.l_post_version_id AS post_version_id,
    if(v.platform != '', v.platform, i.l_requested_platform) AS platform,
    v.author_id AS author_id,
    v.author_display_name AS author_display_name,
    i.l_status AS status,
    i.l_source AS source,
    i.l_request_count AS request_count,
    i.l_requested_at AS requested_at,
    i.l_completed_at AS completed_at,
    i.l_failed_at AS failed_at,
    i.l_claim_count AS claim_count,
    i.l_provenance AS provenance,
    i.l_provider AS provider,
    i.l_model AS model,
    i.l_prompt_version AS prompt_version,
    i.l_failure_reason AS failure_reason
FROM
(
    SELECT
        investigation_id AS l_investigation_id,
        any(post_id) AS l_post_id,
        any(post_version_id) AS l_post_version_id,
        anyIf(platform, status = 'REQUESTED') AS l_requested_platform,
        multiIf(
            countIf(status = 'COMPLETED') > 0, 'COMPLETE',
            maxIf(log_offset + 1, status = 'FAILED') > maxIf(log_offset + 1, status = 'REQUESTED' AND source = 'INVESTIGATE_NOW'), 'FAILED',
            'PENDING') AS l_status,
        argMinIf(source, log_offset, status = 'REQUESTED') AS l_source,
        countIf(status = 'REQUESTED') AS l_request_count,
        if(countIf(status = 'REQUESTED') > 0, minIf(event_time, status = 'REQUESTED'), NULL) AS l_requested_at,
        if(countIf(status = 'COMPLETED') > 0, argMaxIf(event_time, log_offset, status = 'COMPLETED'), NULL) AS l_completed_at,
        if(countIf(status = 'FAILED') > 0, argMaxIf(event_time, log_offset, status = 'FAILED'), NULL) AS l_failed_at,
        argMaxIf(claim_count, log_offset, status = 'COMPLETED') AS l_claim_count,
        argMaxIf(provenance, log_offset, status != 'REQUESTED') AS l_provenance,
        argMaxIf(provider, log_offset, status = 'COMPLETED') AS l_provider,
        argMaxIf(model, log_offset, status = 'COMPLETED') AS l_model,
        argMaxIf(prompt_version, log_offset, status = 'COMPLETED') AS l_prompt_version,
        argMaxIf(failure_reason, log_offset, status = 'FAILED') AS l_failure_reason
    FROM investigations FINAL
    GROUP BY investigation_id
) AS i
LEFT JOIN version_authors AS v ON v.post_version_id = i.l_post_version_id
COMMENT 'final state per investigation: COMPLETE once any completion is in the log (its latest completion gives completed_at and claim_count), FAILED when a failure follows the last investigateNow request, else PENDING; platform and author from its post version';

CREATE OR REPLACE VIEW complete_investigations AS
SELECT
    investigation_id, post_id, post_version_id, platform, author_id, author_display_name,
    assumeNotNull(completed_at) AS completed_at, claim_count, provider, model, prompt_version
FROM investigations_latest
WHERE status = 'COMPLETE'
COMMENT 'COMPLETE investigations, the population of every incidence figure';

CREATE OR REPLACE VIEW fact_check_incidence AS
SELECT
    count() AS total_investigated_posts,
    countIf(flagged) AS investigated_posts_with_flags,
    if(count() = 0, 0, countIf(flagged) / count()) AS fact_check_incidence
FROM
(
    SELECT post_id, max(claim_count > 0) AS flagged
    FROM complete_investigations
    WHERE completed_at >= {window_start:DateTime64(3, 'UTC')} AND completed_at < {window_end:DateTime64(3, 'UTC')}
    GROUP BY post_id
)
COMMENT 'parameterized: investigated posts (>= 1 investigation completed in [window_start, window_end)) and those with >= 1 claim';

CREATE OR REPLACE VIEW fact_check_incidence_by_platform AS
SELECT
    platform,
    count() AS total_investigated_posts,
    countIf(flagged) AS investigated_posts_with_flags,
    if(count() = 0, 0, countIf(flagged) / count()) AS fact_check_incidence
FROM
(
    SELECT platform, post_id, max(claim_count > 0) AS flagged
    FROM complete_investigations
    WHERE completed_at >= {window_start:DateTime64(3, 'UTC')} AND completed_at < {window_end:DateTime64(3, 'UTC')}
    GROUP BY platform, post_id
)
GROUP BY platform
COMMENT 'parameterized: fact_check_incidence per platform over [window_start, window_end)';

CREATE OR REPLACE VIEW fact_check_incidence_by_author AS
SELECT
    author_id,
    count() AS total_investigated_posts,
    countIf(flagged) AS investigated_posts_with_flags,
    if(count() = 0, 0, countIf(flagged) / count()) AS fact_check_incidence
FROM
(
    SELECT author_id, post_id, max(claim_count > 0) AS flagged
    FROM complete_investigations
    WHERE author_id != ''
      AND completed_at >= {window_start:DateTime64(3, 'UTC')} AND completed_at < {window_end:DateTime64(3, 'UTC')}
    GROUP BY author_id, post_id
)
GROUP BY author_id
COMMENT 'parameterized: fact_check_incidence per author (of the investigated version) over [window_start, window_end)';

CREATE OR REPLACE VIEW author_names AS
SELECT
    author_id,
    argMax(platform, (registered_at, toString(event_id)))            AS platform,
    argMax(author_platform_user_id, (registered_at, toString(event_id))) AS platform_user_id,
    argMax(author_display_name, (registered_at, toString(event_id))) AS display_name
FROM post_versions FINAL
WHERE author_id != ''
GROUP BY author_id
COMMENT 'each author with the identity and display name of their latest registration';

CREATE OR REPLACE VIEW author_stats AS
SELECT
    c.author_id AS author_id,
    any(n.platform) AS platform,
    any(n.display_name) AS display_name,
    uniqExact(c.post_id) AS investigated_posts,
    uniqExactIf(c.post_id, c.claim_count > 0) AS flagged_posts,
    sum(c.claim_count) AS flagged_claims,
    if(uniqExact(c.post_id) = 0, 0, uniqExactIf(c.post_id, c.claim_count > 0) / uniqExact(c.post_id)) AS fact_check_incidence
FROM complete_investigations AS c
LEFT JOIN author_names AS n ON n.author_id = c.author_id
WHERE c.author_id != ''
GROUP BY c.author_id
COMMENT 'per author, all time: investigated posts, posts with >= 1 claim, claims published by their COMPLETE investigations';

CREATE OR REPLACE VIEW daily_series AS
SELECT
    day,
    platform,
    countIf(kind = 'completion') AS investigations_completed,
    uniqExactIf(post_id, kind = 'completion' AND claim_count > 0) AS posts_flagged,
    sumIf(claim_count, kind = 'completion') AS claims,
    countIf(kind = 'view') AS views
FROM
(
    SELECT toDate(completed_at) AS day, platform, 'completion' AS kind, post_id, claim_count
    FROM complete_investigations
    UNION ALL
    SELECT viewed_on AS day, platform, 'view' AS kind, post_id, toUInt32(0) AS claim_count
    FROM views FINAL
)
GROUP BY day, platform
COMMENT 'per UTC day and platform: investigations completed (by their completion day), posts flagged that day, claims published, views';
