-- Evidence assessments (investigation.claim_assessed): the engine's
-- judgement of each approved submission, the versions it used and whether
-- the claim is published or withheld (and why), with the sources it read.
-- The first assessment of a submission wins; a repeated one changes
-- nothing. Published claims name the submission they come from, which
-- links a public claim to its assessment.
ALTER TABLE claims
	ADD COLUMN submission_id uuid;  -- NULL: retained from a prior investigation, or published before assessments

CREATE TABLE claim_assessments (
	submission_id    uuid PRIMARY KEY,
	investigation_id uuid NOT NULL,
	series           int  NOT NULL,
	attempt          int  NOT NULL,
	causal           boolean NOT NULL,
	-- Tsao's features, the raw score and its 0-100 scale
	e_max            double precision NOT NULL,
	e_mean3          double precision NOT NULL,
	c_max            double precision NOT NULL,
	agree_dom        int  NOT NULL,
	rel_avg          double precision NOT NULL,
	rec_max          double precision NOT NULL,
	num_ok           int  NOT NULL,
	raw              double precision NOT NULL,
	score            int  NOT NULL,
	verdict          text NOT NULL,  -- SUPPORTED, REFUTED, CONTESTED, NOT_ENOUGH_EVIDENCE
	-- Gate 4: level, independent domains with a stance, their mean quality, agreement
	gate4            text NOT NULL,  -- HIGH, MEDIUM, LOW, INSUFFICIENT
	gate4_sources    int  NOT NULL,
	gate4_quality    double precision NOT NULL,
	gate4_agreement  double precision NOT NULL,
	registry_version text NOT NULL,
	policy_version   text NOT NULL,
	publish_mode     text NOT NULL,
	published        boolean NOT NULL,
	reason           text NOT NULL,  -- "published" or the first rule that failed
	failed           text[] NOT NULL, -- every rule that failed
	dropped_count    int  NOT NULL,  -- sources the engine did not read
	assessed_at      timestamptz NOT NULL
);
CREATE INDEX claim_assessments_investigation_idx ON claim_assessments (investigation_id, series, attempt);

CREATE TABLE assessment_sources (
	submission_id uuid NOT NULL REFERENCES claim_assessments (submission_id) ON DELETE CASCADE,
	ord           int  NOT NULL,
	url           text NOT NULL,
	domain        text NOT NULL,  -- registrable domain, the unit of independence
	tier          int  NOT NULL,  -- 1 (official) .. 5 (known unreliable)
	rule          text NOT NULL,  -- the registry rule that gave the tier
	origin        text NOT NULL,  -- investigator, validator, search, fetch_url
	entail        double precision NOT NULL,
	contradict    double precision NOT NULL,
	neutral       double precision NOT NULL,
	num           text NOT NULL,  -- numeric check: '', match, mismatch
	recency       double precision NOT NULL,
	PRIMARY KEY (submission_id, ord)
);
