package keystore_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.UTC)

func key(fill byte) logging.Secret {
	return logging.Secret(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, keystore.KeySize)))
}

func ring(t testing.TB, current string, ids ...string) *keystore.KeyRing {
	t.Helper()
	keys := map[string]logging.Secret{}
	for _, id := range ids {
		keys[id] = key(id[0]) // the same id always names the same key
	}
	r, err := keystore.NewKeyRing(current, keys)
	require.NoError(t, err)
	return r
}

// migrated returns a pool on a fresh, migrated database. Its search_path
// is the default one: the store must not depend on it.
func migrated(t testing.TB) *pgxpool.Pool {
	t.Helper()
	url := testenv.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, keystore.Migrate(ctx, pool, logging.Discard()))
	require.NoError(t, keystore.Migrate(ctx, pool, logging.Discard()), "migrating twice is a no-op")
	return pool
}

func newStore(t testing.TB, pool *pgxpool.Pool, r *keystore.KeyRing, opts ...keystore.Option) *keystore.Store {
	t.Helper()
	s, err := keystore.New(pool, r, opts...)
	require.NoError(t, err)
	return s
}

func investigation() string { return uuid.NewString() }

// userKey is a distinctive plaintext whose bytes the scans look for.
func userKey(n int) logging.Secret {
	return logging.Secret(fmt.Sprintf("sk-proj-ERRATAKEYSTORETEST-%04d-Zq9xW7vU5tS3rP1oN", n))
}

func TestAttachGetRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	inv := investigation()

	out, err := s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)
	require.Equal(t, keystore.Attached, out)

	for range 2 { // Get leaves the key in place
		got, err := s.Get(ctx, inv, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, userKey(1).Reveal(), got.Reveal())
	}

	_, err = s.Get(ctx, investigation(), t0)
	require.ErrorIs(t, err, keystore.ErrNotFound)

	got, err := s.Take(ctx, inv, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, userKey(1).Reveal(), got.Reveal())
	_, err = s.Take(ctx, inv, t0.Add(time.Minute))
	require.ErrorIs(t, err, keystore.ErrNotFound, "Take deletes the key")
}

func TestFirstKeyWins(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	inv := investigation()

	out, err := s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)
	require.Equal(t, keystore.Attached, out)
	out, err = s.Attach(ctx, inv, userKey(2), t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, keystore.AlreadyAttached, out)

	got, err := s.Get(ctx, inv, t0.Add(2*time.Second))
	require.NoError(t, err)
	require.Equal(t, userKey(1).Reveal(), got.Reveal())
}

func TestFirstKeyWinsUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	inv := investigation()

	const n = 50
	outcomes := make([]keystore.AttachOutcome, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			outcomes[i], errs[i] = s.Attach(ctx, inv, userKey(i), t0)
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i := range n {
		require.NoError(t, errs[i])
		if outcomes[i] == keystore.Attached {
			require.Equal(t, -1, winner, "two attaches won: %d and %d", winner, i)
			winner = i
		} else {
			require.Equal(t, keystore.AlreadyAttached, outcomes[i])
		}
	}
	require.NotEqual(t, -1, winner, "no attach won")
	got, err := s.Get(ctx, inv, t0)
	require.NoError(t, err)
	require.Equal(t, userKey(winner).Reveal(), got.Reveal(), "the stored key is the winner's")
}

func TestExpiry(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	s := newStore(t, pool, ring(t, "a", "a"), keystore.WithTTL(10*time.Minute))
	require.Equal(t, 10*time.Minute, s.TTL())
	inv := investigation()

	_, err := s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)
	_, err = s.Get(ctx, inv, t0.Add(10*time.Minute-time.Microsecond))
	require.NoError(t, err, "still valid just before expiry")

	_, err = s.Get(ctx, inv, t0.Add(10*time.Minute))
	require.ErrorIs(t, err, keystore.ErrExpired)
	require.NotContains(t, err.Error(), userKey(1).Reveal())
	_, err = s.Get(ctx, inv, t0.Add(10*time.Minute))
	require.ErrorIs(t, err, keystore.ErrNotFound, "reading an expired key purges it")

	// An expired key no longer blocks a new one.
	_, err = s.Attach(ctx, inv, userKey(2), t0)
	require.NoError(t, err)
	out, err := s.Attach(ctx, inv, userKey(3), t0.Add(11*time.Minute))
	require.NoError(t, err)
	require.Equal(t, keystore.Attached, out, "an expired key is replaced")
	got, err := s.Get(ctx, inv, t0.Add(12*time.Minute))
	require.NoError(t, err)
	require.Equal(t, userKey(3).Reveal(), got.Reveal())

	_, err = s.Take(ctx, inv, t0.Add(time.Hour))
	require.ErrorIs(t, err, keystore.ErrExpired)
	_, err = s.Get(ctx, inv, t0)
	require.ErrorIs(t, err, keystore.ErrNotFound, "Take deletes an expired key too")
}

func TestPurgeAndDelete(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	s := newStore(t, pool, ring(t, "a", "a"))
	invs := []string{investigation(), investigation(), investigation()}
	for i, inv := range invs {
		_, err := s.Attach(ctx, inv, userKey(i), t0.Add(time.Duration(i)*10*time.Minute))
		require.NoError(t, err)
	}
	// Expiries: t0+15m, t0+25m, t0+35m.
	n, err := s.Purge(ctx, t0.Add(25*time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	_, err = s.Get(ctx, invs[0], t0)
	require.ErrorIs(t, err, keystore.ErrNotFound)
	_, err = s.Get(ctx, invs[2], t0.Add(25*time.Minute))
	require.NoError(t, err)

	require.NoError(t, s.Delete(ctx, invs[2]))
	require.NoError(t, s.Delete(ctx, invs[2]), "deleting twice is fine")
	_, err = s.Get(ctx, invs[2], t0)
	require.ErrorIs(t, err, keystore.ErrNotFound)
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM keystore.user_keys`).Scan(&rows))
	require.Zero(t, rows)
}

func TestTamperedRowsFailAuthentication(t *testing.T) {
	tests := []struct {
		name   string
		tamper string // SQL run against the row of $1; may use $2 (another investigation id)
		read   func(inv, other string) string
	}{
		{name: "flipped ciphertext byte", tamper: `UPDATE keystore.user_keys SET ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) WHERE investigation_id = $1 OR investigation_id = $2`},
		{name: "flipped nonce byte", tamper: `UPDATE keystore.user_keys SET nonce = set_byte(nonce, 5, get_byte(nonce, 5) # 1) WHERE investigation_id = $1 OR investigation_id = $2`},
		{name: "moved to another investigation (wrong associated data)", tamper: `UPDATE keystore.user_keys SET investigation_id = $2 WHERE investigation_id = $1`,
			read: func(_, other string) string { return other }},
		{name: "expiry extended", tamper: `UPDATE keystore.user_keys SET expires_at = expires_at + interval '1 day' WHERE investigation_id = $1 OR investigation_id = $2`},
		{name: "relabelled key id", tamper: `UPDATE keystore.user_keys SET key_id = 'b' WHERE investigation_id = $1 OR investigation_id = $2`},
	}
	ctx := context.Background()
	pool := migrated(t)
	s := newStore(t, pool, ring(t, "a", "a", "b"))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, other := investigation(), investigation()
			_, err := s.Attach(ctx, inv, userKey(i), t0)
			require.NoError(t, err)
			tag, err := pool.Exec(ctx, tt.tamper, inv, other)
			require.NoError(t, err)
			require.EqualValues(t, 1, tag.RowsAffected())
			target := inv
			if tt.read != nil {
				target = tt.read(inv, other)
			}
			_, err = s.Get(ctx, target, t0.Add(time.Minute))
			require.ErrorIs(t, err, keystore.ErrDecrypt)
			require.NotContains(t, err.Error(), userKey(i).Reveal())
		})
	}
}

func TestKeyRotation(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	old, moved := investigation(), investigation()

	before := newStore(t, pool, ring(t, "a", "a"))
	_, err := before.Attach(ctx, old, userKey(1), t0)
	require.NoError(t, err)

	// Rotate: b is current, a still decrypts.
	during := newStore(t, pool, ring(t, "b", "a", "b"))
	got, err := during.Get(ctx, old, t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, userKey(1).Reveal(), got.Reveal())
	_, err = during.Attach(ctx, moved, userKey(2), t0.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, "a", keyIDOf(t, pool, old))
	require.Equal(t, "b", keyIDOf(t, pool, moved), "new keys are written under the current id")

	// a dropped: its rows no longer decrypt; b's do.
	after := newStore(t, pool, ring(t, "b", "b"))
	_, err = after.Get(ctx, old, t0.Add(2*time.Minute))
	require.ErrorIs(t, err, keystore.ErrUnknownKeyID)
	got, err = after.Get(ctx, moved, t0.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, userKey(2).Reveal(), got.Reveal())
}

func keyIDOf(t *testing.T, pool *pgxpool.Pool, inv string) string {
	t.Helper()
	var id string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT key_id FROM keystore.user_keys WHERE investigation_id = $1`, inv).Scan(&id))
	return id
}

func TestInvalidInput(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	_, err := s.Attach(ctx, "not-a-uuid", userKey(1), t0)
	require.ErrorIs(t, err, keystore.ErrInvalidInput)
	_, err = s.Attach(ctx, investigation(), "", t0)
	require.ErrorIs(t, err, keystore.ErrInvalidInput)
	_, err = s.Attach(ctx, investigation(), logging.Secret(bytes.Repeat([]byte("k"), 2000)), t0)
	require.ErrorIs(t, err, keystore.ErrInvalidInput)
	_, err = s.Get(ctx, "nope", t0)
	require.ErrorIs(t, err, keystore.ErrInvalidInput)
	require.ErrorIs(t, s.Delete(ctx, "nope"), keystore.ErrInvalidInput)

	_, err = keystore.New(nil, ring(t, "a", "a"))
	require.Error(t, err)
	_, err = keystore.New(&pgxpool.Pool{}, ring(t, "a", "a"), keystore.WithTTL(0))
	require.ErrorContains(t, err, "TTL")
	_, err = keystore.New(&pgxpool.Pool{}, ring(t, "a", "a"), keystore.WithTTL(48*time.Hour))
	require.ErrorContains(t, err, "TTL")
}

func TestUppercaseInvestigationIDIsTheSameInvestigation(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	inv := investigation()
	_, err := s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)
	got, err := s.Get(ctx, strings.ToUpper(inv), t0)
	require.NoError(t, err, "ids are canonicalised before they are bound into the associated data")
	require.Equal(t, userKey(1).Reveal(), got.Reveal())
}

// TestPlaintextAppearsInNoTable stores keys and then reads every row of
// every table in the database as JSON, looking for the plaintext in any
// encoding Postgres could render it in.
func TestPlaintextAppearsInNoTable(t *testing.T) {
	ctx := context.Background()
	pool := migrated(t)
	s := newStore(t, pool, ring(t, "b", "a", "b"))
	var plaintexts []string
	for i := range 5 {
		_, err := s.Attach(ctx, investigation(), userKey(100+i), t0)
		require.NoError(t, err)
		plaintexts = append(plaintexts, userKey(100+i).Reveal())
	}
	// Leave a trail of rewritten and deleted rows too.
	inv := investigation()
	_, err := s.Attach(ctx, inv, userKey(200), t0.Add(-time.Hour))
	require.NoError(t, err)
	_, err = s.Attach(ctx, inv, userKey(201), t0)
	require.NoError(t, err)
	plaintexts = append(plaintexts, userKey(200).Reveal(), userKey(201).Reveal())

	dump := dumpAllTables(t, pool)
	require.Contains(t, dump, `"key_id":"b"`, "the scan sees the keystore rows")
	for _, p := range plaintexts {
		for _, enc := range []string{
			p,
			hex.EncodeToString([]byte(p)),
			base64.StdEncoding.EncodeToString([]byte(p)),
			"sk-proj-ERRATAKEYSTORETEST",
		} {
			require.NotContains(t, dump, enc)
		}
	}
}

// dumpAllTables returns row_to_json of every row of every user table.
func dumpAllTables(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `
		SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`)
	require.NoError(t, err)
	type table struct{ schema, name string }
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (table, error) {
		var tb table
		return tb, r.Scan(&tb.schema, &tb.name)
	})
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	var b bytes.Buffer
	for _, tb := range tables {
		ident := pgx.Identifier{tb.schema, tb.name}.Sanitize()
		rows, err := pool.Query(ctx, `SELECT row_to_json(t)::text FROM `+ident+` t`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err, ident)
		for _, l := range lines {
			b.WriteString(ident + " " + l + "\n")
		}
	}
	return b.String()
}
