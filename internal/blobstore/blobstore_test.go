package blobstore

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidateKey(t *testing.T) {
	long := make([]byte, MaxKeyLength+1)
	for i := range long {
		long[i] = 'a'
	}
	tests := []struct {
		key string
		ok  bool
	}{
		{"images/0123abcdef.png", true},
		{"a", true},
		{"a/b/c_d-e.f", true},
		{"", false},
		{"/abs/path", false},
		{"trailing/", false},
		{"double//slash", false},
		{"../escape", false},
		{"a/../b", false},
		{"a/./b", false},
		{".hidden", false},
		{"a/.type", false},
		{"Upper.png", false},
		{"space here", false},
		{"back\\slash", false},
		{"nul\x00byte", false},
		{"ünicode", false},
		{string(long), false},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			err := ValidateKey(tc.key)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidKey)
		})
	}
}

func TestValidPrefix(t *testing.T) {
	require.NoError(t, validPrefix(""))
	require.NoError(t, validPrefix("errata/"))
	require.NoError(t, validPrefix("a/b/"))
	for _, bad := range []string{"errata", "/errata/", "a//", "../"} {
		require.True(t, errors.Is(validPrefix(bad), ErrInvalidKey), bad)
	}
}
