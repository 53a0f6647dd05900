package search_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// fakeBulk is an Elasticsearch _bulk endpoint that answers from a script:
// each call gets the ids it was sent and returns a status for the whole
// request and, when 200, one status per item.
type fakeBulk struct {
	mu     sync.Mutex
	calls  [][]string // ids per request
	script func(call int, ids []string) (status int, items []int)
}

func (f *fakeBulk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/_bulk" {
		http.Error(w, "unexpected path", http.StatusNotFound)
		return
	}
	var ids []string
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 0; sc.Scan(); line++ {
		if line%2 == 1 {
			continue
		}
		var action struct {
			Index struct {
				ID          string `json:"_id"`
				Version     int64  `json:"version"`
				VersionType string `json:"version_type"`
			} `json:"index"`
		}
		if err := json.Unmarshal(sc.Bytes(), &action); err != nil || action.Index.VersionType != "external" || action.Index.Version < 1 {
			http.Error(w, "bad action line", http.StatusBadRequest)
			return
		}
		ids = append(ids, action.Index.ID)
	}
	f.mu.Lock()
	call := len(f.calls)
	f.calls = append(f.calls, ids)
	f.mu.Unlock()
	status, items := f.script(call, ids)
	if status != http.StatusOK {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"type":"es_rejected_execution_exception","reason":"rejected"},"status":%d}`, status)
		return
	}
	var out []map[string]any
	errs := false
	for i, st := range items {
		item := map[string]any{"_id": ids[i], "status": st}
		switch {
		case st == 409:
			errs = true
			item["error"] = map[string]any{"type": "version_conflict_engine_exception", "reason": "current version is higher or equal"}
		case st >= 300:
			errs = true
			item["error"] = map[string]any{"type": "mapper_parsing_exception", "reason": "failed to parse field [x]"}
		}
		out = append(out, map[string]any{"index": item})
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"took": 1, "errors": errs, "items": out})
}

func TestBulkBacksOffOn429(t *testing.T) {
	t.Parallel()
	docs := []search.Document{
		{ID: "a", Version: 1, Source: []byte(`{"x":1}`)},
		{ID: "b", Version: 2, Source: []byte(`{"x":2}`)},
		{ID: "c", Version: 3, Source: []byte(`{"x":3}`)},
	}
	all := func(st int) func(int, []string) (int, []int) {
		return func(_ int, ids []string) (int, []int) {
			items := make([]int, len(ids))
			for i := range items {
				items[i] = st
			}
			return http.StatusOK, items
		}
	}
	cases := []struct {
		name          string
		script        func(call int, ids []string) (int, []int)
		wantCalls     [][]string
		wantErr       string
		wantPermanent bool
	}{
		{
			name: "whole request 429, then accepted",
			script: func(call int, ids []string) (int, []int) {
				if call == 0 {
					return http.StatusTooManyRequests, nil
				}
				return all(201)(call, ids)
			},
			wantCalls: [][]string{{"a", "b", "c"}, {"a", "b", "c"}},
		},
		{
			name: "one item 429, one already there (409): only the rejected one again",
			script: func(call int, ids []string) (int, []int) {
				if call == 0 {
					return http.StatusOK, []int{201, 429, 409}
				}
				return all(200)(call, ids)
			},
			wantCalls: [][]string{{"a", "b", "c"}, {"b"}},
		},
		{
			name:      "429 every time: bounded",
			script:    func(int, []string) (int, []int) { return http.StatusTooManyRequests, nil },
			wantCalls: [][]string{{"a", "b", "c"}, {"a", "b", "c"}, {"a", "b", "c"}},
			wantErr:   "kept rejecting documents (429)",
		},
		{
			name: "a refused document fails the batch for good, naming the document but not the index",
			script: func(int, []string) (int, []int) {
				return http.StatusOK, []int{201, 400, 201}
			},
			wantCalls:     [][]string{{"a", "b", "c"}},
			wantErr:       "elasticsearch refused 1 of 3 documents: b (version 2): HTTP 400 mapper_parsing_exception: failed to parse field [x]",
			wantPermanent: true,
		},
		{
			name: "refused documents and a 429 together: refused for good",
			script: func(int, []string) (int, []int) {
				return http.StatusOK, []int{413, 429, 400}
			},
			wantCalls:     [][]string{{"a", "b", "c"}},
			wantErr:       "elasticsearch refused 2 of 3 documents: a (version 1): HTTP 413 mapper_parsing_exception: failed to parse field [x]; c (version 3)",
			wantPermanent: true,
		},
		{
			name: "a refused document next to an unavailable shard: transient",
			script: func(int, []string) (int, []int) {
				return http.StatusOK, []int{400, 503, 201}
			},
			wantCalls: [][]string{{"a", "b", "c"}},
			wantErr:   "bulk index into idx: 2 of 3 documents failed: a (version 1): HTTP 400",
		},
		{
			name: "a read-only index (403): transient",
			script: func(int, []string) (int, []int) {
				return http.StatusOK, []int{403, 201, 201}
			},
			wantCalls: [][]string{{"a", "b", "c"}},
			wantErr:   "bulk index into idx: 1 of 3 documents failed: a (version 1): HTTP 403",
		},
		{
			name:          "whole request 413: refused for good",
			script:        func(int, []string) (int, []int) { return http.StatusRequestEntityTooLarge, nil },
			wantCalls:     [][]string{{"a", "b", "c"}},
			wantErr:       "elasticsearch refused 3 documents (first a) as too large: HTTP 413",
			wantPermanent: true,
		},
		{
			name:      "whole request 500 fails at once",
			script:    func(int, []string) (int, []int) { return http.StatusInternalServerError, nil },
			wantCalls: [][]string{{"a", "b", "c"}},
			wantErr:   "HTTP 500",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := &fakeBulk{script: tc.script}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{srv.URL}, DisableRetry: true})
			require.NoError(t, err)
			b := search.NewBulk(es)
			b.MaxAttempts, b.Backoff, b.MaxBackoff = 3, time.Millisecond, 4*time.Millisecond
			err = b.Index(context.Background(), "idx", docs)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, tc.wantPermanent, kafka.IsPermanent(err))
				require.Equal(t, tc.wantPermanent, pgproj.IsDeterministic(err))
			}
			require.Equal(t, tc.wantCalls, fake.calls)
		})
	}
}

// TestBulkSplitsLargeBatches checks that MaxBytes bounds each request.
func TestBulkSplitsLargeBatches(t *testing.T) {
	t.Parallel()
	fake := &fakeBulk{script: func(_ int, ids []string) (int, []int) {
		items := make([]int, len(ids))
		for i := range items {
			items[i] = 201
		}
		return http.StatusOK, items
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{srv.URL}})
	require.NoError(t, err)
	b := search.NewBulk(es)
	b.MaxBytes = 1100
	var docs []search.Document
	for i := range 10 {
		docs = append(docs, search.Document{ID: fmt.Sprint(i), Version: 1, Source: []byte(`{"t":"` + strings.Repeat("x", 300) + `"}`)})
	}
	require.NoError(t, b.Index(context.Background(), "idx", docs))
	require.Len(t, fake.calls, 5, "two documents of ~510 bytes (action line counted as 200) per 1100-byte request")
	var sent []string
	for _, c := range fake.calls {
		sent = append(sent, c...)
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}, sent)
}
