// Package migrate applies numbered schema migrations to a store: each file
// once, in version order, with its sha256 recorded, and it refuses to go on
// when a file that was applied has been edited since (add a new migration
// instead). It knows no particular store: a Store adapter holds the lock,
// the bookkeeping and the execution (Postgres: internal/postgres;
// ClickHouse: projections/analytics).
//
// Why not goose or tern: neither checks the checksums of applied files,
// tern speaks only Postgres, and both keep their own bookkeeping tables,
// so adopting one would still need this checksum layer and a conversion of
// every existing schema's records; the shared part is this small runner.
package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Migration is one file of a migrations directory, named NNNN_name.sql.
type Migration struct {
	// Version is the number the name starts with. It is the migration's
	// identity: a record made under an older spelling of the name
	// (001_audit.sql before the four-digit scheme) is the same migration.
	Version int
	// Name is the file name, e.g. "0001_posts.sql".
	Name string
	// SQL is the file's content.
	SQL string
	// Checksum is the hex sha256 of the file's bytes.
	Checksum string
}

// ID is the file name without ".sql" ("0001_posts").
func (m Migration) ID() string { return strings.TrimSuffix(m.Name, ".sql") }

// Applied is a migration a store has recorded.
type Applied struct {
	Version int
	// Name is what the record calls it: the file name or ID it was applied
	// under, possibly an older spelling of today's.
	Name string
	// Checksum is the recorded sha256, empty for a migration applied
	// before checksums were kept.
	Checksum string
}

// Store is one store's side of migrating: one schema or database.
type Store interface {
	// Lock keeps other migrators of the same schema out until unlock is
	// called. A store without locks documents why running unlocked is safe.
	Lock(ctx context.Context) (unlock func(), err error)
	// Prepare creates the bookkeeping if it is missing. It runs under the
	// lock, before Applied, on every run.
	Prepare(ctx context.Context) error
	// Applied lists the recorded migrations.
	Applied(ctx context.Context) ([]Applied, error)
	// Apply runs m and records it with its checksum, in one transaction
	// where the store has transactions.
	Apply(ctx context.Context, m Migration) error
	// RecordChecksum records m's checksum for a, the record of the same
	// version made before checksums were kept, leaving its name as it is
	// (so a binary of the time before still recognises it).
	RecordChecksum(ctx context.Context, a Applied, m Migration) error
}

// ErrEdited marks an applied migration whose file has changed since.
var ErrEdited = errors.New("an applied migration was edited")

var fileName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// Load reads the *.sql files of fsys (other files are ignored), sorted by
// version. Every name must be NNNN_name.sql, with distinct numbers.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	out := make([]Migration, 0, len(names))
	seen := map[int]string{}
	for _, name := range names {
		sub := fileName.FindStringSubmatch(name)
		if sub == nil {
			return nil, fmt.Errorf("migration %s: the name must be NNNN_name.sql (four digits, then lowercase letters, digits and _)", name)
		}
		version, _ := strconv.Atoi(sub[1]) // four digits
		if version == 0 {
			return nil, fmt.Errorf("migration %s: versions start at 0001", name)
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations %s and %s have the same version", other, name)
		}
		seen[version] = name
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		sum := sha256.Sum256(body)
		out = append(out, Migration{Version: version, Name: name, SQL: string(body), Checksum: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	return out, nil
}

// ParseVersion reads the version of a recorded name ("0001_posts",
// "001_audit.sql", "7"): the digits before the first "_" or ".", if any.
func ParseVersion(name string) (int, bool) {
	digits, _, _ := strings.Cut(name, "_")
	digits, _, _ = strings.Cut(digits, ".")
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || len(digits) > 9 {
		return 0, false
	}
	v, err := strconv.Atoi(digits)
	return v, err == nil && v > 0
}

// Run brings s up to date with migrations (as Load returns them) under the
// store's lock. It first checks every recorded migration against its file
// and fails with ErrEdited, before writing anything, when one differs; then
// it records the checksums of migrations applied before checksums were
// kept; then it applies the missing ones in order, stopping at the first
// that fails. Recorded versions without a file (a newer binary applied
// them) are left alone.
func Run(ctx context.Context, s Store, migrations []Migration, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer unlock()
	if err := s.Prepare(ctx); err != nil {
		return fmt.Errorf("migration bookkeeping: %w", err)
	}
	applied, err := s.Applied(ctx)
	if err != nil {
		return fmt.Errorf("read applied migrations: %w", err)
	}
	recorded := map[int][]Applied{}
	for _, a := range applied {
		recorded[a.Version] = append(recorded[a.Version], a)
	}
	for _, m := range migrations {
		for _, a := range recorded[m.Version] {
			if a.Checksum != "" && a.Checksum != m.Checksum {
				return fmt.Errorf("%w: %s was applied (as %s) with sha256 %s, but the file now has %s; "+
					"restore it and add a new migration instead", ErrEdited, m.Name, a.Name, a.Checksum, m.Checksum)
			}
		}
	}
	for _, m := range migrations {
		for _, a := range recorded[m.Version] {
			if a.Checksum != "" {
				continue
			}
			if err := s.RecordChecksum(ctx, a, m); err != nil {
				return fmt.Errorf("record the checksum of migration %s: %w", m.Name, err)
			}
			log.Info("migration checksum recorded", "migration", m.Name, "applied_as", a.Name)
		}
	}
	for _, m := range migrations {
		if len(recorded[m.Version]) > 0 {
			continue
		}
		if err := s.Apply(ctx, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		log.Info("migration applied", "migration", m.Name)
	}
	return nil
}

// Dir is the directory dir of fsys: the migrations a package embeds
// (//go:embed migrations/*.sql, then Dir(files, "migrations")). An invalid
// dir is a programming error and panics.
func Dir(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("migrate: %v", err))
	}
	return sub
}
