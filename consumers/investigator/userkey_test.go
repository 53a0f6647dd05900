package investigator_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/llm/tools"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/investigations"
)

// errInjected is the append failure the tests inject.
var errInjected = errors.New("injected append failure: broker unreachable")

// flakyAppender is the real appender, except that its next failures
// appends fail: with prefix, after appending the first event of the call
// (a partial append), else appending nothing.
type flakyAppender struct {
	*producers.Appender
	mu       sync.Mutex
	failures int
	prefix   bool
}

func (f *flakyAppender) Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error) {
	f.mu.Lock()
	fail := f.failures > 0
	if fail {
		f.failures--
	}
	f.mu.Unlock()
	if !fail {
		return f.Appender.Append(ctx, evs...)
	}
	if f.prefix && len(evs) > 1 {
		if _, err := f.Appender.Append(ctx, evs[0]); err != nil {
			return nil, err
		}
	}
	return nil, errInjected
}

// userKeyRig is a harness whose workers hold users' keys and whose fake
// provider accepts only the user's key: a run on the instance's key fails.
type userKeyRig struct {
	*harness
	keys    *keystore.Store
	userKey string
	logs    *bytes.Buffer
	brain   *brain
	post    post
}

func newUserKeyRig(t *testing.T, externalID string) *userKeyRig {
	h := newHarness(t, investigator.Config{})
	ctx := context.Background()
	require.NoError(t, keystore.Migrate(ctx, h.stack.Pool, logging.Discard()))
	ring, err := keystore.NewKeyRing("k1", map[string]logging.Secret{"k1": keystore.GenerateKey()})
	require.NoError(t, err)
	keys, err := keystore.New(h.stack.Pool, ring)
	require.NoError(t, err)
	secret := make([]byte, 24)
	_, _ = rand.Read(secret)
	r := &userKeyRig{harness: h, keys: keys, userKey: "sk-user-" + hex.EncodeToString(secret), logs: &bytes.Buffer{}}
	h.keys = keys
	h.log = slog.New(slog.NewTextHandler(&lockedWriter{w: r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.fake.RequireAPIKey(r.userKey)
	r.brain = &brain{submit: []tools.Correction{correction(eiffel, "It was completed in 1889.")}, approve: map[string]bool{eiffel: true}}
	r.brain.install(h.fake)
	r.post = h.register(externalID, false, body...)
	return r
}

// request asks for the investigation with the user's key, as investigateNow does.
func (r *userKeyRig) request(svc *investigations.Service) error {
	v, err := r.reader.VersionByID(context.Background(), r.post.versionID)
	require.NoError(r.t, err)
	_, err = svc.Request(context.Background(), investigations.Request{
		Version: investigations.Version{PostID: v.PostID, PostVersionID: v.ID, Platform: v.Platform,
			ExternalID: v.ExternalID, VersionHash: v.VersionHash},
		Source: events.RequestSourceInvestigateNow, CorrelationID: "test", UserKey: logging.Secret(r.userKey)})
	if err != nil {
		require.NotContains(r.t, err.Error(), r.userKey)
	}
	return err
}

// checkPaidByTheUser: the investigation completed in one attempt on the
// user's key, the log records the key's attachment exactly once, and the
// key is nowhere in the log, the database or the logs.
func (r *userKeyRig) checkPaidByTheUser(t *testing.T, requests int) {
	t.Helper()
	got := r.waitStatus(r.post, 60*time.Second, events.StatusComplete)
	require.Len(t, got.Claims, 1)
	require.Equal(t, eiffel, got.Claims[0].Text)

	trail := r.trail(r.post.investigationID)
	kinds := types(trail)
	require.Equal(t, requests, count(kinds, "requested"), "%v", kinds)
	require.Equal(t, 1, count(kinds, "user_key_attached"), "the key's attachment is in the log exactly once: %v", kinds)
	require.Equal(t, 1, count(kinds, "attempt_started"), "%v", kinds)
	require.Zero(t, count(kinds, "attempt_failed"), "%v", kinds)
	require.Less(t, indexOf(kinds, "requested"), indexOf(kinds, "user_key_attached"))
	for _, ev := range trail {
		switch p := ev.Payload.(type) {
		case *events.InvestigationKeyAttachedV1:
			require.Equal(t, "k1", p.KeyID)
			require.Equal(t, events.KeyAttachedEventID(r.post.investigationID, "k1", p.ExpiresAt), ev.ID)
		case *events.InvestigationAttemptStartedV1:
			require.Equal(t, events.CredentialUser, p.Credential, "the run is paid with the user's key")
		}
	}
	for _, req := range r.fake.Requests() {
		require.Equal(t, "Bearer "+r.userKey, req.Header.Get("Authorization"), "every provider call carries the user's key")
	}
	r.checkNoSecret(t)
}

// checkNoSecret: the user's key, in any usual encoding, is in no record of
// any topic, no row of any table and no log line.
func (r *userKeyRig) checkNoSecret(t *testing.T) {
	t.Helper()
	encodings := []string{r.userKey, strings.TrimPrefix(r.userKey, "sk-user-"),
		base64.StdEncoding.EncodeToString([]byte(r.userKey)), hex.EncodeToString([]byte(r.userKey))}
	records := allRecords(t, r.stack.Brokers, r.stack.Topics.Prefix)
	require.NotEmpty(t, records)
	for _, rec := range records {
		for _, enc := range encodings {
			require.NotContains(t, string(rec.Value), enc, "the user's key is in the log (%s)", rec.Topic)
			require.NotContains(t, string(rec.Key), enc)
			for _, h := range rec.Headers {
				require.NotContains(t, string(h.Value), enc)
			}
		}
	}
	dump := dumpTables(t, r.stack.DBURL)
	require.Contains(t, dump, r.post.investigationID, "the dump sees the projections")
	logs := r.logs.String()
	require.Contains(t, logs, r.post.investigationID, "the workers logged")
	for _, enc := range encodings {
		require.NotContains(t, dump, enc, "the user's key is in the database")
		require.NotContains(t, logs, enc, "the user's key is in the logs")
	}
}

func indexOf(kinds []string, kind string) int {
	for i, k := range kinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// TestUserKeyAttachmentSurvivesAFailedAppend: investigateNow stores the
// user's key and then appends the request with the record of the key. When
// that append fails, or the process dies between the two, the key is
// stored but the log does not say so. Before, a retry found the key
// AlreadyAttached and appended no record, so the run went on with the
// instance's key (here refused by the provider). Now the record is
// appended by the retry, or, when only the request reached the log, by the
// investigator before the first attempt; either way exactly once, and the
// run is paid with the user's key.
func TestUserKeyAttachmentSurvivesAFailedAppend(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// fail sets up the failure; retry says whether the request is sent again.
		fail     func(r *userKeyRig, app *flakyAppender, svc *investigations.Service)
		retry    bool
		requests int // requested events in the log at the end
	}{
		{
			name: "append fails, request retried",
			fail: func(r *userKeyRig, app *flakyAppender, svc *investigations.Service) {
				app.failures = 1
				require.ErrorIs(r.t, r.request(svc), errInjected)
			},
			retry: true, requests: 1,
		},
		{
			name: "append fails twice, request retried twice",
			fail: func(r *userKeyRig, app *flakyAppender, svc *investigations.Service) {
				app.failures = 2
				require.ErrorIs(r.t, r.request(svc), errInjected)
				require.ErrorIs(r.t, r.request(svc), errInjected)
			},
			retry: true, requests: 1,
		},
		{
			name: "crash between storing the key and appending, request retried",
			fail: func(r *userKeyRig, _ *flakyAppender, _ *investigations.Service) {
				_, err := r.keys.Attach(context.Background(), r.post.investigationID, logging.Secret(r.userKey), time.Now())
				require.NoError(r.t, err)
			},
			retry: true, requests: 1,
		},
		{
			name: "only the request reached the log, never retried",
			fail: func(r *userKeyRig, app *flakyAppender, svc *investigations.Service) {
				app.failures, app.prefix = 1, true
				require.ErrorIs(r.t, r.request(svc), errInjected)
			},
			retry: false, requests: 1,
		},
		{
			name: "only the request reached the log, then retried",
			fail: func(r *userKeyRig, app *flakyAppender, svc *investigations.Service) {
				app.failures, app.prefix = 1, true
				require.ErrorIs(r.t, r.request(svc), errInjected)
			},
			retry: true, requests: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newUserKeyRig(t, "userkey"+fmt.Sprint(len(tc.name)))
			app := &flakyAppender{Appender: r.stack.Appender}
			svc := investigations.New(app, r.keys, nil)
			tc.fail(r, app, svc)
			_, err := r.keys.Get(context.Background(), r.post.investigationID, time.Now())
			require.NoError(t, err, "the key is stored")
			if tc.retry {
				require.NoError(t, r.request(svc))
			}
			r.startWorkers("worker-a")
			r.checkPaidByTheUser(t, tc.requests)
		})
	}
}

// TestConcurrentUserKeyRequests: many investigateNow calls with the user's
// key at once, the first append failing: one stored key, its record in the
// log once, one run on the user's key.
func TestConcurrentUserKeyRequests(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 24} {
		t.Run(fmt.Sprint(n, " requests"), func(t *testing.T) {
			t.Parallel()
			r := newUserKeyRig(t, fmt.Sprint("concurrent", n))
			app := &flakyAppender{Appender: r.stack.Appender, failures: 1}
			svc := investigations.New(app, r.keys, nil)
			r.startWorkers("worker-a")
			errs := make([]error, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					errs[i] = r.request(svc)
				})
			}
			close(start)
			wg.Wait()
			failed := 0
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, errInjected)
					failed++
				}
			}
			require.Equal(t, 1, failed, "exactly the injected failure")
			r.checkPaidByTheUser(t, n-1)
		})
	}
}

// lockedWriter serializes writes of concurrent loggers to one buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// allRecords reads every record of every topic with the prefix.
func allRecords(t *testing.T, brokers []string, prefix string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := kafka.NewClient(brokers)
	require.NoError(t, err)
	defer admin.Close()
	listed, err := kadm.NewClient(admin).ListTopics(ctx)
	require.NoError(t, err)
	var names []string
	for _, d := range listed.Sorted() {
		if strings.HasPrefix(d.Topic, prefix) {
			names = append(names, d.Topic)
		}
	}
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, names...)
	require.NoError(t, err)
	want := map[string]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[fmt.Sprint(o.Topic, o.Partition)] = o.Offset
		}
	})
	cl, err := kafka.NewClient(brokers, kgo.ConsumeTopics(names...), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	got := map[string]int64{}
	var out []*kgo.Record
	for len(got) < len(want) || !reached(got, want) {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "reading the log")
		fs.EachRecord(func(rec *kgo.Record) {
			got[fmt.Sprint(rec.Topic, rec.Partition)] = rec.Offset + 1
			out = append(out, rec)
		})
	}
	return out
}

func reached(got, want map[string]int64) bool {
	for k, v := range want {
		if got[k] < v {
			return false
		}
	}
	return true
}

// dumpTables renders every row of every table of the database as text.
func dumpTables(t *testing.T, dbURL string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_schema, table_name FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Schema, Name string }])
	require.NoError(t, err)
	var b strings.Builder
	for _, tb := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{tb.Schema, tb.Name}.Sanitize()+` t`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}
