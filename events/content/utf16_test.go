package content

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUTF16Length(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0, UTF16Length(""))
	require.Equal(t, 5, UTF16Length("hello"))
	require.Equal(t, 4, UTF16Length("café"))
	require.Equal(t, 3, UTF16Length("😀a"), "astral characters are two units")
	require.Equal(t, 2, UTF16Length("\xffa"), "an invalid byte counts as U+FFFD")
}

func TestUTF16OffsetConversions(t *testing.T) {
	t.Parallel()
	s := "a😀é b"
	// byte offsets: a=0, 😀=1..4, é=5..6, space=7, b=8; len 9
	// UTF-16 offsets: a=0, 😀=1..2, é=3, space=4, b=5; len 6
	pairs := [][2]int{{0, 0}, {1, 1}, {5, 3}, {7, 4}, {8, 5}, {9, 6}}
	for _, p := range pairs {
		u, err := ByteOffsetToUTF16(s, p[0])
		require.NoError(t, err)
		require.Equal(t, p[1], u, "byte %d", p[0])
		b, err := UTF16OffsetToByte(s, p[1])
		require.NoError(t, err)
		require.Equal(t, p[0], b, "unit %d", p[1])
	}

	_, err := UTF16OffsetToByte(s, 2)
	require.ErrorIs(t, err, ErrOffsetInsideCharacter, "between surrogate halves")
	_, err = UTF16OffsetToByte(s, 7)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	_, err = UTF16OffsetToByte(s, -1)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	_, err = ByteOffsetToUTF16(s, 2)
	require.ErrorIs(t, err, ErrOffsetInsideCharacter)
	_, err = ByteOffsetToUTF16(s, 10)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
	_, err = ByteOffsetToUTF16(s, -1)
	require.ErrorIs(t, err, ErrOffsetOutOfRange)
}
