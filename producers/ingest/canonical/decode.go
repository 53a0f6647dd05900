package canonical

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// decodeJSON decodes a platform response body. Unknown fields are fine:
// the platforms add fields freely.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: body is not the expected JSON: %v", ErrBadResponse, err)
	}
	return nil
}

// quote renders a platform-supplied string for an error message: bounded,
// valid UTF-8, quoted, so a hostile or huge message cannot flood logs.
func quote(s string) string {
	const maxLen = 200
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// isDecimalID reports whether s is a positive decimal integer without
// leading zeros that fits the platforms' 64-bit ids.
func isDecimalID(s string) bool {
	if s == "" || len(s) > 19 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
