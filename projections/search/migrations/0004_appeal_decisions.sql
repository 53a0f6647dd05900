-- The first decision of an appeal is final (its events share a key, so the
-- first in the log): a second one, which a worker that lost its lease may
-- rarely append, changes nothing.
CREATE TABLE appeal_decisions (
	appeal_id uuid PRIMARY KEY,
	outcome   text NOT NULL
);
