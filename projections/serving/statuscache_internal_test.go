package serving

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// SetBeforeStore runs hook between a miss's read and its store (tests).
func (c *StatusCache) SetBeforeStore(hook func(id string)) { c.beforeStore = hook }

// Listening tells whether the cache serves (tests).
func (c *StatusCache) Listening() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.listening
}

// Len is the number of cached statuses (tests).
func (c *StatusCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}

func TestStatusInvalidation(t *testing.T) {
	t.Parallel()
	many := make([]string, 300)
	for i := range many {
		many[i] = strings.Repeat("a", 35) + string(rune('a'+i%26)) + strings.Repeat("b", i/26)
	}
	for _, tc := range []struct {
		name   string
		posts  []string
		others bool
		want   string
	}{
		{"views only", nil, false, ""},
		{"registrations", []string{"p1", "p2", "p1"}, false, "p:p1,p2"},
		{"another event", []string{"p1"}, true, "*"},
		{"another event alone", nil, true, "*"},
		{"too many posts", many, false, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, statusInvalidation(tc.posts, tc.others))
		})
	}
}
