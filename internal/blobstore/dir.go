package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Dir stores objects as files under a root directory: key "images/ab.png"
// is the file <root>/images/ab.png, and its media type is kept next to it
// in the hidden file <root>/images/.ab.png.type (keys never start a segment
// with a dot, so hidden files cannot collide with objects).
//
// Every file is written to a temporary file in the same directory, synced
// and renamed into place, so a reader sees the old object or the new one,
// never a partial write. The media type is written before the object: a
// crash between the two leaves at worst a stray type file, never an object
// without its type.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// NewDir opens (and creates if needed) the directory root.
func NewDir(root string) (*Dir, error) {
	if root == "" {
		return nil, errors.New("blobstore: empty directory path")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blobstore: directory %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil { //nolint:gosec // G301: images of public posts, readable like their files (0644)
		return nil, fmt.Errorf("blobstore: create directory: %w", err)
	}
	return &Dir{root: abs}, nil
}

// Root is the absolute path of the directory.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(key string) string {
	return filepath.Join(d.root, filepath.FromSlash(key))
}

func (d *Dir) typePath(key string) string {
	p := d.path(key)
	return filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".type")
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blobstore: put %s: %w", key, err)
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	if contentType == "" {
		contentType = DefaultContentType
	}
	if err := validContentType(contentType); err != nil {
		return err
	}
	p := d.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { //nolint:gosec // G301: images of public posts, readable like their files (0644)
		return fmt.Errorf("blobstore: put %s: %w", key, err)
	}
	if err := writeAtomic(d.typePath(key), []byte(contentType+"\n")); err != nil {
		return fmt.Errorf("blobstore: put %s: media type: %w", key, err)
	}
	if err := writeAtomic(p, data); err != nil {
		return fmt.Errorf("blobstore: put %s: %w", key, err)
	}
	return nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("blobstore: get %s: %w", key, err)
	}
	if err := ValidateKey(key); err != nil {
		return nil, "", err
	}
	ok, err := d.exists(key)
	if err != nil {
		return nil, "", fmt.Errorf("blobstore: get %s: %w", key, err)
	}
	if !ok {
		return nil, "", fmt.Errorf("blobstore: get %s: %w", key, ErrNotFound)
	}
	data, err := os.ReadFile(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("blobstore: get %s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("blobstore: get %s: %w", key, err)
	}
	contentType := DefaultContentType
	switch raw, err := os.ReadFile(d.typePath(key)); {
	case err == nil:
		if ct := strings.TrimSpace(string(raw)); ct != "" {
			contentType = ct
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", fmt.Errorf("blobstore: get %s: media type: %w", key, err)
	}
	return data, contentType, nil
}

// Exists implements Store.
func (d *Dir) Exists(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("blobstore: exists %s: %w", key, err)
	}
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	ok, err := d.exists(key)
	if err != nil {
		return false, fmt.Errorf("blobstore: exists %s: %w", key, err)
	}
	return ok, nil
}

// exists reports whether key is a regular file; a directory (key "images"
// while "images/x.png" exists) is no object.
func (d *Dir) exists(key string) (bool, error) {
	fi, err := os.Stat(d.path(key))
	switch {
	case err == nil:
		return fi.Mode().IsRegular(), nil
	case errors.Is(err, fs.ErrNotExist), isNotDir(err):
		return false, nil
	default:
		return false, err
	}
}

// isNotDir reports ENOTDIR: a parent of the path is a file (key
// "images/x.png/y" while "images/x.png" is an object).
func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}

// writeAtomic writes data to path through a synced temporary file in the
// same directory and a rename.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	// Persist the rename itself; not every platform can sync a directory,
	// and the data is already safe, so a failure here is not an error.
	if f, derr := os.Open(dir); derr == nil { //nolint:gosec // G304: the directory the file was just written in, under the store's root
		_ = f.Sync()
		_ = f.Close()
	}
	return nil
}
