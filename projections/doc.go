// Package projections holds Errata's read models, each rebuilt from the log:
//
//   - pgproj: the machinery shared by Postgres projections (migrations,
//     exactly-once checkpoints stored in the same transaction as the writes,
//     read-your-writes watermarks);
//   - serving: the Postgres model behind the extension API.
//
// A projector takes time only from events, never from the wall clock, so a
// replay from offset 0 produces the same rows.
package projections
