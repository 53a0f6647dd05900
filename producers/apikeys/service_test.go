package apikeys_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/projections/serving"
)

// fakeAppender validates and records payloads like the real appender.
type fakeAppender struct {
	payloads []events.Payload
	err      error
}

func (f *fakeAppender) NewEvent(p events.Payload, correlationID, _ string) (events.Event, error) {
	return events.NewCatalogRegistry().New(p, events.Meta{ID: "00000000-0000-7000-8000-000000000001", Time: time.Now(), CorrelationID: correlationID})
}

func (f *fakeAppender) Append(_ context.Context, evs ...events.Event) ([]producers.Position, error) {
	if f.err != nil {
		return nil, f.err
	}
	out := make([]producers.Position, len(evs))
	for i, ev := range evs {
		f.payloads = append(f.payloads, ev.Payload)
		out[i] = producers.Position{Topic: "api-keys", Offset: int64(len(f.payloads) - 1)}
	}
	return out, nil
}

func TestGenerate(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		k, err := apikeys.Generate()
		require.NoError(t, err)
		require.Len(t, k, 47)
		require.True(t, strings.HasPrefix(k, apikeys.KeyPrefix))
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(k, apikeys.KeyPrefix))
		require.NoError(t, err)
		require.Len(t, raw, 32)
		require.False(t, seen[k])
		seen[k] = true
	}
}

func TestHashAndResolve(t *testing.T) {
	const key = "erk_abc"
	sum := sha256.Sum256([]byte(key))
	require.Equal(t, hex.EncodeToString(sum[:]), apikeys.Hash(key))
	require.Equal(t, apikeys.Hash(key), apikeys.Hash(" \t"+key+"\n"), "the key is trimmed")
	require.Equal(t, events.APIKeyID(apikeys.Hash(key)), apikeys.KeyID(key))

	id := apikeys.KeyID(key)
	for _, tc := range []struct {
		in     string
		id     string
		isKey  bool
		hasErr bool
	}{
		{in: id, id: id},
		{in: strings.ToUpper(id), id: id},
		{in: "  " + id + " ", id: id},
		{in: key, id: id, isKey: true},
		{in: " " + key, id: id, isKey: true},
		{in: "", hasErr: true},
		{in: "   ", hasErr: true},
	} {
		got, isKey, err := apikeys.ResolveKeyID(tc.in)
		if tc.hasErr {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.id, got, tc.in)
		require.Equal(t, tc.isKey, isKey, tc.in)
	}
}

func TestAddAndRevoke(t *testing.T) {
	ctx := context.Background()
	fa := &fakeAppender{}
	svc := apikeys.NewService(fa)

	added, err := svc.Add(ctx, "  ci runner  ")
	require.NoError(t, err)
	key := added.Key.Reveal()
	require.Equal(t, "ci runner", added.Label)
	require.Equal(t, apikeys.KeyID(key), added.KeyID)
	require.Equal(t, []events.Payload{&events.APIKeyAddedV1{KeyID: added.KeyID, KeySHA256: apikeys.Hash(key), Label: "ci runner"}}, fa.payloads)

	// The plaintext key never prints by accident.
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("added", "result", added, "key", added.Key)
	require.NotContains(t, logs.String(), key)
	require.NotContains(t, fmt.Sprintf("%v %+v %#v %s", added, added, added, added.Key), key)

	r, err := svc.Revoke(ctx, key, " leaked ")
	require.NoError(t, err)
	require.Equal(t, added.KeyID, r.KeyID)
	r, err = svc.Revoke(ctx, added.KeyID, "")
	require.NoError(t, err)
	require.Equal(t, added.KeyID, r.KeyID)
	require.Equal(t, []events.Payload{
		&events.APIKeyRevokedV1{KeyID: added.KeyID, Reason: "leaked"},
		&events.APIKeyRevokedV1{KeyID: added.KeyID},
	}, fa.payloads[1:])

	for _, tc := range []struct {
		name string
		run  func() error
		msg  string
	}{
		{"empty label", func() error { _, err := svc.Add(ctx, "  "); return err }, "label is required"},
		{"long label", func() error { _, err := svc.Add(ctx, strings.Repeat("l", 201)); return err }, "label is longer than 200 bytes"},
		{"control characters", func() error { _, err := svc.Add(ctx, "a\x1b[2Jb"); return err }, "label contains control characters"},
		{"invalid UTF-8", func() error { _, err := svc.Add(ctx, "a\xffb"); return err }, "label is not valid UTF-8"},
		{"long reason", func() error { _, err := svc.Revoke(ctx, added.KeyID, strings.Repeat("r", 501)); return err }, "reason is longer than 500 bytes"},
		{"no key", func() error { _, err := svc.Revoke(ctx, " ", ""); return err }, "give a key id or a key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(fa.payloads)
			require.EqualError(t, tc.run(), tc.msg)
			require.Len(t, fa.payloads, n, "nothing appended")
		})
	}

	fa.err = errors.New("broker down")
	_, err = svc.Add(ctx, "x")
	require.ErrorContains(t, err, "broker down")
}

// TestIntegrationKeyLifecycle: through real Kafka and the serving projector,
// an added key is active and a revoked one (named by the key) is not.
func TestIntegrationKeyLifecycle(t *testing.T) {
	t.Parallel()
	st := teststack.Serving(t, teststack.Options{})
	ctx := context.Background()
	svc := apikeys.NewService(st.Appender)
	rd := serving.NewReader(st.Pool)

	added, err := svc.Add(ctx, "integration")
	require.NoError(t, err)
	require.Equal(t, st.Topics.Name(events.TopicAPIKeys), added.Position.Topic)
	require.NoError(t, st.Watermark.WaitFor(ctx, added.Position.Topic, added.Position.Partition, added.Position.Offset, 15*time.Second))
	sha := apikeys.Hash(added.Key.Reveal())
	ok, err := rd.ActiveAPIKey(ctx, sha)
	require.NoError(t, err)
	require.True(t, ok)
	k, err := rd.APIKeyByID(ctx, added.KeyID)
	require.NoError(t, err)
	require.Equal(t, "integration", k.Label)
	require.Nil(t, k.RevokedAt)

	r, err := svc.Revoke(ctx, added.Key.Reveal(), "done")
	require.NoError(t, err)
	require.Equal(t, added.Position.Partition, r.Position.Partition, "one key's events share a partition")
	require.NoError(t, st.Watermark.WaitFor(ctx, r.Position.Topic, r.Position.Partition, r.Position.Offset, 15*time.Second))
	ok, err = rd.ActiveAPIKey(ctx, sha)
	require.NoError(t, err)
	require.False(t, ok)
	k, err = rd.APIKeyByID(ctx, added.KeyID)
	require.NoError(t, err)
	require.NotNil(t, k.RevokedAt)
	require.Equal(t, "done", k.RevokeReason)
}
