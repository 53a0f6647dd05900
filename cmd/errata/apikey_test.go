package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/producers/apikeys"
)

// runErrata runs the errata binary to completion with env and returns its
// stdout and stderr separately.
func runErrata(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// instanceKeyAccepted asks the running API's validateSettings about key.
func instanceKeyAccepted(t *testing.T, base, key string) bool {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+"/trpc/post.validateSettings", http.NoBody)
	require.NoError(t, err)
	req.Header.Set("x-openerrata-extension-version", "0.3.3")
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", body)
	var out struct {
		Result struct {
			Data map[string]any `json:"data"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &out), "body: %s", body)
	require.Equal(t, "missing", out.Result.Data["openaiApiKeyStatus"])
	require.Len(t, out.Result.Data, 2, "body: %s", body)
	return out.Result.Data["instanceApiKeyAccepted"].(bool)
}

var generatedKey = regexp.MustCompile(`^erk_[A-Za-z0-9_-]{43}\n$`)

// TestAPIKeyCommands drives `errata apikey add|list|revoke` against real
// Kafka and Postgres with `errata worker` and `errata serve` running as
// separate processes, and checks every change through the API.
func TestAPIKeyCommands(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 3)
	dbURL := testenv.Postgres(t)
	httpAddr := freeAddr(t)
	env := []string{
		"ERRATA_KAFKA_BROKERS=" + strings.Join(brokers, ","),
		"ERRATA_KAFKA_TOPIC_PREFIX=" + topics.Prefix,
		"ERRATA_DATABASE_URL=" + dbURL,
		"ERRATA_HTTP_ADDR=" + httpAddr,
		"ERRATA_WORKER_HTTP_ADDR=127.0.0.1:0",
		"ERRATA_KAFKA_SESSION_TIMEOUT=6s",
		"ERRATA_LOG_LEVEL=info",
		"ERRATA_SERVER_VERIFICATION=false", // no platform is reachable from tests
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
	}
	_, stderr, err := runErrata(t, env, "migrate")
	require.NoError(t, err, stderr)

	stdout, stderr, err := runErrata(t, env, "apikey", "list")
	require.NoError(t, err, stderr)
	require.Equal(t, "No instance API keys. Create one with `errata apikey add --label LABEL`.\n", stdout)

	// Without a worker, the key is created and printed, with a warning.
	early, stderr, err := runErrata(t, env, "apikey", "add", "--label", "before the worker", "--wait", "500ms")
	require.NoError(t, err, stderr)
	require.Regexp(t, generatedKey, early)
	earlyKey := strings.TrimSpace(early)
	earlyID := apikeys.KeyID(earlyKey)
	require.Equal(t, fmt.Sprintf("Added instance API key %s (label \"before the worker\").\n", earlyID)+
		"The key above is shown only this once and cannot be shown again: only its sha256 is stored. "+
		"Store it safely and enter it in the extension's settings.\n"+
		"warning: the serving projection did not apply the change within 500ms (is `errata worker` running?); "+
		"it takes effect as soon as the worker catches up.\n", stderr)

	logDir := t.TempDir()
	worker := startErrata(t, env, filepath.Join(logDir, "worker.log"), "worker", "--stages=")
	defer worker.stop(t)
	api := startErrata(t, env, filepath.Join(logDir, "serve.log"), "serve")
	defer api.stop(t)
	base := "http://" + httpAddr
	testenv.Eventually(t, 20*time.Second, func() (bool, string) {
		resp, err := http.Get(base + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	testenv.Eventually(t, 30*time.Second, func() (bool, string) {
		return instanceKeyAccepted(t, base, earlyKey), "the early key is applied once the worker runs"
	})

	// With the worker running, the key works as soon as add returns.
	out, stderr, err := runErrata(t, env, "apikey", "add", "--label", "ci runner")
	require.NoError(t, err, stderr)
	require.Regexp(t, generatedKey, out)
	key := strings.TrimSpace(out)
	keyID := apikeys.KeyID(key)
	require.Equal(t, events.APIKeyID(apikeys.Hash(key)), keyID)
	require.True(t, strings.HasSuffix(stderr, "Store it safely and enter it in the extension's settings.\nThe key is active.\n"), stderr)
	require.True(t, instanceKeyAccepted(t, base, key))
	require.False(t, instanceKeyAccepted(t, base, key+"0"))

	// list: ids and labels, never key material.
	out, stderr, err = runErrata(t, env, "apikey", "list")
	require.NoError(t, err, stderr)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	require.Regexp(t, `^KEY ID\s+LABEL\s+CREATED\s+REVOKED\s+REASON$`, lines[0])
	require.Regexp(t, `^`+earlyID+`\s+before the worker\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+-\s+-$`, lines[1])
	require.Regexp(t, `^`+keyID+`\s+ci runner\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+-\s+-$`, lines[2])

	// revoke by the key itself; the output never repeats it.
	out, stderr, err = runErrata(t, env, "apikey", "revoke", key, "--reason", "rotated")
	require.NoError(t, err, stderr)
	require.Equal(t, fmt.Sprintf("Revoked instance API key %s.\nThe key no longer authenticates.\n", keyID), out)
	require.False(t, instanceKeyAccepted(t, base, key))
	require.True(t, instanceKeyAccepted(t, base, earlyKey))

	out, stderr, err = runErrata(t, env, "apikey", "revoke", keyID)
	require.NoError(t, err, stderr)
	require.Regexp(t, `^Instance API key `+keyID+` \(label "ci runner"\) was already revoked at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.\n$`, out)

	out, stderr, err = runErrata(t, env, "apikey", "list", "--json")
	require.NoError(t, err, stderr)
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 2)
	require.Equal(t, earlyID, listed[0]["keyId"])
	require.NotContains(t, listed[0], "revokedAt")
	require.Equal(t, keyID, listed[1]["keyId"])
	require.Equal(t, "ci runner", listed[1]["label"])
	require.Equal(t, "rotated", listed[1]["revokeReason"])
	require.Contains(t, listed[1], "revokedAt")
	for _, k := range listed {
		require.ElementsMatch(t, []string{"keyId", "label", "createdAt", "revokedAt", "revokeReason"}[:len(k)], keysOf(k))
	}

	// Mistakes fail without appending anything and never echo a key.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"apikey", "add"}, `required flag(s) "label" not set`},
		{[]string{"apikey", "add", "--label", "  "}, "label is required"},
		{[]string{"apikey", "revoke"}, "accepts 1 arg(s), received 0"},
		{[]string{"apikey", "revoke", "00000000-0000-5000-8000-000000000000"},
			"no instance API key with id 00000000-0000-5000-8000-000000000000 (see `errata apikey list`; --force revokes anyway)"},
		{[]string{"apikey", "revoke", "erk_not-a-real-key-but-secret"},
			"no instance API key matches the given key (see `errata apikey list`; --force revokes anyway)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, stderr, err := runErrata(t, env, tc.args...)
			require.Error(t, err)
			require.Empty(t, out)
			require.Equal(t, "errata: "+tc.msg+"\n", stderr)
			require.NotContains(t, stderr, "erk_not-a-real-key-but-secret")
		})
	}
	out, _, err = runErrata(t, env, "apikey", "list", "--json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), &listed))
	require.Len(t, listed, 2)

	// Nothing the processes logged contains a key or its hash.
	for _, name := range []string{"worker.log", "serve.log"} {
		logs, err := os.ReadFile(filepath.Join(logDir, name))
		require.NoError(t, err)
		for _, secret := range []string{key, earlyKey, apikeys.Hash(key), apikeys.Hash(earlyKey)} {
			require.NotContains(t, string(logs), secret, name)
		}
	}
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
