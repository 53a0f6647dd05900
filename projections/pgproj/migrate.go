// Package pgproj is the machinery of Postgres projections: the tables every
// projection schema has, the exactly-once projector (writes and Kafka
// position in one transaction), read-your-writes watermarks and canonical
// dumps. Connections and migrations are internal/postgres.
package pgproj

import (
	"context"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/postgres"
)

// frameworkTables are the tables every projection schema has. They are
// created on every Migrate, so a table added here reaches existing schemas.
const frameworkTables = `
CREATE TABLE IF NOT EXISTS projection_checkpoints (
	projector   text   NOT NULL,
	topic       text   NOT NULL,
	partition   int    NOT NULL,
	next_offset bigint NOT NULL,
	-- time of the last applied event (never the wall clock)
	event_time  timestamptz,
	PRIMARY KEY (projector, topic, partition)
);
-- Records the projection can never apply (see Projector): written in the
-- transaction that moves the checkpoint past them, with values taken from
-- the record only (never the wall clock), so a rebuild parks the same rows.
CREATE TABLE IF NOT EXISTS projection_parked (
	projector   text        NOT NULL,
	topic       text        NOT NULL,
	partition   int         NOT NULL,
	log_offset  bigint      NOT NULL,
	-- from the decoded event, else the record's errata-id header
	event_id    text,
	-- the record's errata-type header (the type as stored)
	event_type  text,
	-- 'deterministic' (applying it fails every time) or 'decode'
	class       text        NOT NULL,
	reason      text        NOT NULL,
	-- the record's timestamp in the log
	record_time timestamptz NOT NULL,
	-- the event's time, when it decodes
	event_time  timestamptz,
	PRIMARY KEY (projector, topic, partition, log_offset)
);`

// Migrate prepares a projection's schema: the framework tables every
// projection has (checkpoints, parked records), then the projection's own
// migrations, as postgres.Migrate applies them (once each, in order, each
// in its own transaction, checksums checked, under an advisory lock).
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string, migrations fs.FS, log *slog.Logger) error {
	return postgres.Migrate(ctx, pool, postgres.Schema{Name: schema, Setup: frameworkTables, Migrations: migrations}, log)
}
