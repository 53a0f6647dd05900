package keystore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/migrate"
	"github.com/errata-dev/errata/internal/postgres"
)

// Schema is the Postgres schema of the store's table.
const Schema = "keystore"

// DefaultTTL is how long an attached key lives.
const DefaultTTL = 15 * time.Minute

// MaxTTL bounds the configurable TTL: these keys are meant to be short-lived.
const MaxTTL = 24 * time.Hour

// maxPlaintext bounds a stored key's size; provider keys are far shorter.
const maxPlaintext = 1024

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations are the store's schema migrations.
func Migrations() fs.FS {
	return migrate.Dir(migrationFiles, "migrations")
}

// Migrate creates or updates the store's schema.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) error {
	if err := postgres.Migrate(ctx, pool, postgres.Schema{Name: Schema, Migrations: Migrations()}, log); err != nil {
		return fmt.Errorf("keystore: %w", err)
	}
	return nil
}

// AttachOutcome says what Attach did.
type AttachOutcome int

const (
	// Attached means the key is now stored for the investigation.
	Attached AttachOutcome = iota + 1
	// AlreadyAttached means an unexpired key was already stored; it is
	// kept and the new one is dropped (first key wins).
	AlreadyAttached
)

// String names the outcome.
func (o AttachOutcome) String() string {
	switch o {
	case Attached:
		return "attached"
	case AlreadyAttached:
		return "already attached"
	default:
		return fmt.Sprintf("AttachOutcome(%d)", int(o))
	}
}

// Store is the encrypted key store. Its queries name the schema, so any
// pool on the database works, whatever its search_path. Safe for
// concurrent use.
type Store struct {
	pool *pgxpool.Pool
	ring *KeyRing
	ttl  time.Duration
}

// Option configures a Store.
type Option func(*Store)

// WithTTL sets how long attached keys live (DefaultTTL otherwise); it must
// be positive and at most MaxTTL.
func WithTTL(d time.Duration) Option { return func(s *Store) { s.ttl = d } }

// New returns a store over a migrated database.
func New(pool *pgxpool.Pool, ring *KeyRing, opts ...Option) (*Store, error) {
	s := &Store{pool: pool, ring: ring, ttl: DefaultTTL}
	for _, o := range opts {
		o(s)
	}
	switch {
	case pool == nil || ring == nil:
		return nil, errors.New("keystore: a pool and a key ring are required")
	case s.ttl <= 0 || s.ttl > MaxTTL:
		return nil, fmt.Errorf("keystore: TTL %v must be positive and at most %v", s.ttl, MaxTTL)
	}
	return s, nil
}

// TTL is how long attached keys live.
func (s *Store) TTL() time.Duration { return s.ttl }

// CurrentKeyID is the id of the key ring entry that seals new keys.
func (s *Store) CurrentKeyID() string { return s.ring.CurrentID() }

// canonicalID parses an investigation id and returns its canonical form,
// the one bound into the associated data.
func canonicalID(investigationID string) (string, error) {
	id, err := uuid.Parse(investigationID)
	if err != nil {
		return "", fmt.Errorf("%w: investigation id %q is not a UUID", ErrInvalidInput, investigationID)
	}
	return id.String(), nil
}

// Attach stores plaintext for the investigation until now + TTL, unless an
// unexpired key is already stored (AlreadyAttached: the first key wins). An
// expired key is replaced. Concurrent attaches for one investigation leave
// exactly one key.
func (s *Store) Attach(ctx context.Context, investigationID string, plaintext logging.Secret, now time.Time) (AttachOutcome, error) {
	id, err := canonicalID(investigationID)
	if err != nil {
		return 0, err
	}
	if n := len(plaintext.Reveal()); n == 0 || n > maxPlaintext {
		return 0, fmt.Errorf("%w: key length %d, want 1 to %d bytes", ErrInvalidInput, n, maxPlaintext)
	}
	now = now.UTC().Truncate(time.Microsecond)
	expiresAt := now.Add(s.ttl)
	sealed, err := s.ring.seal(id, expiresAt, []byte(plaintext.Reveal()))
	if err != nil {
		return 0, err
	}
	var inserted bool
	err = s.pool.QueryRow(ctx, `
		INSERT INTO keystore.user_keys AS k (investigation_id, key_id, nonce, ciphertext, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (investigation_id) DO UPDATE SET
			key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext,
			created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at, announced = false
		WHERE k.expires_at <= EXCLUDED.created_at
		RETURNING true`,
		id, sealed.KeyID, sealed.Nonce, sealed.Ciphertext, now, expiresAt).Scan(&inserted)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return AlreadyAttached, nil
	case err != nil:
		return 0, fmt.Errorf("keystore: attach key for investigation %s: %w", id, err)
	}
	return Attached, nil
}

// Attachment is what may be said of an attached key in public: never the
// key itself.
type Attachment struct {
	InvestigationID string
	// KeyID is the key ring entry that sealed it.
	KeyID     string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// sqlstateLockNotAvailable is what FOR UPDATE NOWAIT answers on a row
// another transaction holds.
const sqlstateLockNotAvailable = "55P03"

// Announce makes sure an attached key is recorded in the event log
// exactly once. Holding the investigation's row, it calls announce with
// the unexpired attachment unless the attachment was already announced,
// and records it as announced once announce returns nil; on an error
// nothing is recorded and the next Announce calls announce again. It
// reports whether announce was called (and succeeded): false with a nil
// error means the attachment was announced before. No unexpired key is
// ErrNotFound.
//
// While one call holds the row, another returns ErrAnnouncing at once
// rather than wait (and hold a connection) for as long as the first one's
// append takes: only one announce runs at a time, however many requests
// carry the key. Only a crash after announce succeeded and before the
// record is committed leaves the attachment unannounced: the next call
// announces it again, which is why announce must be idempotent (the
// event's id derives from the attachment).
func (s *Store) Announce(ctx context.Context, investigationID string, now time.Time, announce func(context.Context, Attachment) error) (bool, error) {
	id, err := canonicalID(investigationID)
	if err != nil {
		return false, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("keystore: announce key of investigation %s: %w", id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit; a failed rollback closes the connection, which ends the transaction
	a := Attachment{InvestigationID: id}
	var announced bool
	err = tx.QueryRow(ctx, `
		SELECT key_id, created_at, expires_at, announced FROM keystore.user_keys
		WHERE investigation_id = $1 AND expires_at > $2 FOR UPDATE NOWAIT`, id, now).Scan(&a.KeyID, &a.CreatedAt, &a.ExpiresAt, &announced)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == sqlstateLockNotAvailable:
		return false, fmt.Errorf("%w: investigation %s", ErrAnnouncing, id)
	case errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("%w: investigation %s", ErrNotFound, id)
	case err != nil:
		return false, fmt.Errorf("keystore: announce key of investigation %s: %w", id, err)
	case announced:
		return false, nil
	}
	a.CreatedAt, a.ExpiresAt = a.CreatedAt.UTC(), a.ExpiresAt.UTC()
	if err := announce(ctx, a); err != nil {
		return false, err
	}
	// The announcement is made: record it even if the caller has gone.
	ctx = context.WithoutCancel(ctx)
	if _, err := tx.Exec(ctx, `UPDATE keystore.user_keys SET announced = true WHERE investigation_id = $1`, id); err != nil {
		return true, fmt.Errorf("%w: investigation %s: %v", ErrAnnouncementNotRecorded, id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return true, fmt.Errorf("%w: investigation %s: %v", ErrAnnouncementNotRecorded, id, err)
	}
	return true, nil
}

// Get returns the investigation's key, leaving it stored. An expired key is
// deleted and reported as ErrExpired; no key is ErrNotFound.
func (s *Store) Get(ctx context.Context, investigationID string, now time.Time) (logging.Secret, error) {
	id, err := canonicalID(investigationID)
	if err != nil {
		return "", err
	}
	row, err := scanRow(s.pool.QueryRow(ctx, `
		SELECT key_id, nonce, ciphertext, expires_at FROM keystore.user_keys WHERE investigation_id = $1`, id))
	if err != nil {
		return "", readError(id, err)
	}
	if !now.Before(row.expiresAt) {
		// Only the expired row: a concurrent Attach may have replaced it.
		if _, err := s.pool.Exec(ctx, `
			DELETE FROM keystore.user_keys WHERE investigation_id = $1 AND expires_at <= $2`, id, now); err != nil {
			return "", fmt.Errorf("keystore: purge expired key of investigation %s: %w", id, err)
		}
		return "", fmt.Errorf("%w: investigation %s, at %s", ErrExpired, id, row.expiresAt.Format(time.RFC3339))
	}
	return s.reveal(id, row)
}

// Take returns the investigation's key and deletes it, so it can be used
// once. An expired key is deleted and reported as ErrExpired; no key is
// ErrNotFound.
func (s *Store) Take(ctx context.Context, investigationID string, now time.Time) (logging.Secret, error) {
	id, err := canonicalID(investigationID)
	if err != nil {
		return "", err
	}
	row, err := scanRow(s.pool.QueryRow(ctx, `
		DELETE FROM keystore.user_keys WHERE investigation_id = $1
		RETURNING key_id, nonce, ciphertext, expires_at`, id))
	if err != nil {
		return "", readError(id, err)
	}
	if !now.Before(row.expiresAt) {
		return "", fmt.Errorf("%w: investigation %s, at %s", ErrExpired, id, row.expiresAt.Format(time.RFC3339))
	}
	return s.reveal(id, row)
}

// Delete removes the investigation's key, if any: the investigation reached
// a terminal state.
func (s *Store) Delete(ctx context.Context, investigationID string) error {
	id, err := canonicalID(investigationID)
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM keystore.user_keys WHERE investigation_id = $1`, id); err != nil {
		return fmt.Errorf("keystore: delete key of investigation %s: %w", id, err)
	}
	return nil
}

// Purge deletes every key expired at now and returns how many it deleted.
func (s *Store) Purge(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM keystore.user_keys WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("keystore: purge expired keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

// storedRow is one row of keystore.user_keys.
type storedRow struct {
	sealed
	expiresAt time.Time
}

func scanRow(r pgx.Row) (storedRow, error) {
	var row storedRow
	err := r.Scan(&row.KeyID, &row.Nonce, &row.Ciphertext, &row.expiresAt)
	return row, err
}

func readError(id string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: investigation %s", ErrNotFound, id)
	}
	return fmt.Errorf("keystore: read key of investigation %s: %w", id, err)
}

func (s *Store) reveal(id string, row storedRow) (logging.Secret, error) {
	pt, err := s.ring.open(id, row.expiresAt, row.sealed)
	if err != nil {
		return "", fmt.Errorf("investigation %s: %w", id, err)
	}
	return logging.Secret(pt), nil
}
