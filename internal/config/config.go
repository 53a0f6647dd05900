// Package config reads Errata's settings from ERRATA_* environment variables,
// validates them at start-up and renders them with secrets masked.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of every Errata process. Each field documents its
// variable and default in the Vars table below, which is also what
// `errata config` prints.
type Config struct {
	KafkaBrokers    []string
	TopicPrefix     string
	TopicPartitions int
	// KafkaInstanceID enables static group membership: a restarted process
	// with the same id takes its partitions back without a rebalance.
	KafkaInstanceID     string
	KafkaSessionTimeout time.Duration
	DatabaseURL         string
	ServingSchema       string
	ElasticsearchURL    string
	ClickHouseURL       string
	HTTPAddr            string
	WorkerHTTPAddr      string
	LogLevel            string
	LogFormat           string
	// HashSecret keys the hashes of viewer and network identities.
	HashSecret string
	// TrustedProxyHeader names the header carrying the client IP when Errata
	// runs behind a proxy; empty means use the socket address.
	TrustedProxyHeader string
	// ReadYourWritesTimeout bounds how long registerObservedVersion waits for
	// the serving projection to include the version it appended.
	ReadYourWritesTimeout time.Duration
	// ViewIPRangeDailyCap caps unique-view credits per IP range, post and day.
	ViewIPRangeDailyCap int
	// ServerVerification fetches canonical content from the platforms on
	// registration; off only for instances that cannot reach them.
	ServerVerification bool
	VerifyTimeout      time.Duration
	// MinExtensionVersion is the oldest extension version the API serves.
	MinExtensionVersion string
	// OpenAIBaseURL is the OpenAI-compatible provider's API root (no
	// trailing slash); validateSettings checks user keys against
	// {OpenAIBaseURL}/models. Read only; may carry credentials, so it is
	// masked like every secret URL when printed.
	OpenAIBaseURL string
}

// DefaultOpenAIBaseURL is OpenAI's public API root.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// Var describes one environment variable.
type Var struct {
	Name    string
	Default string
	Secret  bool
	Doc     string
	set     func(c *Config, v string) error
}

// DefaultHashSecret is the development hash key; production must override it.
const DefaultHashSecret = "errata-development-hash-secret"

// Vars lists every variable, its default and meaning.
var Vars = []Var{
	{Name: "ERRATA_KAFKA_BROKERS", Default: "127.0.0.1:19092", Doc: "comma-separated Kafka bootstrap brokers",
		set: func(c *Config, v string) error {
			for _, b := range strings.Split(v, ",") {
				b = strings.TrimSpace(b)
				if _, _, err := net.SplitHostPort(b); err != nil {
					return fmt.Errorf("broker %q: %w", b, err)
				}
				c.KafkaBrokers = append(c.KafkaBrokers, b)
			}
			return nil
		}},
	{Name: "ERRATA_KAFKA_TOPIC_PREFIX", Default: "errata.", Doc: "prefix of every Kafka topic name",
		set: func(c *Config, v string) error {
			if !regexp.MustCompile(`^[a-zA-Z0-9._-]*$`).MatchString(v) {
				return errors.New("only letters, digits, '.', '_' and '-' are allowed")
			}
			c.TopicPrefix = v
			return nil
		}},
	{Name: "ERRATA_KAFKA_PARTITIONS", Default: "6", Doc: "partitions of newly created event topics (never shrink)",
		set: func(c *Config, v string) (err error) { c.TopicPartitions, err = positiveInt(v); return }},
	{Name: "ERRATA_KAFKA_INSTANCE_ID", Default: "", Doc: "static consumer-group member id (e.g. the pod name); empty for dynamic membership",
		set: func(c *Config, v string) error { c.KafkaInstanceID = v; return nil }},
	{Name: "ERRATA_KAFKA_SESSION_TIMEOUT", Default: "45s", Doc: "consumer-group session timeout (how soon a dead worker's partitions move)",
		set: func(c *Config, v string) (err error) {
			c.KafkaSessionTimeout, err = time.ParseDuration(v)
			if err == nil && (c.KafkaSessionTimeout < 6*time.Second || c.KafkaSessionTimeout > 30*time.Minute) {
				err = errors.New("must be between 6s and 30m (broker limits)")
			}
			return
		}},
	{Name: "ERRATA_DATABASE_URL", Default: "postgres://errata:errata@127.0.0.1:15432/errata?sslmode=disable", Secret: true,
		Doc: "Postgres URL of the serving read model",
		set: func(c *Config, v string) error { c.DatabaseURL = v; return checkURL(v, "postgres", "postgresql") }},
	{Name: "ERRATA_SERVING_SCHEMA", Default: "serving", Doc: "Postgres schema holding the serving projection",
		set: func(c *Config, v string) error {
			if !regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`).MatchString(v) {
				return errors.New("must be a lowercase SQL identifier")
			}
			c.ServingSchema = v
			return nil
		}},
	{Name: "ERRATA_ELASTICSEARCH_URL", Default: "http://127.0.0.1:19200", Secret: true, Doc: "Elasticsearch URL (corpus search)",
		set: func(c *Config, v string) error { c.ElasticsearchURL = v; return checkURL(v, "http", "https") }},
	{Name: "ERRATA_CLICKHOUSE_URL", Default: "http://127.0.0.1:18123", Secret: true, Doc: "ClickHouse HTTP URL (incidence metrics)",
		set: func(c *Config, v string) error {
			c.ClickHouseURL = v
			return checkURL(v, "http", "https", "clickhouse")
		}},
	{Name: "ERRATA_HTTP_ADDR", Default: "127.0.0.1:8080", Doc: "listen address of the HTTP API (errata serve)",
		set: func(c *Config, v string) error { c.HTTPAddr = v; return checkAddr(v) }},
	{Name: "ERRATA_WORKER_HTTP_ADDR", Default: "127.0.0.1:8081", Doc: "listen address of a worker's /health endpoint",
		set: func(c *Config, v string) error { c.WorkerHTTPAddr = v; return checkAddr(v) }},
	{Name: "ERRATA_LOG_LEVEL", Default: "info", Doc: "debug, info, warn or error",
		set: func(c *Config, v string) error {
			c.LogLevel = strings.ToLower(v)
			return oneOf(c.LogLevel, "debug", "info", "warn", "error")
		}},
	{Name: "ERRATA_LOG_FORMAT", Default: "text", Doc: "text or json",
		set: func(c *Config, v string) error {
			c.LogFormat = strings.ToLower(v)
			return oneOf(c.LogFormat, "text", "json")
		}},
	{Name: "ERRATA_HASH_SECRET", Default: DefaultHashSecret, Secret: true,
		Doc: "key of the hashes of viewer and IP-range identities (set a long random value in production)",
		set: func(c *Config, v string) error {
			if len(v) < 16 {
				return errors.New("must be at least 16 characters")
			}
			c.HashSecret = v
			return nil
		}},
	{Name: "ERRATA_TRUSTED_PROXY_HEADER", Default: "", Doc: "header with the client IP set by a trusted proxy (e.g. X-Forwarded-For); empty uses the socket address",
		set: func(c *Config, v string) error { c.TrustedProxyHeader = v; return nil }},
	{Name: "ERRATA_READ_YOUR_WRITES_TIMEOUT", Default: "5s", Doc: "how long registerObservedVersion waits for the serving projection",
		set: func(c *Config, v string) (err error) { c.ReadYourWritesTimeout, err = time.ParseDuration(v); return }},
	{Name: "ERRATA_VIEW_IP_RANGE_DAILY_CAP", Default: "10", Doc: "unique-view credits per IP range, post and UTC day (changing it requires a serving replay)",
		set: func(c *Config, v string) (err error) { c.ViewIPRangeDailyCap, err = positiveInt(v); return }},
	{Name: "ERRATA_SERVER_VERIFICATION", Default: "true", Doc: "verify registered content against LessWrong, Wikipedia and Substack (false: every version is CLIENT_FALLBACK)",
		set: func(c *Config, v string) (err error) { c.ServerVerification, err = strconv.ParseBool(v); return }},
	{Name: "ERRATA_VERIFY_TIMEOUT", Default: "8s", Doc: "time budget of one server-side verification, retries included",
		set: func(c *Config, v string) (err error) { c.VerifyTimeout, err = time.ParseDuration(v); return }},
	{Name: "ERRATA_MIN_EXTENSION_VERSION", Default: "0.2.0", Doc: "oldest extension version served (x-openerrata-extension-version)",
		set: func(c *Config, v string) error { c.MinExtensionVersion = v; return nil }},
	{Name: "OPENAI_BASE_URL", Default: DefaultOpenAIBaseURL, Secret: true,
		Doc: "OpenAI-compatible API root; validateSettings checks user keys with GET {base}/models (same variable as the OpenAI SDKs)",
		set: func(c *Config, v string) error {
			c.OpenAIBaseURL = strings.TrimRight(v, "/")
			return checkURL(v, "http", "https")
		}},
}

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Load(os.LookupEnv) }

// Load reads the configuration through lookup, applying defaults and
// validating every value. All problems are reported at once.
func Load(lookup func(string) (string, bool)) (Config, error) {
	var c Config
	var errs []error
	for _, v := range Vars {
		val, ok := lookup(v.Name)
		if !ok || strings.TrimSpace(val) == "" {
			val = v.Default
		}
		if err := v.set(&c, strings.TrimSpace(val)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("invalid configuration: %w", err)
	}
	return c, nil
}

// Describe renders every variable with its effective value, secrets masked.
func Describe(lookup func(string) (string, bool)) []string {
	lines := make([]string, 0, len(Vars))
	for _, v := range Vars {
		val, ok := lookup(v.Name)
		source := "env"
		if !ok || strings.TrimSpace(val) == "" {
			val, source = v.Default, "default"
		}
		if v.Secret {
			val = Mask(val)
		}
		lines = append(lines, fmt.Sprintf("%s=%s (%s)", v.Name, val, source))
	}
	return lines
}

// Mask hides secrets: URL passwords are replaced, other secrets shown only
// as their length.
func Mask(v string) string {
	if v == "" {
		return ""
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		if u.User != nil {
			if _, has := u.User.Password(); has {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			}
		}
		return u.String()
	}
	return fmt.Sprintf("***(%d chars)", len(v))
}

func positiveInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer", v)
	}
	return n, nil
}

func checkURL(v string, schemes ...string) error {
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if err := oneOf(u.Scheme, schemes...); err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	if u.Host == "" {
		return errors.New("URL has no host")
	}
	return nil
}

func checkAddr(v string) error {
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("not host:port: %w", err)
	}
	return nil
}

func oneOf(v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(allowed, ", "))
}
