package keystore

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
)

// testKey is a deterministic base64 key for tests.
func testKey(fill byte) logging.Secret {
	return logging.Secret(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, KeySize)))
}

func TestNewKeyRing(t *testing.T) {
	short := logging.Secret(base64.StdEncoding.EncodeToString(make([]byte, 16)))
	tests := []struct {
		name    string
		current string
		keys    map[string]logging.Secret
		wantErr string
	}{
		{name: "one key", current: "a", keys: map[string]logging.Secret{"a": testKey(1)}},
		{name: "unpadded base64", current: "a", keys: map[string]logging.Secret{"a": logging.Secret(strings.TrimRight(testKey(1).Reveal(), "="))}},
		{name: "current missing", current: "b", keys: map[string]logging.Secret{"a": testKey(1)}, wantErr: `current key id "b" is not in the key ring`},
		{name: "no keys", current: "a", keys: nil, wantErr: "not in the key ring"},
		{name: "short key", current: "a", keys: map[string]logging.Secret{"a": short}, wantErr: "decodes to 16 bytes, want 32"},
		{name: "not base64", current: "a", keys: map[string]logging.Secret{"a": "not*base64!"}, wantErr: "not valid base64"},
		{name: "bad id", current: "a b", keys: map[string]logging.Secret{"a b": testKey(1)}, wantErr: "key id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ring, err := NewKeyRing(tt.current, tt.keys)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tt.current, ring.CurrentID())
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			for _, k := range tt.keys {
				require.NotContains(t, err.Error(), k.Reveal(), "errors never echo key material")
			}
		})
	}
}

func TestParseKeyRing(t *testing.T) {
	spec := logging.Secret(" old:" + testKey(1).Reveal() + ", new:" + testKey(2).Reveal() + ",")
	ring, err := ParseKeyRing("new", spec)
	require.NoError(t, err)
	require.Equal(t, "new", ring.CurrentID())
	require.Equal(t, []string{"new", "old"}, ring.IDs())

	for _, tt := range []struct{ spec, wantErr string }{
		{spec: "", wantErr: "no keys configured"},
		{spec: testKey(1).Reveal(), wantErr: "want id:base64key"},
		{spec: "a:" + testKey(1).Reveal() + ",a:" + testKey(2).Reveal(), wantErr: "appears twice"},
	} {
		_, err := ParseKeyRing("a", logging.Secret(tt.spec))
		require.ErrorContains(t, err, tt.wantErr)
		require.NotContains(t, err.Error(), testKey(1).Reveal())
	}
}

func TestKeyRingNeverPrintsKeys(t *testing.T) {
	ring, err := NewKeyRing("a", map[string]logging.Secret{"a": testKey(7)})
	require.NoError(t, err)
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "debug")
	require.NoError(t, err)
	log.Info("ring", "ring", ring, "value", *ring)
	out := buf.String() + fmt.Sprintf("%v %+v %#v %s %v", ring, ring, ring, ring, *ring)
	require.Contains(t, out, "KeyRing{current: a, ids: a}")
	raw := bytes.Repeat([]byte{7}, KeySize)
	require.NotContains(t, out, testKey(7).Reveal())
	require.NotContains(t, out, string(raw))
	require.NotContains(t, out, fmt.Sprintf("%v", raw))
}

func TestGenerateKey(t *testing.T) {
	a, b := GenerateKey(), GenerateKey()
	require.NotEqual(t, a.Reveal(), b.Reveal())
	_, err := NewKeyRing("k", map[string]logging.Secret{"k": a})
	require.NoError(t, err)
}

func TestSealOpen(t *testing.T) {
	ring, err := NewKeyRing("a", map[string]logging.Secret{"a": testKey(1), "b": testKey(2)})
	require.NoError(t, err)
	const inv = "0190e6a4-8a1c-7c3e-9d3b-2f1a4b5c6d7e"
	const other = "0190e6a4-8a1c-7c3e-9d3b-2f1a4b5c6d7f"
	exp := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	plain := []byte("sk-proj-roundtrip-0123456789")

	s, err := ring.seal(inv, exp, plain)
	require.NoError(t, err)
	require.Equal(t, "a", s.KeyID)
	require.Len(t, s.Nonce, nonceSize)
	require.NotContains(t, string(s.Ciphertext), string(plain))

	got, err := ring.open(inv, exp, s)
	require.NoError(t, err)
	require.Equal(t, plain, got)

	s2, err := ring.seal(inv, exp, plain)
	require.NoError(t, err)
	require.NotEqual(t, s.Nonce, s2.Nonce, "every seal draws a fresh nonce")
	require.NotEqual(t, s.Ciphertext, s2.Ciphertext)

	flip := func(b []byte, i int) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= 0x01
		return c
	}
	tests := []struct {
		name    string
		inv     string
		exp     time.Time
		s       sealed
		wantErr error
	}{
		{name: "other investigation", inv: other, exp: exp, s: s, wantErr: ErrDecrypt},
		{name: "later expiry", inv: inv, exp: exp.Add(time.Microsecond), s: s, wantErr: ErrDecrypt},
		{name: "other key id", inv: inv, exp: exp, s: sealed{KeyID: "b", Nonce: s.Nonce, Ciphertext: s.Ciphertext}, wantErr: ErrDecrypt},
		{name: "tampered ciphertext", inv: inv, exp: exp, s: sealed{KeyID: "a", Nonce: s.Nonce, Ciphertext: flip(s.Ciphertext, 0)}, wantErr: ErrDecrypt},
		{name: "tampered tag", inv: inv, exp: exp, s: sealed{KeyID: "a", Nonce: s.Nonce, Ciphertext: flip(s.Ciphertext, len(s.Ciphertext)-1)}, wantErr: ErrDecrypt},
		{name: "tampered nonce", inv: inv, exp: exp, s: sealed{KeyID: "a", Nonce: flip(s.Nonce, 3), Ciphertext: s.Ciphertext}, wantErr: ErrDecrypt},
		{name: "short nonce", inv: inv, exp: exp, s: sealed{KeyID: "a", Nonce: s.Nonce[:8], Ciphertext: s.Ciphertext}, wantErr: ErrDecrypt},
		{name: "unknown key id", inv: inv, exp: exp, s: sealed{KeyID: "gone", Nonce: s.Nonce, Ciphertext: s.Ciphertext}, wantErr: ErrUnknownKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ring.open(tt.inv, tt.exp, tt.s)
			require.ErrorIs(t, err, tt.wantErr)
			require.NotContains(t, err.Error(), string(plain))
		})
	}
}
