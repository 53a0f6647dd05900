-- The search projector's own fold of the log: what a search document of a
-- COMPLETE investigation needs, and a revision per document that is the
-- Elasticsearch external version. Every value comes from events.

-- One row per registered post version. The descriptive fields come from
-- the best registration: SERVER_VERIFIED before CLIENT_FALLBACK, then the
-- earliest, then the smallest event id, so any order of folding the same
-- registrations picks the same one.
CREATE TABLE versions (
	post_version_id    uuid PRIMARY KEY,
	investigation_id   uuid NOT NULL,
	post_id            uuid NOT NULL,
	platform           text NOT NULL,
	external_id        text NOT NULL,
	url                text NOT NULL,
	content_hash       text NOT NULL,
	author_id          uuid,
	author_name        text,
	excerpt            text NOT NULL,
	source_verified    boolean NOT NULL,
	source_at          timestamptz NOT NULL,
	source_event       text NOT NULL,
	-- earliest SERVER_VERIFIED registration (a one-way latch)
	server_verified_at timestamptz
);

-- Corroboration: distinct authenticated reporters of exactly this version.
CREATE TABLE version_reporters (
	post_version_id uuid NOT NULL,
	reporter_key    text NOT NULL,
	PRIMARY KEY (post_version_id, reporter_key)
);

-- Completed investigations (the only public ones) and their claims as
-- published.
CREATE TABLE investigations (
	investigation_id uuid PRIMARY KEY,
	post_id          uuid NOT NULL,
	post_version_id  uuid NOT NULL,
	status           text NOT NULL CHECK (status = 'COMPLETE'),
	provenance       text NOT NULL,
	checked_at       timestamptz NOT NULL,
	prompt_version   text NOT NULL,
	provider         text NOT NULL,
	model            text NOT NULL,
	claims           jsonb NOT NULL
);

-- revision counts the events folded into a document (registrations of its
-- version, its completions): it only grows, whatever the batching or the
-- interleaving of the two topics, and its row lock orders concurrent
-- writers of one document.
CREATE TABLE documents (
	investigation_id uuid PRIMARY KEY,
	revision         bigint NOT NULL CHECK (revision > 0)
);
