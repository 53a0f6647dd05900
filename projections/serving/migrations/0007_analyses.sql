-- Verdict analyses (the analyses topic): the request, each attempt with
-- its versions and how it ended, the claims with Gate 1's triage, the
-- queries with their results, the sources judged, the claim verdicts and
-- the post verdict. Every table keeps one row per identity, and when two
-- events name the same identity the earliest (event time, then event id)
-- wins, so any order of applying the same events gives the same rows.
-- (serving.Reader.Analysis assembles the job JSON from them.)
-- No foreign keys: a step may be applied before its request.

CREATE TABLE analyses (
	id              uuid PRIMARY KEY,
	analysis_type   text NOT NULL,
	prompt_version  text NOT NULL,
	input_kind      text NOT NULL,          -- POST, TEXT, URL
	platform        text,                   -- POST inputs
	external_id     text,
	post_id         uuid,
	post_version_id uuid,
	url             text,
	title           text,
	text_length     int  NOT NULL,          -- characters of the analysed text
	content_sha256  text NOT NULL,
	source          text NOT NULL,          -- EXTENSION, WORKBENCH, API (of the earliest request)
	request_count   int  NOT NULL,
	created_at      timestamptz NOT NULL,   -- the earliest request
	request_event   uuid NOT NULL           -- the earliest request's event id
);
CREATE INDEX analyses_post_version_idx ON analyses (post_version_id, prompt_version, created_at);
CREATE INDEX analyses_post_idx ON analyses (post_id, created_at);

CREATE TABLE analysis_attempts (
	analysis_id      uuid NOT NULL,
	attempt          int  NOT NULL,
	worker           text NOT NULL,
	prompts          jsonb NOT NULL,        -- [{name, version, sha256}]
	provider         text NOT NULL,
	model            text NOT NULL,
	registry_version text NOT NULL,
	policy_version   text NOT NULL,
	rubric_version   text NOT NULL,
	started_at       timestamptz NOT NULL,
	event_id         uuid NOT NULL,
	PRIMARY KEY (analysis_id, attempt)
);

-- How an attempt ended: COMPLETED (analysis.completed) or FAILED
-- (analysis.failed, retryable or not). A completion beats a failure of the
-- same attempt whatever their order.
CREATE TABLE analysis_attempt_ends (
	analysis_id uuid NOT NULL,
	attempt     int  NOT NULL,
	outcome     text NOT NULL,
	reason      text NOT NULL,              -- the failure's reason; '' for a completion
	retryable   boolean NOT NULL,
	claims      int  NOT NULL,
	researched  int  NOT NULL,
	ended_at    timestamptz NOT NULL,
	event_id    uuid NOT NULL,
	PRIMARY KEY (analysis_id, attempt)
);

CREATE TABLE analysis_claims (
	claim_id    uuid PRIMARY KEY,
	analysis_id uuid NOT NULL,
	attempt     int  NOT NULL,
	idx         int  NOT NULL,
	text        text NOT NULL,
	context     text NOT NULL,
	at          timestamptz NOT NULL,
	event_id    uuid NOT NULL
);
CREATE INDEX analysis_claims_analysis_idx ON analysis_claims (analysis_id, attempt, idx);

CREATE TABLE analysis_triage (
	claim_id       uuid PRIMARY KEY,
	analysis_id    uuid NOT NULL,
	attempt        int  NOT NULL,
	kind           text NOT NULL,           -- FACTUAL, OPINION, PREDICTION, NOT_A_CLAIM
	specificity    double precision NOT NULL,
	time_sensitive boolean NOT NULL,
	current_events boolean NOT NULL,
	numeric        boolean NOT NULL,
	researched     boolean NOT NULL,
	reason         text NOT NULL,
	at             timestamptz NOT NULL,
	event_id       uuid NOT NULL
);
CREATE INDEX analysis_triage_analysis_idx ON analysis_triage (analysis_id);

-- One row per analysis.query_issued event, listed by (at, event_id).
CREATE TABLE analysis_queries (
	event_id    uuid PRIMARY KEY,
	analysis_id uuid NOT NULL,
	attempt     int  NOT NULL,
	claim_id    uuid NOT NULL,
	query       text NOT NULL,
	kind        text NOT NULL,              -- keyword, timeline
	results     jsonb NOT NULL,             -- [{url, title, snippet, published_at}]
	error       text NOT NULL,
	at          timestamptz NOT NULL
);
CREATE INDEX analysis_queries_analysis_idx ON analysis_queries (analysis_id);

-- One row per analysis.source_assessed event, listed by (at, event_id).
CREATE TABLE analysis_sources (
	event_id     uuid PRIMARY KEY,
	analysis_id  uuid NOT NULL,
	attempt      int  NOT NULL,
	claim_id     uuid NOT NULL,
	url          text NOT NULL,
	domain       text NOT NULL,
	tier         int  NOT NULL,
	rule         text NOT NULL,
	origin       text NOT NULL,
	title        text NOT NULL,
	published_at text NOT NULL,
	entail       double precision NOT NULL,
	contradict   double precision NOT NULL,
	neutral      double precision NOT NULL,
	num          text NOT NULL,
	recency      double precision NOT NULL,
	at           timestamptz NOT NULL
);
CREATE INDEX analysis_sources_analysis_idx ON analysis_sources (analysis_id);

CREATE TABLE analysis_claim_verdicts (
	claim_id      uuid PRIMARY KEY,
	analysis_id   uuid NOT NULL,
	attempt       int  NOT NULL,
	e_max         double precision NOT NULL,
	e_mean3       double precision NOT NULL,
	c_max         double precision NOT NULL,
	agree_dom     int  NOT NULL,
	rel_avg       double precision NOT NULL,
	rec_max       double precision NOT NULL,
	num_ok        int  NOT NULL,
	score         int  NOT NULL,
	verdict       text NOT NULL,            -- the engine's; '' when not researched
	gate4         text NOT NULL,
	truth_percent int  NOT NULL,
	confidence    int  NOT NULL,
	caps          jsonb NOT NULL,           -- [{rule, cap, before}]
	label         text NOT NULL,
	band          text NOT NULL,
	summary       text NOT NULL,
	at            timestamptz NOT NULL,
	event_id      uuid NOT NULL
);
CREATE INDEX analysis_claim_verdicts_analysis_idx ON analysis_claim_verdicts (analysis_id);

CREATE TABLE analysis_post_verdicts (
	analysis_id   uuid NOT NULL,
	attempt       int  NOT NULL,
	truth_percent int  NOT NULL,
	confidence    int  NOT NULL,
	caps          jsonb NOT NULL,
	label         text NOT NULL,
	band          text NOT NULL,
	summary       text NOT NULL,
	caveats       jsonb NOT NULL,           -- [string]
	sources       jsonb NOT NULL,           -- [{url, title, domain, tier, from_search}]
	claims        int  NOT NULL,
	at            timestamptz NOT NULL,
	event_id      uuid NOT NULL,
	PRIMARY KEY (analysis_id, attempt)
);

-- Every event of every analysis in log order, for the job's event stream
-- (serving.Reader.AnalysisEventsFrom): its payload as JSON, except that an
-- exchange comes without raw_request and raw_response (errata audit
-- --analysis --json has them). A re-appended event (same id) is kept once,
-- at its first position.
CREATE TABLE analysis_events (
	event_id      uuid PRIMARY KEY,
	analysis_id   uuid NOT NULL,
	log_partition int  NOT NULL,
	log_offset    bigint NOT NULL,
	event_type    text NOT NULL,
	event_time    timestamptz NOT NULL,
	payload       jsonb NOT NULL
);
CREATE INDEX analysis_events_stream_idx ON analysis_events (analysis_id, log_partition, log_offset);
