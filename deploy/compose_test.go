package deploy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
)

const (
	composeFile    = "../docker-compose.yml"
	dockerfilePath = "Dockerfile" // deploy/Dockerfile, relative to this package
	errataImage    = "errata:local"
	errataBinary   = "/usr/local/bin/errata"
)

var (
	infraServices    = []string{"kafka", "postgres", "elasticsearch", "clickhouse"}
	errataServices   = []string{"migrate", "topics", "api", "worker"}
	oneShotServices  = []string{"migrate", "topics"}
	longRunning      = []string{"kafka", "postgres", "elasticsearch", "clickhouse", "api", "worker"}
	errataLongRunner = []string{"api", "worker"}
)

// loadProject loads ../docker-compose.yml the way `docker compose` would, with
// schema validation and consistency checks on, an explicit project name, and
// an empty interpolation environment (no OS env, no .env file), so every
// ${VAR:-default} falls back to its default.
func loadProject(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(
		[]string{composeFile},
		cli.WithName("errata-compose-test"),
		cli.WithWorkingDirectory(".."),
		cli.WithResolvedPaths(true),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
	)
	require.NoError(t, err)
	require.Empty(t, opts.Environment, "the test must interpolate with an empty environment")

	project, err := opts.LoadProject(context.Background())
	require.NoError(t, err, "docker-compose.yml must load and validate")
	return project
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	svc, ok := p.Services[name]
	require.Truef(t, ok, "service %q missing", name)
	return svc
}

// splitImage splits "registry/repo:tag" into repository and tag.
func splitImage(ref string) (repo, tag string) {
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		return ref[:colon], ref[colon+1:]
	}
	return ref, ""
}

func env(t *testing.T, svc types.ServiceConfig, key string) string {
	t.Helper()
	v, ok := svc.Environment[key]
	require.Truef(t, ok, "%s: environment %s not set", svc.Name, key)
	require.NotNilf(t, v, "%s: environment %s has no value", svc.Name, key)
	return *v
}

func TestComposeLoadsAndValidates(t *testing.T) {
	p := loadProject(t)
	require.Equal(t, "errata-compose-test", p.Name, "explicit project name wins over name: in the file")

	want := slices.Concat(infraServices, errataServices)
	got := p.ServiceNames()
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got)
}

func TestComposeModelHasNoVersionKeyAndUsesExtensions(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithName("errata-compose-test"), cli.WithWorkingDirectory(".."))
	require.NoError(t, err)
	model, err := opts.LoadModel(context.Background())
	require.NoError(t, err)
	require.NotContains(t, model, "version", "the Compose Specification has no version: key")

	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	require.Regexp(t, `(?m)^x-errata-env: &errata-env$`, string(raw), "shared env lives in an x-errata-env anchor")
	require.NotRegexp(t, `(?m)^version:`, string(raw))
}

func TestComposeImages(t *testing.T) {
	p := loadProject(t)

	for _, svc := range p.Services {
		require.NotContainsf(t, strings.ToLower(svc.Image), "bitnami", "%s: no Bitnami images", svc.Name)
	}

	tests := []struct {
		service string
		repo    string
		tag     *regexp.Regexp
	}{
		{"kafka", "apache/kafka", regexp.MustCompile(`^4\.\d+\.\d+$`)},
		{"postgres", "postgres", regexp.MustCompile(`^17(\.\d+)?$`)},
		{"elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch", regexp.MustCompile(`^8\.19\.\d+$`)},
		{"clickhouse", "clickhouse/clickhouse-server", regexp.MustCompile(`^2[56]\.\d+(\.\d+)*$`)},
		{"migrate", "errata", regexp.MustCompile(`^local$`)},
		{"topics", "errata", regexp.MustCompile(`^local$`)},
		{"api", "errata", regexp.MustCompile(`^local$`)},
		{"worker", "errata", regexp.MustCompile(`^local$`)},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			repo, tag := splitImage(service(t, p, tt.service).Image)
			require.Equal(t, tt.repo, repo)
			require.Regexp(t, tt.tag, tag, "tag must be pinned, never latest")
		})
	}
}

func TestComposeHealthChecks(t *testing.T) {
	p := loadProject(t)

	tests := []struct {
		service string
		test    []string // the check's command must start with these words
	}{
		{"kafka", []string{"CMD", "/opt/kafka/bin/kafka-broker-api-versions.sh", "--bootstrap-server", "localhost:9092"}},
		{"postgres", []string{"CMD", "pg_isready"}},
		{"elasticsearch", []string{"CMD", "curl", "--fail"}},
		{"clickhouse", []string{"CMD", "clickhouse-client"}},
		{"api", []string{"CMD", errataBinary, "healthcheck", "--url", "http://127.0.0.1:8080/health"}},
		{"worker", []string{"CMD", errataBinary, "healthcheck", "--url", "http://127.0.0.1:8080/health"}},
	}
	var covered []string
	for _, tt := range tests {
		covered = append(covered, tt.service)
		t.Run(tt.service, func(t *testing.T) {
			hc := service(t, p, tt.service).HealthCheck
			require.NotNil(t, hc, "long-running services need a health check")
			require.False(t, hc.Disable)
			require.GreaterOrEqual(t, len(hc.Test), len(tt.test))
			require.Equal(t, tt.test, []string(hc.Test[:len(tt.test)]))
			require.NotNil(t, hc.Interval)
			require.NotNil(t, hc.Timeout)
			require.NotNil(t, hc.Retries)
		})
	}
	slices.Sort(covered)
	want := slices.Clone(longRunning)
	slices.Sort(want)
	require.Equal(t, want, covered, "every long-running service has its health check tested")
}

func TestComposePortsBindLoopbackOnly(t *testing.T) {
	p := loadProject(t)

	for _, svc := range p.Services {
		for _, port := range svc.Ports {
			require.Equalf(t, "127.0.0.1", port.HostIP,
				"%s: published port %s->%d must bind 127.0.0.1", svc.Name, port.Published, port.Target)
		}
	}

	tests := []struct {
		service string
		// ports are "published:target" pairs.
		ports []string
	}{
		{"kafka", []string{"19092:19092"}},
		{"postgres", []string{"15432:5432"}},
		{"elasticsearch", []string{"19200:9200"}},
		{"clickhouse", []string{"18123:8123"}},
		// The API, and its /metrics on a port of its own.
		{"api", []string{"8080:8080", "9090:9090"}},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			var got []string
			for _, port := range service(t, p, tt.service).Ports {
				got = append(got, fmt.Sprintf("%s:%d", port.Published, port.Target))
			}
			require.Equal(t, tt.ports, got)
		})
	}
	require.Equal(t, "0.0.0.0:9090", env(t, service(t, p, "api"), "ERRATA_API_METRICS_ADDR"))
	require.NotContains(t, service(t, p, "worker").Environment, "ERRATA_API_METRICS_ADDR", "the worker's /metrics is on its health port")
	for _, name := range []string{"migrate", "topics", "worker"} {
		require.Emptyf(t, service(t, p, name).Ports, "%s publishes no port", name)
	}
}

func TestComposeDependencies(t *testing.T) {
	p := loadProject(t)

	tests := []struct {
		service string
		needs   map[string]string // dependency -> condition
	}{
		{"migrate", map[string]string{"postgres": types.ServiceConditionHealthy}},
		{"topics", map[string]string{"kafka": types.ServiceConditionHealthy}},
		{"api", map[string]string{
			"migrate":       types.ServiceConditionCompletedSuccessfully,
			"topics":        types.ServiceConditionCompletedSuccessfully,
			"kafka":         types.ServiceConditionHealthy,
			"postgres":      types.ServiceConditionHealthy,
			"elasticsearch": types.ServiceConditionHealthy,
			"clickhouse":    types.ServiceConditionHealthy,
		}},
		{"worker", map[string]string{
			"migrate":       types.ServiceConditionCompletedSuccessfully,
			"topics":        types.ServiceConditionCompletedSuccessfully,
			"kafka":         types.ServiceConditionHealthy,
			"postgres":      types.ServiceConditionHealthy,
			"elasticsearch": types.ServiceConditionHealthy,
			"clickhouse":    types.ServiceConditionHealthy,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			deps := service(t, p, tt.service).DependsOn
			for dep, cond := range tt.needs {
				d, ok := deps[dep]
				require.Truef(t, ok, "%s must depend on %s", tt.service, dep)
				require.Equalf(t, cond, d.Condition, "%s -> %s", tt.service, dep)
				require.Truef(t, d.Required, "%s -> %s must be required", tt.service, dep)
			}
		})
	}
}

func TestComposeErrataServices(t *testing.T) {
	p := loadProject(t)
	repoRoot, err := filepath.Abs("..")
	require.NoError(t, err)

	// Exactly one service builds errata:local; the rest reuse that image.
	var builders []string
	for _, name := range errataServices {
		svc := service(t, p, name)
		require.Equalf(t, errataImage, svc.Image, "%s uses the shared image", name)
		if svc.Build != nil {
			builders = append(builders, name)
			require.Equal(t, repoRoot, svc.Build.Context, "build context is the repository root")
			require.Equal(t, "deploy/Dockerfile", filepath.ToSlash(svc.Build.Dockerfile))
		}
	}
	require.Len(t, builders, 1, "one build: shared through image: errata:local")
	for _, svc := range p.Services {
		if svc.Build != nil {
			require.Containsf(t, errataServices, svc.Name, "only Errata services are built locally")
		}
	}

	commands := map[string][]string{
		"migrate": {"migrate"},
		"topics":  {"topics"},
		"api":     {"serve"},
		"worker":  {"worker"},
	}
	for name, cmd := range commands {
		require.Equalf(t, cmd, []string(service(t, p, name).Command), "%s command", name)
	}

	for _, name := range oneShotServices {
		svc := service(t, p, name)
		require.Containsf(t, []string{"", types.RestartPolicyNo}, svc.Restart, "%s is one-shot", name)
		require.Nilf(t, svc.HealthCheck, "%s is one-shot and needs no health check", name)
	}
	for _, name := range errataLongRunner {
		require.Equalf(t, types.RestartPolicyUnlessStopped, service(t, p, name).Restart, "%s restart policy", name)
	}

	// Shared environment, resolved with an empty host environment.
	wantEnv := map[string]string{
		"ERRATA_KAFKA_BROKERS":     "kafka:9092",
		"ERRATA_DATABASE_URL":      "postgres://errata:errata@postgres:5432/errata?sslmode=disable",
		"ERRATA_ELASTICSEARCH_URL": "http://elasticsearch:9200",
		"ERRATA_HTTP_ADDR":         "0.0.0.0:8080",
		"ERRATA_LOG_FORMAT":        "json",
		"ERRATA_EVIDENCE_POLICY":   evidence.DefaultPolicy().Name(),
		"OPENAI_API_KEY":           "",
		"OPENAI_BASE_URL":          "",
	}
	for _, name := range errataServices {
		svc := service(t, p, name)
		for k, v := range wantEnv {
			require.Equalf(t, v, env(t, svc, k), "%s: %s", name, k)
		}
		ch := env(t, svc, "ERRATA_CLICKHOUSE_URL")
		require.True(t, strings.HasPrefix(ch, "http://"), ch)
		require.True(t, strings.HasSuffix(ch, "@clickhouse:8123") || strings.HasSuffix(ch, "//clickhouse:8123"), ch)
	}
}

func TestComposeOpenAIPassThrough(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithName("errata-compose-test"),
		cli.WithWorkingDirectory(".."),
		cli.WithEnv([]string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=http://127.0.0.1:9999/v1"}),
	)
	require.NoError(t, err)
	p, err := opts.LoadProject(context.Background())
	require.NoError(t, err)
	for _, name := range errataServices {
		svc := service(t, p, name)
		require.Equal(t, "sk-test", env(t, svc, "OPENAI_API_KEY"))
		require.Equal(t, "http://127.0.0.1:9999/v1", env(t, svc, "OPENAI_BASE_URL"))
	}
}

// TestComposeEvidencePolicy: the policy passes through from the host, as a
// name consumers/evidence knows.
func TestComposeEvidencePolicy(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithName("errata-compose-test"),
		cli.WithWorkingDirectory(".."),
		cli.WithEnv([]string{"ERRATA_EVIDENCE_POLICY=validator-only-v1"}),
	)
	require.NoError(t, err)
	p, err := opts.LoadProject(context.Background())
	require.NoError(t, err)
	for _, name := range errataServices {
		policy := env(t, service(t, p, name), "ERRATA_EVIDENCE_POLICY")
		require.Equal(t, "validator-only-v1", policy, name)
		_, err := evidence.PolicyByName(policy)
		require.NoError(t, err)
	}
}

// TestComposeSettingsExist checks every ERRATA_*/OPENAI_* name written in
// docker-compose.yml, comments included, against internal/config.
func TestComposeSettingsExist(t *testing.T) {
	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	vars := configVarNames()
	names := regexp.MustCompile(`\b(?:ERRATA|OPENAI)_[A-Z0-9_]*[A-Z0-9]\b`).FindAllString(string(raw), -1)
	require.Contains(t, names, "ERRATA_SOURCE_REGISTRY", "the user source registry is documented")
	for _, n := range names {
		require.Contains(t, vars, n, "docker-compose.yml names %s, which internal/config does not know", n)
	}
}

func TestComposeInfrastructureSettings(t *testing.T) {
	p := loadProject(t)

	tests := []struct {
		service string
		env     map[string]string
	}{
		{"kafka", map[string]string{
			"KAFKA_NODE_ID":                                  "1",
			"KAFKA_PROCESS_ROLES":                            "broker,controller",
			"KAFKA_CONTROLLER_QUORUM_VOTERS":                 "1@kafka:9093",
			"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
			"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "1",
			"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
			"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "1",
			"KAFKA_AUTO_CREATE_TOPICS_ENABLE":                "false",
			"KAFKA_LOG_RETENTION_MS":                         "-1",
			"KAFKA_MESSAGE_MAX_BYTES":                        "16777216",
			"KAFKA_REPLICA_FETCH_MAX_BYTES":                  "16777216",
		}},
		{"postgres", map[string]string{
			"POSTGRES_USER":     "errata",
			"POSTGRES_PASSWORD": "errata",
			"POSTGRES_DB":       "errata",
		}},
		{"elasticsearch", map[string]string{
			"discovery.type":         "single-node",
			"xpack.security.enabled": "false",
			"ES_JAVA_OPTS":           "-Xms512m -Xmx512m",
			"cluster.routing.allocation.disk.threshold_enabled": "false",
		}},
		{"clickhouse", map[string]string{
			"CLICKHOUSE_USER":     "errata",
			"CLICKHOUSE_PASSWORD": "errata",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.service, func(t *testing.T) {
			svc := service(t, p, tt.service)
			for k, v := range tt.env {
				require.Equalf(t, v, env(t, svc, k), "%s", k)
			}
			require.Equal(t, types.RestartPolicyUnlessStopped, svc.Restart)

			// Data lives in a named volume declared at the top level.
			var named []string
			for _, v := range svc.Volumes {
				if v.Type == types.VolumeTypeVolume {
					named = append(named, v.Source)
					require.Containsf(t, p.Volumes, v.Source, "volume %q is declared", v.Source)
				}
			}
			require.NotEmpty(t, named, "%s keeps its data in a named volume", tt.service)
		})
	}

	// Kafka: containers use kafka:9092, host tools localhost:19092.
	kafka := service(t, p, "kafka")
	advertised := strings.Split(env(t, kafka, "KAFKA_ADVERTISED_LISTENERS"), ",")
	require.Contains(t, advertised, "INTERNAL://kafka:9092")
	require.Contains(t, advertised, "EXTERNAL://localhost:19092")
	listeners := env(t, kafka, "KAFKA_LISTENERS")
	require.Contains(t, listeners, "EXTERNAL://:19092")
	require.Contains(t, listeners, "CONTROLLER://:9093")
	require.Regexp(t, `^[A-Za-z0-9_-]{22}$`, env(t, kafka, "CLUSTER_ID"), "KRaft cluster id is a base64url UUID")
}

// dockerfileLines returns the instructions of a Dockerfile, with comments and
// blank lines dropped and backslash continuations joined.
func dockerfileLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()

	var (
		lines []string
		cur   strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(strings.TrimSpace(cont) + " ")
			continue
		}
		cur.WriteString(line)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	require.NoError(t, sc.Err())
	require.Zero(t, cur.Len(), "dangling line continuation")
	return lines
}

func instr(line string) (keyword, rest string) {
	kw, rest, _ := strings.Cut(line, " ")
	return strings.ToUpper(kw), strings.TrimSpace(rest)
}

func TestDockerfile(t *testing.T) {
	lines := dockerfileLines(t, dockerfilePath)

	type stage struct{ from, name string }
	var (
		stages        []stage
		finalUser     string
		sawModCopy    bool
		sawDownload   bool
		sawSourceCopy bool
		buildLine     string
		envLines      []string
		entrypoint    string
	)
	for _, line := range lines {
		kw, rest := instr(line)
		switch kw {
		case "FROM":
			fields := strings.Fields(rest)
			fields = slices.DeleteFunc(fields, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := stage{from: fields[0]}
			if len(fields) >= 3 && strings.EqualFold(fields[1], "AS") {
				st.name = fields[2]
			}
			stages = append(stages, st)
			finalUser = "" // USER is per stage
		case "USER":
			finalUser = rest
		case "ENV":
			envLines = append(envLines, rest)
		case "COPY":
			switch {
			case strings.Contains(rest, "go.mod") && strings.Contains(rest, "go.sum") && !sawSourceCopy:
				sawModCopy = true
			case strings.HasPrefix(rest, ". "):
				require.True(t, sawDownload, "go mod download runs before the sources are copied")
				sawSourceCopy = true
			}
		case "RUN":
			if strings.Contains(rest, "go mod download") {
				require.True(t, sawModCopy, "go.mod/go.sum are copied before go mod download")
				require.False(t, sawSourceCopy, "the module layer must not depend on the sources")
				sawDownload = true
			}
			if strings.Contains(rest, "go build") {
				buildLine = rest
			}
		case "ENTRYPOINT":
			entrypoint = rest
		}
	}

	require.GreaterOrEqual(t, len(stages), 2, "multi-stage build")
	require.True(t, strings.HasPrefix(stages[0].from, "golang:"), "builder is the official golang image: %s", stages[0].from)
	require.NotEmpty(t, stages[0].name, "builder stage is named")
	final := stages[len(stages)-1]
	require.True(t,
		strings.HasPrefix(final.from, "gcr.io/distroless/static") || strings.HasPrefix(final.from, "debian:"),
		"runtime image: %s", final.from)

	require.True(t, sawModCopy && sawDownload && sawSourceCopy, "cached module-download layer")
	require.NotEmpty(t, buildLine, "a RUN builds the binary")
	require.Contains(t, buildLine, "./cmd/errata")
	require.Contains(t, buildLine, "-trimpath")
	require.Contains(t, buildLine, "-s -w")
	require.Contains(t, buildLine, "-o /out/errata")
	require.True(t, strings.Contains(buildLine, "CGO_ENABLED=0") ||
		slices.ContainsFunc(envLines, func(s string) bool { return strings.Contains(s, "CGO_ENABLED=0") }),
		"static build with CGO_ENABLED=0")

	require.Equal(t, `["`+errataBinary+`"]`, entrypoint)

	// Non-root: an explicit USER in the final stage that is not root.
	require.NotEmpty(t, finalUser, "final stage sets USER")
	user, _, _ := strings.Cut(finalUser, ":")
	require.NotContains(t, []string{"root", "0"}, user, "final stage runs as non-root")
}

func TestDockerfileGoVersionMatchesGoMod(t *testing.T) {
	goMod, err := os.ReadFile("../go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	require.NotNil(t, m, "go directive in go.mod")

	df, err := os.ReadFile(dockerfilePath)
	require.NoError(t, err)
	a := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(df)
	require.NotNil(t, a, "Dockerfile pins ARG GO_VERSION")
	require.True(t, strings.HasPrefix(string(a[1]), string(m[1])),
		"builder Go %s must match go.mod's go %s", a[1], m[1])
}

func TestDockerignore(t *testing.T) {
	raw, err := os.ReadFile("../.dockerignore")
	require.NoError(t, err)
	var patterns []string
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	require.Contains(t, patterns, ".git")
	require.Contains(t, patterns, ".env")
	for _, p := range patterns {
		require.NotContainsf(t, []string{"*", "**", "go.mod", "go.sum", "cmd", "cmd/", "internal", "internal/"}, p,
			"pattern %q would drop what the build needs", p)
	}
}
