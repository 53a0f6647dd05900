package keystore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/keystore"
)

// TestAnnounce: an attached key is announced once; a failed announcement is
// not recorded, so the next call announces; a replaced (expired) key is
// announced anew; no key is ErrNotFound.
func TestAnnounce(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"), keystore.WithTTL(10*time.Minute))
	inv := investigation()

	_, err := s.Announce(ctx, inv, t0, func(context.Context, keystore.Attachment) error {
		t.Fatal("nothing to announce")
		return nil
	})
	require.ErrorIs(t, err, keystore.ErrNotFound)

	_, err = s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)
	want := keystore.Attachment{InvestigationID: inv, KeyID: "a", CreatedAt: t0.Truncate(time.Microsecond),
		ExpiresAt: t0.Truncate(time.Microsecond).Add(10 * time.Minute)}

	// The append fails: nothing is recorded.
	boom := errors.New("append failed")
	var seen []keystore.Attachment
	called, err := s.Announce(ctx, inv, t0, func(_ context.Context, a keystore.Attachment) error {
		seen = append(seen, a)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.False(t, called)

	// A later key is dropped (the first wins); the retry announces the first.
	_, err = s.Attach(ctx, inv, userKey(2), t0.Add(time.Second))
	require.NoError(t, err)
	called, err = s.Announce(ctx, inv, t0.Add(time.Second), func(_ context.Context, a keystore.Attachment) error {
		seen = append(seen, a)
		return nil
	})
	require.NoError(t, err)
	require.True(t, called)
	require.Equal(t, []keystore.Attachment{want, want}, seen, "both calls name the same stored key")

	// Announced: never again.
	called, err = s.Announce(ctx, inv, t0.Add(2*time.Second), func(context.Context, keystore.Attachment) error {
		t.Fatal("announced twice")
		return nil
	})
	require.NoError(t, err)
	require.False(t, called)

	// Expired: nothing to announce. Replaced: the new key is announced.
	_, err = s.Announce(ctx, inv, t0.Add(10*time.Minute), func(context.Context, keystore.Attachment) error {
		t.Fatal("an expired key announced")
		return nil
	})
	require.ErrorIs(t, err, keystore.ErrNotFound)
	later := t0.Add(11 * time.Minute)
	out, err := s.Attach(ctx, inv, userKey(3), later)
	require.NoError(t, err)
	require.Equal(t, keystore.Attached, out)
	var again keystore.Attachment
	called, err = s.Announce(ctx, inv, later, func(_ context.Context, a keystore.Attachment) error {
		again = a
		return nil
	})
	require.NoError(t, err)
	require.True(t, called, "a replaced key is announced anew")
	require.Equal(t, later.Truncate(time.Microsecond).Add(10*time.Minute), again.ExpiresAt)
}

// TestAnnounceUnderConcurrency: however many callers announce at once, and
// whichever of them fail to append, one announcement runs at a time (the
// others are told ErrAnnouncing at once), until one succeeds; never after.
func TestAnnounceUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, migrated(t), ring(t, "a", "a"))
	inv := investigation()
	_, err := s.Attach(ctx, inv, userKey(1), t0)
	require.NoError(t, err)

	const n = 40
	var calls, successes, busy atomic.Int32
	var inside atomic.Int32
	var overlapped atomic.Bool
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			// Each caller retries until the attachment is announced, by it or another.
			for {
				called, err := s.Announce(ctx, inv, t0, func(context.Context, keystore.Attachment) error {
					if inside.Add(1) > 1 {
						overlapped.Store(true)
					}
					defer inside.Add(-1)
					time.Sleep(5 * time.Millisecond)
					// The first three appends fail.
					if calls.Add(1) <= 3 {
						return errors.New("append failed")
					}
					successes.Add(1)
					return nil
				})
				switch {
				case errors.Is(err, keystore.ErrAnnouncing):
					busy.Add(1)
					time.Sleep(time.Millisecond)
					continue
				case err != nil && err.Error() == "append failed":
					continue
				case err != nil:
					errs[i] = err
				}
				_ = called
				return
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.False(t, overlapped.Load(), "two announcements ran at once")
	require.Equal(t, int32(4), calls.Load(), "three failures, then one success, then nothing")
	require.Equal(t, int32(1), successes.Load())
	require.Positive(t, busy.Load(), "callers found the announcement in progress")
}
