-- The analysis configuration each investigation runs under, as its first
-- request recorded it (a later request of the same investigation id names
-- the same configuration, since the id derives from it).
-- configuration_id: '' is the default configuration (the worker's own
-- settings); configuration: the request's full spec (NULL for the default).
-- supersedes, experiment_id, arm: the investigation this one re-does and
-- the experiment arm that chose the configuration, when any.
ALTER TABLE runs
	ADD COLUMN configuration_id text NOT NULL DEFAULT '',
	ADD COLUMN configuration    jsonb,
	ADD COLUMN supersedes       uuid,
	ADD COLUMN experiment_id    uuid,
	ADD COLUMN arm              text;
