package httpsafe

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResponseSizeLimit(t *testing.T) {
	const limit = 1024
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := strings.Repeat("x", n)
		if r.URL.Query().Get("chunked") == "1" {
			// No Content-Length: the limit must hold while streaming.
			for i := 0; i < len(body); i += 100 {
				_, _ = w.Write([]byte(body[i:min(i+100, len(body))]))
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, _ = w.Write([]byte(body))
	})
	c := newClient(t, AllowLoopbackForTests(), WithMaxResponseBytes(limit))
	tests := []struct {
		name     string
		query    string
		maxBytes int64
		wantErr  bool
	}{
		{"exactly the limit", "n=1024", 0, false},
		{"declared over the limit", "n=1025", 0, true},
		{"streamed exactly the limit", "n=1024&chunked=1", 0, false},
		{"streamed over the limit", "n=5000&chunked=1", 0, true},
		{"per-request limit raised", "n=5000&chunked=1", 8192, false},
		{"per-request limit lowered", "n=600", 512, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.Do(context.Background(), Request{URL: srv.URL + "/?" + tc.query, MaxBytes: tc.maxBytes})
			if tc.wantErr {
				require.ErrorIs(t, err, ErrTooLarge)
				require.Nil(t, resp, "an oversized body is an error, never a truncated response")
				return
			}
			require.NoError(t, err)
			n, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(tc.query, "n="), "&", 2)[0])
			require.Len(t, resp.Body, n)
		})
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall-body" {
			w.Header().Set("Content-Length", "10")
			_, _ = w.Write([]byte("12345"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})

	t.Run("total timeout before headers", func(t *testing.T) {
		c := newClient(t, AllowLoopbackForTests(), WithTimeout(150*time.Millisecond))
		start := time.Now()
		_, err := c.Get(context.Background(), srv.URL+"/stall-headers")
		require.ErrorIs(t, err, ErrTimeout)
		require.Less(t, time.Since(start), 3*time.Second)
	})
	t.Run("total timeout while reading the body", func(t *testing.T) {
		c := newClient(t, AllowLoopbackForTests(), WithTimeout(150*time.Millisecond))
		_, err := c.Get(context.Background(), srv.URL+"/stall-body")
		require.ErrorIs(t, err, ErrTimeout)
	})
	t.Run("caller deadline", func(t *testing.T) {
		c := newClient(t, AllowLoopbackForTests())
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		_, err := c.Get(ctx, srv.URL+"/stall-headers")
		require.ErrorIs(t, err, ErrTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("caller cancellation is not a timeout", func(t *testing.T) {
		c := newClient(t, AllowLoopbackForTests())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := c.Get(ctx, srv.URL+"/stall-headers")
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, ErrTimeout)
	})
}
