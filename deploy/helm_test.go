package deploy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
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

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/internal/config"
	"github.com/errata-dev/errata/projections/analytics"
	"github.com/errata-dev/errata/projections/search"
	"github.com/errata-dev/errata/projections/serving"
)

var update = flag.Bool("update", false, "rewrite the rendered chart goldens under helm/testdata/")

const (
	chartDir       = "helm/errata"
	prodValues     = "helm/testdata/values-prod.yaml"
	helmRelease    = "rel"
	helmNamespace  = "errata"
	installHelmSh  = "helm/install-helm.sh"
	defaultImage   = "ghcr.io/errata-dev/errata:0.1.0"
	prodImage      = "registry.example.internal/errata:1.2.3"
	migrationsHook = "pre-install,pre-upgrade"
	// The user source registry: a ConfigMap mounted into every worker.
	registryConfigMap = "ConfigMap/rel-errata-source-registry"
	registryVolume    = "source-registry"
	registryDir       = "/etc/errata/source-registry"
	registryKey       = "sources.registry"
	registryChecksum  = "checksum/source-registry"
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
	VolumeMounts    []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type podSpec struct {
	ServiceAccountName string         `yaml:"serviceAccountName"`
	RestartPolicy      string         `yaml:"restartPolicy"`
	SecurityContext    map[string]any `yaml:"securityContext"`
	InitContainers     []container    `yaml:"initContainers"`
	Containers         []container    `yaml:"containers"`
	Volumes            []struct {
		Name      string `yaml:"name"`
		ConfigMap *struct {
			Name string `yaml:"name"`
		} `yaml:"configMap"`
	} `yaml:"volumes"`
}

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
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
	var args []string
	for _, f := range valueFiles {
		args = append(args, "--values", f)
	}
	return renderArgs(t, args...)
}

// renderArgs is render with any helm template arguments (--set, --set-file).
func renderArgs(t *testing.T, extra ...string) (map[string]object, string) {
	t.Helper()
	args := append([]string{"template", helmRelease, chartDir, "--namespace", helmNamespace}, extra...)
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

// containers returns every container of every workload, keyed by
// "kind/name container".
func containers(objs map[string]object) map[string]container {
	out := map[string]container{}
	for key, o := range objs {
		pod := o.pod()
		for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
			out[key+" "+c.Name] = c
		}
	}
	return out
}

// checkSettings asserts the value of a setting in every container of every
// workload; "" asserts it is absent.
func checkSettings(t *testing.T, objs map[string]object, want map[string]string) {
	t.Helper()
	for where, c := range containers(objs) {
		env := envOf(c)
		for name, value := range want {
			if value == "" {
				require.NotContains(t, env, name, where)
				continue
			}
			require.Contains(t, env, name, where)
			require.Equal(t, value, env[name].Value, "%s: %s", where, name)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// checkSourceRegistry asserts where the user source registry goes: with
// content, a ConfigMap holding it byte for byte, mounted read-only into
// every worker (the evidence engine runs there) and named by
// ERRATA_SOURCE_REGISTRY, with a checksum annotation that rolls the workers
// when it changes; nowhere else (the migrations hook runs before the
// ConfigMap exists). Without content, none of it.
func checkSourceRegistry(t *testing.T, objs map[string]object, content string) {
	t.Helper()
	if content == "" {
		require.NotContains(t, objs, registryConfigMap)
	} else {
		require.Contains(t, objs, registryConfigMap)
		cm := objs[registryConfigMap]
		require.Equal(t, map[string]string{registryKey: content}, cm.Data)
		require.Equal(t, "worker", cm.Metadata.Labels["app.kubernetes.io/component"])
	}
	workers := 0
	for key, o := range objs {
		switch o.Kind {
		case "Deployment", "Job", "CronJob":
		default:
			continue
		}
		pod := o.pod()
		isWorker := o.Kind == "Deployment" && o.Metadata.Labels["app.kubernetes.io/component"] == "worker"
		var annotation string
		if o.Kind == "Deployment" {
			annotation = o.Spec.Template.Metadata.Annotations[registryChecksum]
		}
		var volume string
		for _, v := range pod.Volumes {
			if v.Name == registryVolume {
				require.NotNil(t, v.ConfigMap, key)
				volume = v.ConfigMap.Name
			}
		}
		if !isWorker || content == "" {
			require.Empty(t, annotation, key)
			require.Empty(t, volume, key)
			for _, c := range append(slices.Clone(pod.InitContainers), pod.Containers...) {
				require.NotContains(t, envOf(c), "ERRATA_SOURCE_REGISTRY", key)
				for _, m := range c.VolumeMounts {
					require.NotEqual(t, registryVolume, m.Name, key)
				}
			}
			continue
		}
		workers++
		require.Equal(t, sha256Hex(content), annotation, "%s: a registry change rolls the workers", key)
		require.Equal(t, strings.TrimPrefix(registryConfigMap, "ConfigMap/"), volume, key)
		require.Len(t, pod.Containers, 1, key)
		c := pod.Containers[0]
		require.Equal(t, registryDir+"/"+registryKey, envOf(c)["ERRATA_SOURCE_REGISTRY"].Value, key)
		mounted := false
		for _, m := range c.VolumeMounts {
			if m.Name == registryVolume {
				mounted = true
				require.Equal(t, registryDir, m.MountPath, key)
				require.True(t, m.ReadOnly, "%s: the registry is mounted read-only", key)
			}
		}
		require.True(t, mounted, key)
	}
	if content != "" {
		require.Positive(t, workers)
	}
}

// loadRenderedRegistry loads the rendered ConfigMap's file the way a worker
// does (ERRATA_SOURCE_REGISTRY), proving it survives the chart intact.
func loadRenderedRegistry(t *testing.T, objs map[string]object) *sources.Registry {
	t.Helper()
	path := filepath.Join(t.TempDir(), registryKey)
	require.NoError(t, os.WriteFile(path, []byte(objs[registryConfigMap].Data[registryKey]), 0o600))
	reg, err := sources.Load(path)
	require.NoError(t, err)
	return reg
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
		"investigations": {"worker", "--projectors=", "--stages=investigator,validator,analyst"},
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

	checkSettings(t, objs, map[string]string{
		"ERRATA_EVIDENCE_POLICY":           evidence.DefaultPolicy().Name(),
		"ERRATA_STANCE_MODEL":              "",
		"ERRATA_KAFKA_REPLICATION_FACTOR":  "0",
		"ERRATA_KAFKA_MIN_INSYNC_REPLICAS": "1",
	})
	checkSourceRegistry(t, objs, "")

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
		registryConfigMap,
		"CronJob/rel-errata-selector",
		"Deployment/rel-errata-api",
		"Deployment/rel-errata-worker-analyst",
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
	// A cluster of three brokers: three replicas, two in sync.
	checkSettings(t, objs, map[string]string{
		"ERRATA_KAFKA_REPLICATION_FACTOR":  "3",
		"ERRATA_KAFKA_MIN_INSYNC_REPLICAS": "2",
		"ERRATA_EVIDENCE_POLICY":           "strict-v1",
		"ERRATA_STANCE_MODEL":              "gpt-5-mini",
	})
	prodRegistry := "registry newsroom-v1\n" +
		"# National statistics and the regulator we cite most.\n" +
		"1 *.gouv.fr\n1 insee.fr\n2 afp.com\n5 clickbait.example.net\n"
	checkSourceRegistry(t, objs, prodRegistry)
	reg := loadRenderedRegistry(t, objs)
	require.True(t, strings.HasPrefix(reg.Version(), sources.StarterName+"+newsroom-v1@"), reg.Version())
	for url, want := range map[string][2]any{
		"https://statistiques.insee.fr/fr/": {1, "parent:insee.fr"},
		"https://www.economie.gouv.fr/":     {1, "wildcard:*.gouv.fr"},
		"http://clickbait.example.net/a":    {5, "exact:clickbait.example.net"},
	} {
		m, err := reg.Lookup(url)
		require.NoError(t, err, url)
		require.Equal(t, want, [2]any{m.Tier, m.Rule}, url)
	}

	known := map[string][]string{"projectors": {serving.ProjectorName, search.ProjectorName, analytics.ProjectorName},
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
// non-setting in config, a worker name that is not a DNS label, Kafka
// replication the brokers could never satisfy, an unknown evidence policy, a
// source registry that is not a file's text or too large for a ConfigMap.
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
		{"kafka.replicationFactor=2,kafka.minInsyncReplicas=3", "kafka.minInsyncReplicas 3 exceeds kafka.replicationFactor 2: every append would fail"},
		{"kafka.minInsyncReplicas=0", "kafka.minInsyncReplicas 0: must be at least 1"},
		{"kafka.replicationFactor=-1", "kafka.replicationFactor -1: must be between 0"},
		{"kafka.replicationFactor=40000", "kafka.replicationFactor 40000: must be between 0"},
		{"evidence.policy=validator-only", `evidence.policy "validator-only" is unknown`},
		{"evidence.sourceRegistry.rules=x", "evidence.sourceRegistry must be the file's text"},
	} {
		out, err := runHelm(t, "template", helmRelease, chartDir, "--set", tc.set)
		require.Error(t, err, tc.set)
		require.Contains(t, out, tc.want, tc.set)
	}
	// The brokers' default replication factor (0) takes any min.insync.replicas.
	objs, _ := renderArgs(t, "--set", "kafka.minInsyncReplicas=2")
	checkSettings(t, objs, map[string]string{"ERRATA_KAFKA_REPLICATION_FACTOR": "0", "ERRATA_KAFKA_MIN_INSYNC_REPLICAS": "2"})

	// Kubernetes refuses a ConfigMap over 1 MiB: the chart says so first.
	big := filepath.Join(t.TempDir(), "big.registry")
	line := "# padding\n"
	body := strings.Repeat(line, 1<<20/len(line)+1)
	require.NoError(t, os.WriteFile(big, []byte(body), 0o600))
	out, err := runHelm(t, "template", helmRelease, chartDir, "--set-file", "evidence.sourceRegistry="+big)
	require.Error(t, err)
	require.Contains(t, out, fmt.Sprintf("evidence.sourceRegistry is %d bytes: a ConfigMap holds at most 1 MiB", len(body)))
	exact := filepath.Join(t.TempDir(), "exact.registry")
	require.NoError(t, os.WriteFile(exact, []byte(body[:1<<20]), 0o600))
	objs, _ = renderArgs(t, "--set-file", "evidence.sourceRegistry="+exact)
	require.Len(t, objs[registryConfigMap].Data[registryKey], 1<<20)
}

// TestHelmTemplateEvidencePolicy: the chart accepts exactly the policies
// consumers/evidence knows, and names them when it refuses one.
func TestHelmTemplateEvidencePolicy(t *testing.T) {
	names := make([]string, 0, len(evidence.Policies()))
	for name := range evidence.Policies() {
		names = append(names, name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"strict-v1", "validator-only-v1"}, names)
	for _, name := range names {
		objs, _ := renderArgs(t, "--set", "evidence.policy="+name)
		checkSettings(t, objs, map[string]string{"ERRATA_EVIDENCE_POLICY": name})
	}
	for _, bad := range []string{"strict-v2", "", "Strict-V1", "strict-v1 "} {
		out, err := runHelm(t, "template", helmRelease, chartDir, "--set-string", "evidence.policy="+bad)
		require.Error(t, err, bad)
		require.Contains(t, out, fmt.Sprintf("evidence.policy %q is unknown (known: %s)", bad, strings.Join(names, ", ")), bad)
	}
}

// TestHelmTemplateSourceRegistryFile: the registry passed as a file
// (--set-file), with what YAML makes awkward (an indented first line, tabs,
// CRLF, a non-ASCII host), reaches the worker byte for byte, next to the
// operator's own pod annotations; a different file changes the checksum.
func TestHelmTemplateSourceRegistryFile(t *testing.T) {
	const file = "helm/testdata/user.registry"
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	objs, _ := renderArgs(t, "--set-file", "evidence.sourceRegistry="+file, "--set", "podAnnotations.team=fact-desk")
	checkWorkloads(t, objs, defaultImage)
	checkSourceRegistry(t, objs, string(raw))
	for _, name := range []string{"projectors", "investigations"} {
		require.Equal(t, "fact-desk", objs["Deployment/rel-errata-worker-"+name].Spec.Template.Metadata.Annotations["team"])
	}
	require.Equal(t, map[string]string{"team": "fact-desk"}, objs["Deployment/rel-errata-api"].Spec.Template.Metadata.Annotations,
		"the API does not read the registry and is not rolled by it")

	reg := loadRenderedRegistry(t, objs)
	require.True(t, strings.HasPrefix(reg.Version(), sources.StarterName+"+desk-v2@"), reg.Version())
	for url, want := range map[string][2]any{
		"https://data.stats.example.org/x":        {1, "parent:stats.example.org"},
		"https://xn--bcher-kva.example.org/":      {2, "exact:xn--bcher-kva.example.org"},
		"https://blog.rumours.example.com/post/1": {5, "parent:rumours.example.com"},
	} {
		m, err := reg.Lookup(url)
		require.NoError(t, err, url)
		require.Equal(t, want, [2]any{m.Tier, m.Rule}, url)
	}

	edited := filepath.Join(t.TempDir(), "edited.registry")
	require.NoError(t, os.WriteFile(edited, append(slices.Clone(raw), "4 forum.example.com\n"...), 0o600))
	again, _ := renderArgs(t, "--set-file", "evidence.sourceRegistry="+edited)
	before := objs["Deployment/rel-errata-worker-projectors"].Spec.Template.Metadata.Annotations[registryChecksum]
	after := again["Deployment/rel-errata-worker-projectors"].Spec.Template.Metadata.Annotations[registryChecksum]
	require.NotEqual(t, before, after)
}

// checkGolden compares rendered output with a golden file (-update rewrites it).
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./deploy -run Helm -update to create it")
	require.Equal(t, string(want), got, "rendered chart changed; review and run with -update")
}
