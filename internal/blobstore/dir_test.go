package blobstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func newTestDir(t *testing.T) *Dir {
	t.Helper()
	d, err := NewDir(filepath.Join(t.TempDir(), "blobs"))
	require.NoError(t, err)
	return d
}

func TestDirRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newTestDir(t)

	ok, err := d.Exists(ctx, "images/a.png")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = d.Get(ctx, "images/a.png")
	require.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, d.Put(ctx, "images/a.png", []byte("png bytes"), "image/png"))
	ok, err = d.Exists(ctx, "images/a.png")
	require.NoError(t, err)
	require.True(t, ok)
	data, ct, err := d.Get(ctx, "images/a.png")
	require.NoError(t, err)
	require.Equal(t, "png bytes", string(data))
	require.Equal(t, "image/png", ct)

	// Idempotent, and a second Put replaces bytes and type.
	require.NoError(t, d.Put(ctx, "images/a.png", []byte("png bytes"), "image/png"))
	require.NoError(t, d.Put(ctx, "images/a.png", []byte("new"), "image/webp"))
	data, ct, err = d.Get(ctx, "images/a.png")
	require.NoError(t, err)
	require.Equal(t, "new", string(data))
	require.Equal(t, "image/webp", ct)

	// The object is a plain file at the key's path; only the hidden type
	// file sits next to it, no temporary files are left behind.
	raw, err := os.ReadFile(filepath.Join(d.Root(), "images", "a.png"))
	require.NoError(t, err)
	require.Equal(t, "new", string(raw))
	entries, err := os.ReadDir(filepath.Join(d.Root(), "images"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"a.png", ".a.png.type"}, names)
}

func TestDirDefaultsAndEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newTestDir(t)

	// No media type given: the default is stored.
	require.NoError(t, d.Put(ctx, "x/empty", nil, ""))
	data, ct, err := d.Get(ctx, "x/empty")
	require.NoError(t, err)
	require.Empty(t, data)
	require.Equal(t, DefaultContentType, ct)

	// A lost type file falls back to the default.
	require.NoError(t, d.Put(ctx, "x/typed", []byte("a"), "text/plain"))
	require.NoError(t, os.Remove(filepath.Join(d.Root(), "x", ".typed.type")))
	_, ct, err = d.Get(ctx, "x/typed")
	require.NoError(t, err)
	require.Equal(t, DefaultContentType, ct)

	// A directory or a path through a file is no object.
	ok, err := d.Exists(ctx, "x")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = d.Get(ctx, "x")
	require.ErrorIs(t, err, ErrNotFound)
	ok, err = d.Exists(ctx, "x/typed/deeper")
	require.NoError(t, err)
	require.False(t, ok)

	// Invalid keys and media types are refused before touching the disk.
	require.ErrorIs(t, d.Put(ctx, "../outside", []byte("a"), "text/plain"), ErrInvalidKey)
	require.ErrorIs(t, d.Put(ctx, "/etc/passwd", []byte("a"), "text/plain"), ErrInvalidKey)
	_, _, err = d.Get(ctx, "../outside")
	require.ErrorIs(t, err, ErrInvalidKey)
	_, err = d.Exists(ctx, "a/../../b")
	require.ErrorIs(t, err, ErrInvalidKey)
	require.Error(t, d.Put(ctx, "x/bad-type", []byte("a"), "text/plain\r\nX-Evil: 1"))

	// A canceled context stops every operation.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, d.Put(canceled, "x/y", []byte("a"), ""), context.Canceled)
	_, _, err = d.Get(canceled, "x/typed")
	require.ErrorIs(t, err, context.Canceled)
	_, err = d.Exists(canceled, "x/typed")
	require.ErrorIs(t, err, context.Canceled)
}

// TestDirConcurrentPuts: concurrent writers of one key never leave a
// torn object; the last rename wins whole.
func TestDirConcurrentPuts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newTestDir(t)
	payloads := []string{strings.Repeat("a", 1<<16), strings.Repeat("b", 1<<16), strings.Repeat("c", 1<<16)}
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() {
			errs[i] = d.Put(ctx, "k/v", []byte(payloads[i%len(payloads)]), "text/plain")
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	data, _, err := d.Get(ctx, "k/v")
	require.NoError(t, err)
	require.Contains(t, payloads, string(data))
}

func TestNewDirErrors(t *testing.T) {
	t.Parallel()
	_, err := NewDir("")
	require.Error(t, err)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, err = NewDir(filepath.Join(file, "sub"))
	require.Error(t, err)
}
