package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// fakeStatusCache answers statuses through a reader and records its use.
type fakeStatusCache struct {
	reader  *fakeReader
	mu      sync.Mutex
	reads   int
	knowns  int // VersionKnown calls; each answers "not yet"
	syncs   int
	waitsAt []int // syncs seen by the watermark at each of its waits
}

func (f *fakeStatusCache) VersionStatusByID(ctx context.Context, id string) (serving.VersionStatus, error) {
	f.mu.Lock()
	f.reads++
	f.mu.Unlock()
	return f.reader.VersionStatusByID(ctx, id)
}

func (f *fakeStatusCache) VersionKnown(context.Context, string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knowns++
	return false, nil
}

func (f *fakeStatusCache) Sync(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.syncs++
	return nil
}

// orderedWatermark records, at each wait, how many syncs came before.
type orderedWatermark struct{ cache *fakeStatusCache }

func (w orderedWatermark) WaitFor(context.Context, string, int32, int64, time.Duration) error {
	w.cache.mu.Lock()
	defer w.cache.mu.Unlock()
	w.cache.waitsAt = append(w.cache.waitsAt, w.cache.syncs)
	return nil
}

// TestWithStatusCache: the view path reads statuses through the cache, a
// registration asks it whether the version is known, and a read-your-writes
// wait is followed by the cache's Sync.
func TestWithStatusCache(t *testing.T) {
	t.Parallel()
	reader := newFakeReader()
	reader.versions[fixedRegistration.PostVersionID] = serving.VersionStatus{Version: serving.Version{
		ID: fixedRegistration.PostVersionID, PostID: "5d0f3a9e-1111-5222-8333-444455556666",
		Platform: "X", ExternalID: fixedRegistration.ExternalID, VersionHash: fixedRegistration.VersionHash,
	}}
	cache := &fakeStatusCache{reader: reader}
	fi := &fakeIngest{registered: fixedRegistration}
	s, err := New(Config{MinExtensionVersion: "0.2.0", ReadYourWritesTimeout: time.Second, OpenAIBaseURL: unreachableOpenAI},
		fi, reader, orderedWatermark{cache}, ingest.NewHasher("test-hash-secret-0123456789"), testLogger(t), WithStatusCache(cache))
	require.NoError(t, err)

	r := post(t, s, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID}))
	require.Equal(t, `{"result":{"data":{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":null}}}`, string(r.body))
	require.Equal(t, 1, cache.reads)

	r = post(t, s, "post.registerObservedVersion", validXBody(t, "Hello"))
	require.Equal(t, 200, r.status, string(r.body))
	require.Equal(t, 1, cache.knowns, "the registration asked the cache whether the version is known")
	require.Equal(t, []int{0}, cache.waitsAt, "one wait, before any sync")
	require.Equal(t, 1, cache.syncs, "the wait was followed by a sync")
}
