package pgproj

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/errata-dev/errata/internal/kafka"
)

// IsDeterministic reports whether err is a failure that applying the same
// event to the same state repeats every time, so retrying is pointless and
// the event must be parked instead:
//
//   - errors marked with kafka.Permanent or kafka.Undecodable (appliers mark
//     their own deterministic failures, such as a document the search store
//     refuses, this way);
//   - Postgres errors of SQLSTATE class 22 (data exception: invalid byte
//     sequence such as a NUL, 22021; string too long, 22001; numeric out of
//     range; an unsupported JSON escape, 22P05), class 23 (integrity
//     constraint violation) and class 54 (program limit exceeded: an index
//     row too large for a btree, 54000).
//
// Everything else is transient: a lost connection, a restarting store, a
// timeout, a serialization failure or deadlock (class 40), insufficient
// resources (class 53), and also errors such as a missing table (class 42),
// which a migration fixes and which must never park every event.
func IsDeterministic(err error) bool {
	if err == nil {
		return false
	}
	if kafka.IsPermanent(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return deterministicSQLState(pgErr.Code)
	}
	return false
}

func deterministicSQLState(code string) bool {
	for _, class := range []string{"22", "23", "54"} {
		if strings.HasPrefix(code, class) {
			return true
		}
	}
	return false
}
