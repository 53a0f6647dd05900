-- The serving read model of posts, versions and views (spec 3.2).
-- Every timestamp comes from event times; identities are the deterministic
-- ids carried by the events.

CREATE TABLE authors (
	id               uuid PRIMARY KEY,
	platform         text NOT NULL,
	platform_user_id text NOT NULL,
	display_name     text NOT NULL,
	created_at       timestamptz NOT NULL,
	updated_at       timestamptz NOT NULL,
	UNIQUE (platform, platform_user_id)
);

CREATE TABLE posts (
	id                uuid PRIMARY KEY,
	platform          text NOT NULL,
	external_id       text NOT NULL,
	url               text NOT NULL,
	author_id         uuid REFERENCES authors (id),
	view_count        bigint NOT NULL DEFAULT 0,  -- raw views (analytics)
	unique_view_score bigint NOT NULL DEFAULT 0,  -- capped selector score
	last_viewed_at    timestamptz,
	created_at        timestamptz NOT NULL,
	updated_at        timestamptz NOT NULL,
	UNIQUE (platform, external_id)
);
CREATE INDEX posts_unique_view_score_idx ON posts (unique_view_score DESC);
CREATE INDEX posts_view_count_idx ON posts (view_count);
CREATE INDEX posts_author_idx ON posts (author_id);

-- One credit per viewer, post and UTC day; at most N per IP range, post and day.
CREATE TABLE post_view_credits (
	post_id      uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
	viewer_key   text NOT NULL,
	ip_range_key text NOT NULL,
	bucket_day   date NOT NULL,
	created_at   timestamptz NOT NULL,
	PRIMARY KEY (post_id, viewer_key, bucket_day)
);
CREATE INDEX post_view_credits_range_idx ON post_view_credits (post_id, ip_range_key, bucket_day);

CREATE TABLE content_blobs (
	content_hash text PRIMARY KEY,           -- sha256 of content_text
	content_text text NOT NULL,              -- normalized plain text
	word_count   int  NOT NULL,
	created_at   timestamptz NOT NULL
);

CREATE TABLE html_blobs (
	html_hash    text PRIMARY KEY,           -- sha256 of html_content
	html_content text NOT NULL,
	created_at   timestamptz NOT NULL
);

CREATE TABLE image_occurrence_sets (
	occurrences_hash text PRIMARY KEY,
	created_at       timestamptz NOT NULL
);

CREATE TABLE image_occurrences (
	occurrences_hash       text NOT NULL REFERENCES image_occurrence_sets (occurrences_hash) ON DELETE CASCADE,
	original_index         int  NOT NULL,
	normalized_text_offset int  NOT NULL,  -- UTF-16 code units
	source_url             text NOT NULL,
	caption_text           text,
	PRIMARY KEY (occurrences_hash, original_index)
);
CREATE INDEX image_occurrences_offset_idx ON image_occurrences (occurrences_hash, normalized_text_offset, original_index);

CREATE TABLE post_versions (
	id                 uuid PRIMARY KEY,
	post_id            uuid NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
	version_hash       text NOT NULL,
	content_hash       text NOT NULL REFERENCES content_blobs (content_hash),
	occurrences_hash   text NOT NULL REFERENCES image_occurrence_sets (occurrences_hash),
	server_verified_at timestamptz,       -- one-way latch: first verified observation
	first_seen_at      timestamptz NOT NULL,
	last_seen_at       timestamptz NOT NULL,
	seen_count         int NOT NULL,
	UNIQUE (post_id, version_hash),
	UNIQUE (post_id, content_hash, occurrences_hash)
);
CREATE INDEX post_versions_latest_idx ON post_versions (post_id, last_seen_at);

-- Platform metadata, one row per version; the latest observation's values win.
CREATE TABLE lesswrong_version_meta (
	post_version_id  uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	slug             text NOT NULL,
	title            text,
	server_html_hash text REFERENCES html_blobs (html_hash),
	client_html_hash text REFERENCES html_blobs (html_hash),
	image_urls       text[] NOT NULL,
	karma            int,
	author_name      text,
	author_slug      text,
	tags             text[] NOT NULL,
	published_at     timestamptz,
	created_at       timestamptz NOT NULL
);
CREATE INDEX lesswrong_version_meta_slug_idx ON lesswrong_version_meta (slug);

CREATE TABLE x_version_meta (
	post_version_id     uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	tweet_id            text NOT NULL,
	text                text NOT NULL,
	author_handle       text NOT NULL,
	author_display_name text,
	media_urls          text[] NOT NULL,
	like_count          int,
	retweet_count       int,
	posted_at           timestamptz,
	created_at          timestamptz NOT NULL
);

CREATE TABLE substack_version_meta (
	post_version_id        uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	substack_post_id       text NOT NULL,
	publication_subdomain  text NOT NULL,
	slug                   text NOT NULL,
	title                  text NOT NULL,
	subtitle               text,
	server_html_hash       text REFERENCES html_blobs (html_hash),
	client_html_hash       text REFERENCES html_blobs (html_hash),
	image_urls             text[] NOT NULL,
	author_name            text NOT NULL,
	author_substack_handle text,
	published_at           timestamptz,
	like_count             int,
	comment_count          int,
	created_at             timestamptz NOT NULL
);

CREATE TABLE wikipedia_version_meta (
	post_version_id  uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	language         text NOT NULL,
	title            text NOT NULL,
	page_id          text NOT NULL,
	revision_id      text NOT NULL,
	display_title    text,
	server_html_hash text REFERENCES html_blobs (html_hash),
	client_html_hash text REFERENCES html_blobs (html_hash),
	image_urls       text[] NOT NULL,
	last_modified_at timestamptz,
	created_at       timestamptz NOT NULL
);
