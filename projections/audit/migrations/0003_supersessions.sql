-- Which investigation re-does which (investigation.requested.v1 with
-- supersedes): the audit trail links the chain both ways. requested_at is
-- the earliest such request, so the order of application does not matter.
CREATE TABLE audit_supersessions (
	superseded       uuid        NOT NULL,
	investigation_id uuid        NOT NULL,
	requested_at     timestamptz NOT NULL,
	PRIMARY KEY (superseded, investigation_id)
);
