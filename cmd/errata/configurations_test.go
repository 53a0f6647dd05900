package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
)

// TestConfigurationAndExperimentCommands drives `errata configurations`,
// `errata experiments` and `errata reinvestigate --dry-run` against real
// Kafka and Postgres with `errata worker` running: every decision is
// printed once the serving projection shows it, and every refusal appends
// nothing.
func TestConfigurationAndExperimentCommands(t *testing.T) {
	t.Parallel()
	brokers, topics := testenv.Kafka(t, 3)
	dbURL := testenv.Postgres(t)
	env := []string{
		"ERRATA_KAFKA_BROKERS=" + strings.Join(brokers, ","),
		"ERRATA_KAFKA_TOPIC_PREFIX=" + topics.Prefix,
		"ERRATA_DATABASE_URL=" + dbURL,
		"ERRATA_WORKER_HTTP_ADDR=127.0.0.1:0",
		"ERRATA_KAFKA_SESSION_TIMEOUT=6s",
		"ERRATA_SERVER_VERIFICATION=false",
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
		"USER=tester",
	}
	_, stderr, err := runErrata(t, env, "migrate")
	require.NoError(t, err, stderr)
	_, stderr, err = runErrata(t, env, "topics")
	require.NoError(t, err, stderr)
	worker := startErrata(t, env, filepath.Join(t.TempDir(), "worker.log"), "worker", "--projectors=serving,audit", "--stages=")
	defer worker.stop(t)

	ok := func(args ...string) string {
		t.Helper()
		out, stderr, err := runErrata(t, env, args...)
		require.NoError(t, err, "errata %v: %s", args, stderr)
		require.NotContains(t, stderr, "warning:", "the decision is shown within --wait")
		return out
	}
	refused := func(want string, args ...string) {
		t.Helper()
		_, stderr, err := runErrata(t, env, args...)
		require.Error(t, err, "errata %v must fail", args)
		require.Contains(t, stderr, want)
	}

	out := ok("configurations", "declare", "--name", "mini", "--model", "gpt-5-mini", "--policy", "strict-v1",
		"--reason", "a cheaper model", "--wait", "60s")
	require.Contains(t, out, "mini")
	require.Contains(t, out, "tester@", "the operator defaults to $USER@hostname")
	require.Contains(t, ok("configurations", "declare", "--name", "mini", "--model", "gpt-5-mini", "--reason", "again"),
		"is declared already")

	refused(`name "mini" is taken`, "configurations", "declare", "--name", "mini", "--model", "gpt-5", "--reason", "r")
	refused("configuration name", "configurations", "declare", "--name", "Mini; rm -rf /", "--model", "m", "--reason", "r")
	refused("reason is required", "configurations", "declare", "--name", "other", "--model", "m")
	refused("control characters", "configurations", "declare", "--name", "other", "--model", "m", "--reason", "a\x1b[2Jb")
	refused("investigator-fresh@v9", "configurations", "declare", "--name", "other", "--model", "m", "--investigator-prompt", "v9", "--reason", "r")
	refused(`evidence policy "lax" is unknown`, "configurations", "declare", "--name", "other", "--model", "m", "--policy", "lax", "--reason", "r")
	refused("nothing to roll back to", "configurations", "rollback", "--reason", "r")
	refused(`"nope" is not declared`, "configurations", "promote", "nope", "--reason", "r")
	refused("no experiment is running", "experiments", "stop", "--reason", "r")

	list := ok("configurations", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	require.Len(t, lines, 3, list)
	require.Regexp(t, `^\*\s+default\s+0\s+\(default\)`, lines[1], "the default is active, rank 0")
	require.Regexp(t, `^\s+mini\s+-\s+[0-9a-f-]{36}\s+gpt-5-mini`, lines[2], "mini is declared, never promoted")

	out = ok("experiments", "start", "--name", "mini-test", "--candidate", "mini", "--share", "0.2", "--reason", "measure it")
	require.Regexp(t, `mini-test\s+running\s+default\s+mini\s+20%`, out)
	refused(`"mini-test" is running`, "experiments", "start", "--name", "second", "--candidate", "mini", "--share", "0.5", "--reason", "r")
	refused("--share must be above 0 and below 1", "experiments", "start", "--name", "x", "--candidate", "mini", "--share", "1", "--reason", "r")
	require.Contains(t, ok("configurations", "list"), `Experiment "mini-test" is running: 20% of new investigations`)
	out = ok("experiments", "stop", "--reason", "enough data")
	require.Regexp(t, `mini-test\s+stopped\s+default\s+mini\s+20%`, out)

	require.Equal(t, "Active configuration: mini ("+configID(t, list)+").\n", ok("configurations", "promote", "mini", "--reason", "better"))
	require.Equal(t, "Active configuration: default (the default configuration).\n", ok("configurations", "rollback", "--reason", "worse"))
	history := ok("configurations", "history")
	require.Regexp(t, `(?m)^1\s+\S+\s+promote\s+mini\s+default\s+tester@\S+\s+better$`, history)
	require.Regexp(t, `(?m)^2\s+\S+\s+rollback\s+default\s+mini\s+tester@\S+\s+worse$`, history)

	out = ok("reinvestigate", "--configuration", "mini", "--platform", "x", "--dry-run", "--budget", "5")
	require.Contains(t, out, "Dry run: 0 post versions match")
	require.Contains(t, out, "Budget: 5 per UTC day, 0 used today")
	require.Contains(t, out, "Estimated cost: unknown (no completed investigation")
	require.Contains(t, out, "Nothing was appended.")
	refused("select the versions", "reinvestigate", "--configuration", "mini")
	refused(`--platform "MASTODON" is not a platform`, "reinvestigate", "--configuration", "mini", "--platform", "mastodon")
	refused("not the default", "reinvestigate", "--configuration", "default", "--platform", "X")
	refused("--author \"../etc\" is not an id", "reinvestigate", "--configuration", "mini", "--author", "../etc")
}

// configID finds mini's id in a `configurations list` output.
func configID(t *testing.T, list string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && f[0] == "mini" {
			require.Len(t, f[2], 36)
			return f[2]
		}
	}
	t.Fatalf("mini not in %q", list)
	return events.DefaultConfigurationID
}
