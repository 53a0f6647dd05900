-- Which investigations readers may see, as one small table the status
-- reads join (visible.go): a row per configuration ever promoted, with its
-- promotion rank, and a row per arm of the running experiment, ranked
-- above every promotion. It is a fold of the control events (one key, so
-- log order) and replaces per-read subqueries on analysis_configurations
-- and experiments on the API's hottest query.
CREATE TABLE configuration_visibility (
	configuration_id text   NOT NULL,
	experiment_id    uuid,
	rank             bigint NOT NULL
);
CREATE UNIQUE INDEX configuration_visibility_key
	ON configuration_visibility (configuration_id, COALESCE(experiment_id, '00000000-0000-0000-0000-000000000000'::uuid));

INSERT INTO configuration_visibility (configuration_id, experiment_id, rank)
SELECT id, NULL, promotion_rank FROM analysis_configurations WHERE promotion_rank IS NOT NULL;

INSERT INTO configuration_visibility (configuration_id, experiment_id, rank)
SELECT arm.configuration_id, e.id, 4611686018427387904
FROM experiments e
CROSS JOIN LATERAL (VALUES (e.control_configuration_id), (e.candidate_configuration_id)) AS arm(configuration_id)
WHERE e.stopped_at IS NULL
ON CONFLICT DO NOTHING;
