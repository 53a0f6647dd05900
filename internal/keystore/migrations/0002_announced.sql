-- Whether the key's attachment is in the event log (the
-- investigation.user_key_attached event). A key is stored before its event is
-- appended; while this is false, whoever holds the row next (a retried
-- request, the investigator) appends that event, so a stored key is never
-- left out of the log.
ALTER TABLE user_keys ADD COLUMN announced boolean NOT NULL DEFAULT false;
