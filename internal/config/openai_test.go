package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/config"
)

func TestOpenAIBaseURL(t *testing.T) {
	for _, tc := range []struct {
		name, value, want, err string
	}{
		{name: "default", want: "https://api.openai.com/v1"},
		{name: "blank is the default", value: "  ", want: "https://api.openai.com/v1"},
		{name: "local provider", value: "http://127.0.0.1:9999/v1", want: "http://127.0.0.1:9999/v1"},
		{name: "trailing slashes are dropped", value: "https://llm.internal/openai/v1//", want: "https://llm.internal/openai/v1"},
		{name: "not http", value: "ftp://llm.internal/v1", err: "OPENAI_BASE_URL"},
		{name: "no host", value: "https:///v1", err: "OPENAI_BASE_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{}
			if tc.value != "" {
				vars["OPENAI_BASE_URL"] = tc.value
			}
			c, err := config.Load(env(vars))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c.OpenAIBaseURL)
		})
	}
}

func TestOpenAIBaseURLCredentialsAreMasked(t *testing.T) {
	lines := strings.Join(config.Describe(env(map[string]string{
		"OPENAI_BASE_URL": "https://proxy-user:s3cr3t-proxy-pass@llm.internal/v1",
	})), "\n")
	require.NotContains(t, lines, "s3cr3t-proxy-pass")
	require.Contains(t, lines, "OPENAI_BASE_URL=https://proxy-user:xxxxx@llm.internal/v1 (env)")
	require.Contains(t, config.Describe(env(nil)), "OPENAI_BASE_URL=https://api.openai.com/v1 (default)")
}
