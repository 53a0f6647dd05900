-- Bluesky and Threads metadata (issue 15), one row per version like the
-- other platforms': the latest observation's values win, except the
-- record's CID, which only a server verification knows and a later client
-- observation never erases. posted_at is the post's own time (Bluesky's
-- record createdAt); created_at, as elsewhere, the first observation's.
CREATE TABLE bluesky_version_meta (
	post_version_id uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	did             text NOT NULL,
	rkey            text NOT NULL,
	handle          text NOT NULL,
	display_name    text,
	cid             text,
	image_urls      text[] NOT NULL,
	like_count      int,
	repost_count    int,
	reply_count     int,
	posted_at       timestamptz,
	created_at      timestamptz NOT NULL
);
CREATE INDEX bluesky_version_meta_did_idx ON bluesky_version_meta (did);

CREATE TABLE threads_version_meta (
	post_version_id uuid PRIMARY KEY REFERENCES post_versions (id) ON DELETE CASCADE,
	code            text NOT NULL,
	username        text NOT NULL,
	display_name    text,
	image_urls      text[] NOT NULL,
	like_count      int,
	reply_count     int,
	repost_count    int,
	posted_at       timestamptz,
	created_at      timestamptz NOT NULL
);
