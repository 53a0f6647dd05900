-- Investigations under analysis configurations (issue 18) and claims
-- retracted by an appeal.
--
-- A version has one investigation per configuration; the default
-- configuration ('') keeps versions.investigation_id.
--
-- A document's revision (its Elasticsearch external version) is now
-- computed from the fold: its version's registrations + its investigation's
-- completions + its retracted claims. Every term only grows, so revisions
-- only grow, and any order of folding the same events gives the same
-- revision. The counts are backfilled from the revisions counted so far
-- (registrations + completions, one completion per investigation).
ALTER TABLE investigations ADD COLUMN configuration_id text NOT NULL DEFAULT '';
ALTER TABLE investigations ADD COLUMN completions bigint NOT NULL DEFAULT 1;
CREATE INDEX investigations_version_idx ON investigations (post_version_id);
CREATE INDEX versions_investigation_idx ON versions (investigation_id);

ALTER TABLE versions ADD COLUMN registrations bigint NOT NULL DEFAULT 0;
UPDATE versions v SET registrations = d.revision
	- (SELECT count(*) FROM investigations i WHERE i.investigation_id = v.investigation_id)
FROM documents d WHERE d.investigation_id = v.investigation_id;

-- A claim an appeal retracted leaves its document. Several appeals may
-- retract one claim; the row keeps the smallest appeal id, so any order of
-- folding them keeps the same one.
CREATE TABLE retracted_claims (
	claim_id         uuid PRIMARY KEY,
	investigation_id uuid NOT NULL,
	appeal_id        uuid NOT NULL,
	reason           text NOT NULL,
	retracted_at     timestamptz NOT NULL
);
CREATE INDEX retracted_claims_investigation_idx ON retracted_claims (investigation_id);
