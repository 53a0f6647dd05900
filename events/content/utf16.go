package content

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// The wire contract counts lengths and offsets (normalizedTextOffset, the
// 500,000-character limit) in UTF-16 code units, as JavaScript strings do. Go
// strings are UTF-8, so these helpers translate between the two.

// ErrOffsetOutOfRange reports an offset outside [0, length].
var ErrOffsetOutOfRange = errors.New("offset out of range")

// ErrOffsetInsideCharacter reports an offset that splits a character: a byte
// offset inside a UTF-8 sequence or a UTF-16 offset between the two halves of a
// surrogate pair.
var ErrOffsetInsideCharacter = errors.New("offset splits a character")

// utf16Units is the number of UTF-16 code units that encode r.
func utf16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// UTF16Length is JavaScript's s.length: the number of UTF-16 code units of s.
// Each invalid UTF-8 byte counts as one unit (it stands for U+FFFD).
func UTF16Length(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Units(r)
	}
	return n
}

// ByteOffsetToUTF16 converts a byte offset into s to the UTF-16 offset of the
// same position. The byte offset must lie on a character boundary.
func ByteOffsetToUTF16(s string, byteOffset int) (int, error) {
	if byteOffset < 0 || byteOffset > len(s) {
		return 0, fmt.Errorf("byte offset %d of %d bytes: %w", byteOffset, len(s), ErrOffsetOutOfRange)
	}
	if byteOffset < len(s) && !utf8.RuneStart(s[byteOffset]) {
		return 0, fmt.Errorf("byte offset %d: %w", byteOffset, ErrOffsetInsideCharacter)
	}
	units := 0
	for i, r := range s {
		if i >= byteOffset {
			break
		}
		units += utf16Units(r)
	}
	return units, nil
}

// UTF16OffsetToByte converts a UTF-16 offset into s (as found in
// normalizedTextOffset) to the byte offset of the same position, so Go code can
// slice the text. An offset between the halves of a surrogate pair is an error.
func UTF16OffsetToByte(s string, utf16Offset int) (int, error) {
	if utf16Offset < 0 {
		return 0, fmt.Errorf("UTF-16 offset %d: %w", utf16Offset, ErrOffsetOutOfRange)
	}
	units := 0
	for i, r := range s {
		if units == utf16Offset {
			return i, nil
		}
		units += utf16Units(r)
		if units > utf16Offset {
			return 0, fmt.Errorf("UTF-16 offset %d: %w", utf16Offset, ErrOffsetInsideCharacter)
		}
	}
	if units == utf16Offset {
		return len(s), nil
	}
	return 0, fmt.Errorf("UTF-16 offset %d of %d units: %w", utf16Offset, units, ErrOffsetOutOfRange)
}
