package websearch

import (
	"fmt"
	"strings"

	"github.com/errata-dev/errata/internal/logging"
)

// requireKey checks an API key is configured and header-safe.
func requireKey(provider string, key logging.Secret) error {
	k := key.Reveal()
	switch {
	case strings.TrimSpace(k) == "":
		return fmt.Errorf("%s search: an API key is required", provider)
	case strings.ContainsAny(k, "\r\n\x00") || k != strings.TrimSpace(k):
		return fmt.Errorf("%s search: the API key contains whitespace or control characters", provider)
	}
	return nil
}

// nonEmpty returns the non-empty strings of ss.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
