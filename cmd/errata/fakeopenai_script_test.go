package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// errata fake-openai --addr 127.0.0.1:0 --script FILE prints the URL it
// actually listens on first (launchers read it) and accepts the script's key
// only; a broken script stops it before it listens.
func TestFakeOpenAIScriptPrintsItsURL(t *testing.T) {
	t.Parallel()
	script := filepath.Join("..", "..", "extension", "test", "e2e", "fixtures", "fake-script.json")
	logPath := filepath.Join(t.TempDir(), "fake.jsonl")
	cmd := exec.Command(binary, "fake-openai", "--addr", "127.0.0.1:0", "--script", script, "--script-log", logPath)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no URL printed")
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/v1`).FindString(line)
	require.NotEmpty(t, url, line)
	require.NotContains(t, url, ":0/", "the chosen port, not the requested one")

	status := func(key string) int {
		req, err := http.NewRequest(http.MethodGet, url+"/models", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, status("sk-e2e-scripted-fake-key-0123456789"))
	require.Equal(t, http.StatusUnauthorized, status("sk-another-key-0123456789abcdef"))
	_, err = os.Stat(logPath)
	require.NoError(t, err, "the request log is created at start")

	broken := filepath.Join(t.TempDir(), "broken.json")
	require.NoError(t, os.WriteFile(broken, []byte(`{"rules":[{"name":"r","match":"m","claims":[{"text":"t"}]}]}`), 0o644))
	out, err := exec.Command(binary, "fake-openai", "--addr", "127.0.0.1:0", "--script", broken).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "context is empty")
}
