package deploy

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/projections/metrics"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

var updateHelm = flag.Bool("update-helm", false, "rewrite the rendered chart goldens under helm/testdata/")

const (
	chartDir       = "helm/errata"
	prodValues     = "helm/testdata/values-prod.yaml"
	helmRelease    = "rel"
	helmNamespace  = "errata"
	installHelmSh  = "helm/install-helm.sh"
	defaultImage   = "ghcr.io/errata-dev/errata:0.1.0"
	prodImage      = "registry.example.internal/errata:1.2.3"
	migrationsHook = "pre-install,pre-upgrade"
)

// helmBinary installs helm (built from the Go module proxy) if missing and
// returns its path.
func helmBinary(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("sh", installHelmSh).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("install helm: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	path := strings.TrimSpace(string(out))
	require.FileExists(t, path)
	return path
}

func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// k8s types: only the fields the assertions read.
type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []envVar `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe   *probe         `yaml:"livenessProbe"`
	ReadinessProbe  *probe         `yaml:"readinessProbe"`
	SecurityContext map[string]any `yaml:"securityContext"`
}

type podSpec struct {
	ServiceAccountName string         `yaml:"serviceAccountName"`
	RestartPolicy      string         `yaml:"restartPolicy"`
	SecurityContext    map[string]any `yaml:"securityContext"`
	InitContainers     []container    `yaml:"initContainers"`
	Containers         []container    `yaml:"containers"`
}

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		Schedule    string `yaml:"schedule"`
		JobTemplate struct {
			Spec struct {
				Template struct {
					Spec podSpec `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
		Ports []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// pod is the pod spec of a workload.
func (o object) pod() podSpec {
	if o.Kind == "CronJob" {
		return o.Spec.JobTemplate.Spec.Template.Spec
	}
	return o.Spec.Template.Spec
}

// render runs helm template with the value files and decodes every object,
// keyed by kind/name.
func render(t *testing.T, valueFiles ...string) (map[string]object, string) {
	t.Helper()
	args := []string{"template", helmRelease, chartDir, "--namespace", helmNamespace}
	for _, f := range valueFiles {
		args = append(args, "--values", f)
	}
	out, err := runHelm(t, args...)
	require.NoError(t, err, out)
	objs := map[string]object{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if o.Kind == "" {
			continue
		}
		key := o.Kind + "/" + o.Metadata.Name
		require.NotContains(t, objs, key, "duplicate object")
		objs[key] = o
	}
	return objs, out
}

func keys(objs map[string]object) []string {
	out := make([]string, 0, len(objs))
	for k := range objs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func envOf(c container) map[string]envVar {
	out := map[string]envVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

func configVarNames() map[string]config.Var {
	out := map[string]config.Var{}
	for _, v := range config.Vars {
		out[v.Name] = v
	}
	return out
}

// plainSecretURLs are settings marked secret because they may carry
// credentials, which the chart also accepts as plain URLs without any.
var plainSecretURLs = []string{"ERRATA_ELASTICSEARCH_URL", "ERRATA_CLICKHOUSE_URL", "OPENAI_BASE_URL"}

// checkWorkloads asserts what every rendering must satisfy.
func checkWorkloads(t *testing.T, objs map[string]object, image string) {
	t.Helper()
	vars := configVarNames()
	for key, o := range objs {
		require.NotEqual(t, "StatefulSet", o.Kind, "no bundled databases: %s", key)
		require.NotEqual(t, "PersistentVolumeClaim", o.Kind, "no bundled databases: %s", key)
		switch o.Kind {
		case "Deployment", "Job", "CronJob":
		default:
			continue
		}
		pod := o.pod()
		require.Equal(t, true, pod.SecurityContext["runAsNonRoot"], key)
		require.EqualValues(t, 65532, pod.SecurityContext["runAsUser"], key)
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			where := key + " " + c.Name
			require.Equal(t, image, c.Image, "%s: only the Errata image runs", where)
			require.Equal(t, true, c.SecurityContext["readOnlyRootFilesystem"], where)
			require.Equal(t, false, c.SecurityContext["allowPrivilegeEscalation"], where)
			env := envOf(c)
			require.Len(t, env, len(c.Env), "%s: no variable twice", where)
			for name, e := range env {
				v, ok := vars[name]
				require.True(t, ok, "%s: %s is not a setting of internal/config", where, name)
				if v.Secret && !slices.Contains(plainSecretURLs, name) {
					require.NotNil(t, e.ValueFrom, "%s: secret %s must come from a Secret", where, name)
					require.NotNil(t, e.ValueFrom.SecretKeyRef, "%s: secret %s must come from a Secret", where, name)
				}
			}
			for _, name := range []string{"ERRATA_DATABASE_URL", "ERRATA_HASH_SECRET"} {
				require.Contains(t, env, name, where)
				require.NotNil(t, env[name].ValueFrom, where)
			}
			require.Equal(t, "json", env["ERRATA_LOG_FORMAT"].Value, "%s: production logs are JSON", where)
		}
	}
}

func TestHelmLint(t *testing.T) {
	for _, values := range [][]string{nil, {prodValues}} {
		args := []string{"lint", "--strict", chartDir}
		for _, v := range values {
			args = append(args, "--values", v)
		}
		out, err := runHelm(t, args...)
		require.NoError(t, err, out)
		require.Contains(t, out, "0 chart(s) failed")
	}
}

func TestHelmTemplateDefaults(t *testing.T) {
	objs, out := render(t)
	checkGolden(t, "helm/testdata/default.golden.yaml", out)
	require.Equal(t, []string{
		"CronJob/rel-errata-selector",
		"Deployment/rel-errata-api",
		"Deployment/rel-errata-worker-investigations",
		"Deployment/rel-errata-worker-projectors",
		"Job/rel-errata-migrate",
		"Service/rel-errata-api",
		"ServiceAccount/rel-errata",
	}, keys(objs))
	checkWorkloads(t, objs, defaultImage)

	api := objs["Deployment/rel-errata-api"]
	require.Equal(t, 2, *api.Spec.Replicas)
	c := api.pod().Containers[0]
	require.Equal(t, []string{"serve"}, c.Args)
	require.Len(t, c.Ports, 2)
	require.Equal(t, "http", c.Ports[0].Name)
	require.Equal(t, 8080, c.Ports[0].ContainerPort)
	require.Equal(t, "metrics", c.Ports[1].Name, "/metrics has its own port")
	require.Equal(t, 9090, c.Ports[1].ContainerPort)
	require.Equal(t, "/livez", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port)
	env := envOf(c)
	require.Equal(t, "0.0.0.0:8080", env["ERRATA_HTTP_ADDR"].Value)
	require.Equal(t, "0.0.0.0:9090", env["ERRATA_API_METRICS_ADDR"].Value)
	require.Equal(t, "kafka:9092", env["ERRATA_KAFKA_BROKERS"].Value)
	require.Equal(t, "errata-postgres", env["ERRATA_DATABASE_URL"].ValueFrom.SecretKeyRef.Name)
	require.Equal(t, "url", env["ERRATA_DATABASE_URL"].ValueFrom.SecretKeyRef.Key)
	require.Equal(t, "errata", env["ERRATA_HASH_SECRET"].ValueFrom.SecretKeyRef.Name)
	require.NotContains(t, env, "OPENAI_API_KEY", "optional secrets are absent unless named")
	require.NotContains(t, env, "ERRATA_KEYSTORE_KEYS")
	require.Equal(t, "rel-errata", api.pod().ServiceAccountName)
	svc := objs["Service/rel-errata-api"]
	require.Len(t, svc.Spec.Ports, 1, "the public Service carries the API only, never /metrics")
	require.Equal(t, "http", svc.Spec.Ports[0].TargetPort)

	for name, want := range map[string][]string{
		"projectors":     {"worker", "--projectors=serving", "--stages="},
		"investigations": {"worker", "--projectors=", "--stages=investigator,validator"},
	} {
		w := objs["Deployment/rel-errata-worker-"+name].pod().Containers[0]
		require.Equal(t, want, w.Args, name)
		require.Equal(t, "health", w.Ports[0].Name)
		require.Equal(t, 8081, w.Ports[0].ContainerPort)
		require.Equal(t, "/livez", w.LivenessProbe.HTTPGet.Path)
		require.Equal(t, "/readyz", w.ReadinessProbe.HTTPGet.Path)
		we := envOf(w)
		require.Equal(t, "0.0.0.0:8081", we["ERRATA_WORKER_HTTP_ADDR"].Value)
		require.Equal(t, "metadata.name", we["ERRATA_WORKER_ID"].ValueFrom.FieldRef.FieldPath)
		require.NotContains(t, we, "ERRATA_KAFKA_INSTANCE_ID", "static membership is opt-in")
	}

	cron := objs["CronJob/rel-errata-selector"]
	require.Equal(t, "*/15 * * * *", cron.Spec.Schedule)
	require.Equal(t, []string{"selector", "--budget", "100"}, cron.pod().Containers[0].Args)
	require.Equal(t, "Never", cron.pod().RestartPolicy)

	job := objs["Job/rel-errata-migrate"]
	require.Equal(t, migrationsHook, job.Metadata.Annotations["helm.sh/hook"])
	require.Contains(t, job.Metadata.Annotations["helm.sh/hook-delete-policy"], "before-hook-creation")
	require.Equal(t, []string{"topics"}, job.pod().InitContainers[0].Args, "topics exist before migrations")
	require.Equal(t, []string{"migrate"}, job.pod().Containers[0].Args)
	require.Empty(t, job.pod().ServiceAccountName, "a pre-install hook cannot use the release's service account")
}

func TestHelmTemplateProduction(t *testing.T) {
	objs, out := render(t, prodValues)
	checkGolden(t, "helm/testdata/prod.golden.yaml", out)
	require.Equal(t, []string{
		"CronJob/rel-errata-selector",
		"Deployment/rel-errata-api",
		"Deployment/rel-errata-worker-investigator",
		"Deployment/rel-errata-worker-read-models",
		"Deployment/rel-errata-worker-serving",
		"Deployment/rel-errata-worker-validator",
		"Job/rel-errata-migrate",
		"PodMonitor/rel-errata-workers",
		"Service/rel-errata-api",
		"Service/rel-errata-api-metrics",
		"ServiceAccount/errata-prod",
		"ServiceMonitor/rel-errata-api",
	}, keys(objs))
	checkWorkloads(t, objs, prodImage)
	require.Equal(t, 3, *objs["Deployment/rel-errata-api"].Spec.Replicas)

	env := envOf(objs["Deployment/rel-errata-api"].pod().Containers[0])
	for name, ref := range map[string][2]string{
		"ERRATA_DATABASE_URL":                   {"errata-prod-postgres", "serving-url"},
		"ERRATA_ELASTICSEARCH_URL":              {"errata-prod-stores", "elasticsearch-url"},
		"ERRATA_CLICKHOUSE_URL":                 {"errata-prod-stores", "clickhouse-url"},
		"ERRATA_HASH_SECRET":                    {"errata-prod", "hash-secret"},
		"OPENAI_API_KEY":                        {"errata-prod", "openai-api-key"},
		"ERRATA_KEYSTORE_KEYS":                  {"errata-prod-keystore", "keys"},
		"ERRATA_BLOBSTORE_S3_ACCESS_KEY_ID":     {"errata-prod-s3", "access-key-id"},
		"ERRATA_BLOBSTORE_S3_SECRET_ACCESS_KEY": {"errata-prod-s3", "secret-access-key"},
	} {
		require.NotNil(t, env[name].ValueFrom, name)
		require.Equal(t, ref, [2]string{env[name].ValueFrom.SecretKeyRef.Name, env[name].ValueFrom.SecretKeyRef.Key}, name)
	}
	require.Equal(t, "prod.", env["ERRATA_KAFKA_TOPIC_PREFIX"].Value)
	require.Equal(t, "X-Forwarded-For", env["ERRATA_TRUSTED_PROXY_HEADER"].Value)
	require.Equal(t, "8", env["ERRATA_INVESTIGATOR_CONCURRENCY"].Value)
	require.Equal(t, "gpt-5-mini", env["ERRATA_VALIDATOR_MODEL"].Value)
	require.Equal(t, "warn", env["ERRATA_LOG_LEVEL"].Value)

	known := map[string][]string{"projectors": {serving.ProjectorName, search.ProjectorName, metrics.ProjectorName},
		"stages": {"investigator", "validator"}}
	for _, name := range []string{"serving", "read-models", "investigator", "validator"} {
		w := objs["Deployment/rel-errata-worker-"+name].pod().Containers[0]
		for _, arg := range w.Args[1:] {
			flagName, list, ok := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			require.True(t, ok, arg)
			for _, item := range strings.Split(list, ",") {
				if item != "" {
					require.Contains(t, known[flagName], item, "%s: %s", name, arg)
				}
			}
		}
		require.Equal(t, "metadata.name", envOf(w)["ERRATA_KAFKA_INSTANCE_ID"].ValueFrom.FieldRef.FieldPath)
	}
	require.Equal(t, []string{"worker", "--projectors=search,metrics", "--stages="},
		objs["Deployment/rel-errata-worker-read-models"].pod().Containers[0].Args)
	require.Equal(t, "0 * * * *", objs["CronJob/rel-errata-selector"].Spec.Schedule)
	require.Equal(t, "release", keyOf(objs["ServiceMonitor/rel-errata-api"].Metadata.Labels, "prometheus"))
	// The ServiceMonitor scrapes the metrics port through its own ClusterIP
	// Service; the public Service has the API port alone.
	require.Len(t, objs["Service/rel-errata-api"].Spec.Ports, 1)
	require.Equal(t, "http", objs["Service/rel-errata-api"].Spec.Ports[0].TargetPort)
	metricsSvc := objs["Service/rel-errata-api-metrics"]
	require.Equal(t, "api-metrics", metricsSvc.Metadata.Labels["app.kubernetes.io/component"])
	require.Len(t, metricsSvc.Spec.Ports, 1)
	require.Equal(t, "metrics", metricsSvc.Spec.Ports[0].TargetPort)
	require.Equal(t, 9090, metricsSvc.Spec.Ports[0].Port)
}

// keyOf returns the key holding value in m.
func keyOf(m map[string]string, value string) string {
	for k, v := range m {
		if v == value {
			return k
		}
	}
	return ""
}

// TestHelmTemplateSettingsExist checks every ERRATA_*/OPENAI_* name written
// in the chart's templates and values against internal/config.
func TestHelmTemplateSettingsExist(t *testing.T) {
	vars := configVarNames()
	name := regexp.MustCompile(`\b(?:ERRATA|OPENAI)_[A-Z0-9_]*[A-Z0-9]\b`)
	files, err := filepath.Glob(chartDir + "/templates/*")
	require.NoError(t, err)
	files = append(files, chartDir+"/values.yaml", prodValues)
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, n := range name.FindAllString(string(b), -1) {
			seen++
			require.Contains(t, vars, n, "%s names %s, which internal/config does not know", f, n)
		}
	}
	require.Greater(t, seen, 20)
}

// TestHelmTemplateRejectsBadValues: a required secret reference missing, a
// non-setting in config, a worker name that is not a DNS label.
func TestHelmTemplateRejectsBadValues(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want string
	}{
		{"secrets.hashSecret.name=", "secrets.hashSecret.name is required"},
		{"postgres.existingSecret=", "postgres.existingSecret is required"},
		{"config.PATH=/bin", "only ERRATA_* and OPENAI_* settings belong in config"},
		{"workers[0].name=Bad_Name", "is not a DNS label"},
		{"api.metricsPort=8080", "api.metricsPort must differ from api.port"},
		{"monitoring.serviceMonitor.enabled=true,api.metricsPort=0", "monitoring.serviceMonitor needs api.metricsPort"},
	} {
		out, err := runHelm(t, "template", helmRelease, chartDir, "--set", tc.set)
		require.Error(t, err, tc.set)
		require.Contains(t, out, tc.want, tc.set)
	}
}

// checkGolden compares rendered output with a golden file (-update-helm rewrites it).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateHelm {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./deploy -run Helm -update-helm to create it")
	require.Equal(t, string(want), got, "rendered chart changed; review and run with -update-helm")
}
