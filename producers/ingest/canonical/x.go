package canonical

import (
	"context"
	"fmt"
)

// X always returns ErrNotVerifiable without touching the network: X has no
// public API the server can read a post from anonymously, so X versions are
// always CLIENT_FALLBACK (spec 2.9). The method exists so callers handle
// every platform the same way.
func (f *Fetcher) X(_ context.Context, tweetID string) (Result, error) {
	return Result{}, fmt.Errorf("x canonical fetch of %s: %w", tweetID, ErrNotVerifiable)
}
