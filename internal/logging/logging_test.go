package logging_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
)

func TestSecretNeverPrints(t *testing.T) {
	s := logging.Secret("sk-live-123456")
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "info")
	require.NoError(t, err)
	log.Info("x", "key", s, "nested", map[string]any{"k": s})
	out := buf.String() + fmt.Sprintf("%v %s %#v %+v", s, s, s, s)
	j, err := json.Marshal(struct{ K logging.Secret }{s})
	require.NoError(t, err)
	out += string(j)
	require.NotContains(t, out, "sk-live")
	require.Equal(t, "sk-live-123456", s.Reveal())
}

func TestNewRejectsBadSettings(t *testing.T) {
	_, err := logging.New(&bytes.Buffer{}, "xml", "info")
	require.Error(t, err)
	_, err = logging.New(&bytes.Buffer{}, "text", "chatty")
	require.Error(t, err)
}
