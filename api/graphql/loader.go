package graphql

import (
	"context"
	"sync"
	"time"
)

// loader batches the lookups resolvers make while one request executes:
// gqlgen resolves the items of a list concurrently, and every key asked
// for within a short wait (or until maxBatch keys) is fetched in one call.
// A loader lives for one request, so it also caches what it fetched.
type loader[K comparable, V any] struct {
	fetch    func(ctx context.Context, keys []K) (map[K]V, error)
	wait     time.Duration
	maxBatch int

	mu    sync.Mutex
	cache map[K]*loadResult[V]
	batch *loadBatch[K, V]
}

type loadResult[V any] struct {
	done  chan struct{}
	value V
	found bool
	err   error
}

type loadBatch[K comparable, V any] struct {
	keys    []K
	results []*loadResult[V]
	timer   *time.Timer
}

func newLoader[K comparable, V any](wait time.Duration, maxBatch int, fetch func(context.Context, []K) (map[K]V, error)) *loader[K, V] {
	return &loader[K, V]{fetch: fetch, wait: wait, maxBatch: maxBatch, cache: map[K]*loadResult[V]{}}
}

// load returns the value for key (found false when the fetch had none).
func (l *loader[K, V]) load(ctx context.Context, key K) (V, bool, error) {
	l.mu.Lock()
	res, ok := l.cache[key]
	if !ok {
		res = &loadResult[V]{done: make(chan struct{})}
		l.cache[key] = res
		if l.batch == nil {
			b := &loadBatch[K, V]{}
			l.batch = b
			b.timer = time.AfterFunc(l.wait, func() { l.dispatch(ctx, b) })
		}
		b := l.batch
		b.keys = append(b.keys, key)
		b.results = append(b.results, res)
		if len(b.keys) >= l.maxBatch {
			l.batch = nil
			if b.timer.Stop() {
				go l.run(ctx, b)
			}
		}
	}
	l.mu.Unlock()
	select {
	case <-res.done:
		return res.value, res.found, res.err
	case <-ctx.Done():
		var zero V
		return zero, false, ctx.Err()
	}
}

// dispatch runs the batch b when its wait is over (unless it already ran).
func (l *loader[K, V]) dispatch(ctx context.Context, b *loadBatch[K, V]) {
	l.mu.Lock()
	if l.batch == b {
		l.batch = nil
	}
	l.mu.Unlock()
	l.run(ctx, b)
}

func (l *loader[K, V]) run(ctx context.Context, b *loadBatch[K, V]) {
	values, err := l.fetch(ctx, b.keys)
	for i, k := range b.keys {
		r := b.results[i]
		if err != nil {
			r.err = err
		} else {
			r.value, r.found = values[k]
		}
		close(r.done)
	}
}
