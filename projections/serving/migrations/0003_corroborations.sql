-- Corroboration (spec 2.9): one credit per distinct authenticated reporter
-- who registered exactly this content version. An investigation's
-- corroborationCount is the count for its version.
CREATE TABLE version_corroborations (
	post_version_id uuid NOT NULL,
	reporter_key    text NOT NULL,
	first_at        timestamptz NOT NULL,
	PRIMARY KEY (post_version_id, reporter_key)
);
