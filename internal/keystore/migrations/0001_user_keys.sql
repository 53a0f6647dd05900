-- Users' own provider API keys, held only while the investigation they were
-- given for may still need them. Never in the event log. Each key is
-- encrypted with AES-256-GCM under the key ring entry key_id; the associated
-- data binds the ciphertext to key_id, investigation_id and expires_at, so a
-- row moved to another investigation or given a later expiry no longer
-- decrypts.

CREATE TABLE user_keys (
	investigation_id uuid        PRIMARY KEY,
	key_id           text        NOT NULL,
	nonce            bytea       NOT NULL CHECK (length(nonce) = 12),
	ciphertext       bytea       NOT NULL CHECK (length(ciphertext) > 16),
	created_at       timestamptz NOT NULL,
	expires_at       timestamptz NOT NULL CHECK (expires_at > created_at)
);

CREATE INDEX user_keys_expires_at ON user_keys (expires_at);
