// Package config reads Errata's settings from ERRATA_* environment variables,
// validates them at start-up and renders them with secrets masked.
package config

import (
	"errors"
	"fmt"
	"math"
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
	TopicPartitions int32
	// KafkaReplicationFactor is the replication factor of topics `errata
	// topics` creates (0: the brokers' default); KafkaMinInsyncReplicas their
	// min.insync.replicas.
	KafkaReplicationFactor int
	KafkaMinInsyncReplicas int
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
	APIMetricsAddr      string // where `errata serve` serves /metrics; empty: nowhere
	LogLevel            string
	LogFormat           string
	// AccessLogEvery logs one answered request in AccessLogEvery (1: each);
	// errors and requests slower than AccessLogSlow are always logged.
	AccessLogEvery int
	AccessLogSlow  time.Duration
	// HashSecret keys the hashes of viewer and network identities.
	HashSecret string
	// TrustedProxyHeader names the header carrying the client IP when Errata
	// runs behind a proxy; empty means use the socket address.
	TrustedProxyHeader string
	// RateLimit enables the per-client rate limits (ERRATA_RATE_LIMIT=off
	// turns them all off, for load tests and benchmarks). A client is an
	// IPv4 address or an IPv6 /64.
	RateLimit bool
	// GraphQLRate and GraphQLBurst are each client's /graphql budget in
	// cost points per second and at most; TRPCRate and TRPCBurst its budget
	// of tRPC calls. RateLimitClients bounds the clients each limit tracks.
	GraphQLRate, GraphQLBurst int
	TRPCRate, TRPCBurst       int
	RateLimitClients          int
	// StatusCacheEntries bounds the versions whose status errata serve
	// keeps in memory (serving.StatusCacheConfig.MaxEntries); 0: no cache.
	StatusCacheEntries int
	// SubmitRate (per hour) and SubmitBurst ration each client's
	// submissions of verdict analyses (the workbench API, verdict.request);
	// a valid instance API key gets ten times both, per key.
	SubmitRate, SubmitBurst int
	// AppealsPerDay bounds the appeals one client files in a rolling day;
	// AppealsOpenPerClaim the appeals of one claim open at once.
	AppealsPerDay, AppealsOpenPerClaim int
	// ReadYourWritesTimeout bounds how long registerObservedVersion waits for
	// the serving projection to include the version it appended.
	ReadYourWritesTimeout time.Duration
	// ViewIPRangeDailyCap caps unique-view credits per IP range, post and day.
	ViewIPRangeDailyCap int
	// ReprocessDailyBudget is the default most re-processing requests per
	// configuration and UTC day (errata reinvestigate --budget).
	ReprocessDailyBudget int
	// ProjectionLagDegraded is the lag, in records, above which the API's
	// /readyz reports a projector as lagging (degraded, still ready).
	ProjectionLagDegraded int
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
	// OpenAIAPIKey is the instance's own provider key (empty: only
	// investigations requested with a user's key can run).
	OpenAIAPIKey string
	// LLMProvider is openai-responses or chat-completions.
	LLMProvider       string
	InvestigatorModel string
	ValidatorModel    string
	ReasoningEffort   string
	// StanceModel judges the stance of evidence passages (empty: the
	// validator's model); EvidencePolicy names the evidence engine's
	// policy (evidence.PolicyByName), which decides what is published.
	StanceModel    string
	EvidencePolicy string
	// MaxAttempts, RetryBase and RoundCap govern investigation attempts.
	MaxAttempts int
	RetryBase   time.Duration
	RoundCap    int
	// InvestigatorConcurrency bounds the attempts one worker runs at once;
	// ValidatorConcurrency the validations.
	InvestigatorConcurrency int
	ValidatorConcurrency    int
	LeaseTTL                time.Duration
	// AnalystModel answers the verdict analysis's extraction and summary
	// calls (empty: InvestigatorModel); AnalystConcurrency bounds the
	// analyses one worker runs at once.
	AnalystModel       string
	AnalystConcurrency int
	// KeystoreKeys is the key ring sealing users' OpenAI keys
	// ("id:base64key,..."), KeystoreCurrentKeyID the id sealing new ones,
	// KeystoreTTL how long a user's key is kept at most.
	KeystoreKeys         string
	KeystoreCurrentKeyID string
	KeystoreTTL          time.Duration
	// BlobstoreURL says where investigation images are kept.
	BlobstoreURL      string
	BlobstoreS3Key    string
	BlobstoreS3Secret string
	// Images enables sending post images to the model.
	Images bool
	// Search provider backing web search for Chat Completions providers.
	SearchProvider string
	SearchAPIKey   string
	SearchBaseURL  string
	// WorkerID names this worker instance in events and leases (default:
	// host name and process id).
	WorkerID string
	// LLMPrices price model tokens for the cost estimates in metrics.
	LLMPrices LLMPrices

	// ClickHouseDatabase holds the metrics projection; MetricsInsertRows
	// bounds one INSERT, MetricsLinger and MetricsFetchMinBytes let the
	// metrics consumer wait for larger batches.
	ClickHouseDatabase   string
	MetricsInsertRows    int
	MetricsLinger        time.Duration
	MetricsFetchMinBytes int

	// SearchIndexPrefix names the search indices: "<prefix>investigations-vN"
	// behind the alias "<prefix>investigations".
	SearchIndexPrefix string

	// SourceRegistry is a file of source-tier rules extending the starter
	// registry (consumers/evidence/sources); empty: the starter alone.
	SourceRegistry string
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
		set: func(c *Config, v string) (err error) { c.TopicPartitions, err = positiveInt32(v); return }},
	{Name: "ERRATA_KAFKA_REPLICATION_FACTOR", Default: "0", Doc: "replicas of newly created event topics (errata topics); 0: the brokers' default.replication.factor. A cluster runs 3",
		set: func(c *Config, v string) (err error) { c.KafkaReplicationFactor, err = intBetween(v, 0, 32767); return }},
	{Name: "ERRATA_KAFKA_MIN_INSYNC_REPLICAS", Default: "1", Doc: "min.insync.replicas of the event topics: replicas that must hold an append before it is acknowledged (acks=all); at most the replication factor. A cluster of RF 3 runs 2",
		set: func(c *Config, v string) (err error) { c.KafkaMinInsyncReplicas, err = positiveInt(v); return }},
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
	{Name: "ERRATA_DATABASE_URL", Default: "postgres://errata:errata@127.0.0.1:15432/errata?sslmode=disable", Secret: true, //nolint:gosec // G101: the local services' published default (deploy/local), not a deployment's password
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
	{Name: "ERRATA_SEARCH_INDEX_PREFIX", Default: "errata-", Doc: "prefix of the Elasticsearch search indices (<prefix>investigations-vN behind the alias <prefix>investigations)",
		set: func(c *Config, v string) error {
			if !regexp.MustCompile(`^([a-z0-9][a-z0-9._-]{0,100})?$`).MatchString(v) {
				return errors.New("must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit")
			}
			c.SearchIndexPrefix = v
			return nil
		}},
	{Name: "ERRATA_CLICKHOUSE_URL", Default: "http://127.0.0.1:18123", Secret: true, Doc: "ClickHouse HTTP URL (incidence metrics)",
		set: func(c *Config, v string) error {
			c.ClickHouseURL = v
			return checkURL(v, "http", "https", "clickhouse")
		}},
	{Name: "ERRATA_CLICKHOUSE_DATABASE", Default: "errata", Doc: "ClickHouse database of the metrics projection (created if missing)",
		set: func(c *Config, v string) error {
			if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`).MatchString(v) {
				return errors.New("must be a plain identifier")
			}
			c.ClickHouseDatabase = v
			return nil
		}},
	{Name: "ERRATA_METRICS_INSERT_ROWS", Default: "50000", Doc: "most rows of one ClickHouse INSERT by the metrics projector",
		set: func(c *Config, v string) (err error) { c.MetricsInsertRows, err = positiveInt(v); return }},
	{Name: "ERRATA_METRICS_LINGER", Default: "500ms", Doc: "how long the metrics projector's fetches wait for ERRATA_METRICS_FETCH_MIN_BYTES before taking what there is",
		set: func(c *Config, v string) (err error) {
			c.MetricsLinger, err = time.ParseDuration(v)
			if err == nil && (c.MetricsLinger < 0 || c.MetricsLinger > time.Minute) {
				err = errors.New("must be between 0s and 1m")
			}
			return
		}},
	{Name: "ERRATA_METRICS_FETCH_MIN_BYTES", Default: "524288", Doc: "bytes the metrics projector's fetches wait for (about 1,000 view events) up to ERRATA_METRICS_LINGER",
		set: func(c *Config, v string) (err error) { c.MetricsFetchMinBytes, err = positiveInt(v); return }},
	{Name: "ERRATA_HTTP_ADDR", Default: "127.0.0.1:8080", Doc: "listen address of the HTTP API (errata serve)",
		set: func(c *Config, v string) error { c.HTTPAddr = v; return checkAddr(v) }},
	{Name: "ERRATA_WORKER_HTTP_ADDR", Default: "127.0.0.1:8081", Doc: "listen address of a worker's operator endpoints (/health, /livez, /readyz, /metrics)",
		set: func(c *Config, v string) error { c.WorkerHTTPAddr = v; return checkAddr(v) }},
	{Name: "ERRATA_API_METRICS_ADDR", Default: "off", Doc: "listen address of the API's Prometheus /metrics (errata serve), apart from the public ERRATA_HTTP_ADDR, which never serves it; off: not served",
		set: func(c *Config, v string) error {
			if v == "off" {
				c.APIMetricsAddr = ""
				return nil
			}
			c.APIMetricsAddr = v
			return checkAddr(v)
		}},
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
	{Name: "ERRATA_ACCESS_LOG_SAMPLE", Default: "100", Doc: "errata serve logs one request in this many (1: every request; 0: none); 5xx answers and slow requests are always logged",
		set: func(c *Config, v string) (err error) { c.AccessLogEvery, err = nonNegativeInt(v); return }},
	{Name: "ERRATA_ACCESS_LOG_SLOW", Default: "1s", Doc: "a request that takes at least this long is always logged (0s: no threshold)",
		set: func(c *Config, v string) (err error) { c.AccessLogSlow, err = time.ParseDuration(v); return }},
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
	{Name: "ERRATA_RATE_LIMIT", Default: "on", Doc: "per-client rate limits of /graphql and the tRPC procedures (a client is an IPv4 address or an IPv6 /64); off disables them all, for load tests and benchmarks",
		set: func(c *Config, v string) error {
			switch strings.ToLower(v) {
			case "on", "true":
				c.RateLimit = true
			case "off", "false":
				c.RateLimit = false
			default:
				return fmt.Errorf("%q is not on or off", v)
			}
			return nil
		}},
	{Name: "ERRATA_RATE_LIMIT_GRAPHQL_RATE", Default: "200", Doc: "cost points per second each client earns on /graphql (10 per request, then the operation's estimated cost, then 1 per millisecond it took)",
		set: func(c *Config, v string) (err error) { c.GraphQLRate, err = positiveInt(v); return }},
	{Name: "ERRATA_RATE_LIMIT_GRAPHQL_BURST", Default: "4000", Doc: "cost points a client may spend on /graphql at once (two operations of the largest estimated cost)",
		set: func(c *Config, v string) (err error) { c.GraphQLBurst, err = positiveInt(v); return }},
	{Name: "ERRATA_RATE_LIMIT_TRPC_RATE", Default: "20", Doc: "tRPC calls per second each client may sustain (a reader's extension makes a few per page)",
		set: func(c *Config, v string) (err error) { c.TRPCRate, err = positiveInt(v); return }},
	{Name: "ERRATA_RATE_LIMIT_TRPC_BURST", Default: "600", Doc: "tRPC calls a client may make at once",
		set: func(c *Config, v string) (err error) { c.TRPCBurst, err = positiveInt(v); return }},
	{Name: "ERRATA_RATE_LIMIT_CLIENTS", Default: "50000", Doc: "clients each rate limit tracks at most (least recently seen forgotten first); about 12 MB each at 50,000",
		set: func(c *Config, v string) (err error) { c.RateLimitClients, err = positiveInt(v); return }},
	{Name: "ERRATA_STATUS_CACHE_ENTRIES", Default: "50000", Doc: "registered versions whose status errata serve keeps in memory for recordViewAndGetStatus (kept current by the serving projection's notifications; memory grows with it and with their claims); 0 reads every status from Postgres",
		set: func(c *Config, v string) (err error) {
			c.StatusCacheEntries, err = intBetween(v, 0, 10_000_000)
			return
		}},
	{Name: "ERRATA_SUBMIT_RATE", Default: "30", Doc: "verdict analyses per hour each client may request (POST /api/v1/analyses, verdict.request); a valid instance API key (x-api-key) gets ten times this and the burst, per key",
		set: func(c *Config, v string) (err error) { c.SubmitRate, err = positiveInt(v); return }},
	{Name: "ERRATA_APPEALS_PER_DAY", Default: "10", Doc: "appeals each client may file in a rolling day (appeal.file; over it: 429)",
		set: func(c *Config, v string) (err error) { c.AppealsPerDay, err = positiveInt(v); return }},
	{Name: "ERRATA_APPEALS_OPEN_PER_CLAIM", Default: "3", Doc: "appeals of one claim that may be open at once (appeal.file; over it: 409)",
		set: func(c *Config, v string) (err error) { c.AppealsOpenPerClaim, err = positiveInt(v); return }},
	{Name: "ERRATA_SUBMIT_BURST", Default: "5", Doc: "verdict analyses a client may request at once",
		set: func(c *Config, v string) (err error) { c.SubmitBurst, err = positiveInt(v); return }},
	{Name: "ERRATA_READ_YOUR_WRITES_TIMEOUT", Default: "5s", Doc: "how long registerObservedVersion waits for the serving projection",
		set: func(c *Config, v string) (err error) { c.ReadYourWritesTimeout, err = time.ParseDuration(v); return }},
	{Name: "ERRATA_VIEW_IP_RANGE_DAILY_CAP", Default: "10", Doc: "unique-view credits per IP range, post and UTC day (changing it requires a serving replay)",
		set: func(c *Config, v string) (err error) { c.ViewIPRangeDailyCap, err = positiveInt(v); return }},
	{Name: "ERRATA_REPROCESS_DAILY_BUDGET", Default: "500", Doc: "investigations `errata reinvestigate` may request per target configuration and UTC day, unless --budget says otherwise",
		set: func(c *Config, v string) (err error) { c.ReprocessDailyBudget, err = positiveInt(v); return }},
	{Name: "ERRATA_PROJECTION_LAG_DEGRADED", Default: "10000", Doc: "records a projector may lag behind the log before the API's /readyz reports it degraded (0: any lag; a stopped projector always is)",
		set: func(c *Config, v string) (err error) { c.ProjectionLagDegraded, err = nonNegativeInt(v); return }},
	{Name: "ERRATA_SERVER_VERIFICATION", Default: "true", Doc: "verify registered content against LessWrong, Wikipedia, Substack and the Bluesky AppView (false: every version is CLIENT_FALLBACK)",
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
	{Name: "OPENAI_API_KEY", Default: "", Secret: true,
		Doc: "the instance's provider key for investigations (empty: only requests carrying a user's key run); never logged",
		set: func(c *Config, v string) error { c.OpenAIAPIKey = v; return nil }},
	{Name: "ERRATA_LLM_PROVIDER", Default: "openai-responses",
		Doc: "openai-responses (OpenAI Responses API, native web search) or chat-completions (OpenRouter, LM Studio, Ollama, vLLM; web search through ERRATA_SEARCH_PROVIDER)",
		set: func(c *Config, v string) error {
			c.LLMProvider = v
			return oneOf(v, "openai-responses", "chat-completions")
		}},
	{Name: "ERRATA_INVESTIGATOR_MODEL", Default: "gpt-5", Doc: "model of stage 1 (the investigation)",
		set: func(c *Config, v string) error { c.InvestigatorModel = v; return nil }},
	{Name: "ERRATA_VALIDATOR_MODEL", Default: "gpt-5", Doc: "model of stage 2 (per-claim validation)",
		set: func(c *Config, v string) error { c.ValidatorModel = v; return nil }},
	{Name: "ERRATA_STANCE_MODEL", Default: "", Doc: "model judging the stance of evidence passages for approved claims (empty: ERRATA_VALIDATOR_MODEL)",
		set: func(c *Config, v string) error { c.StanceModel = v; return nil }},
	{Name: "ERRATA_EVIDENCE_POLICY", Default: "strict-v1",
		Doc: "evidence policy deciding which approved claims are published: strict-v1 (only claims authoritative sources refute) or validator-only-v1 (every approved claim, as before the evidence engine); recorded in every assessment",
		set: func(c *Config, v string) error { c.EvidencePolicy = v; return nil }},
	{Name: "ERRATA_REASONING_EFFORT", Default: "", Doc: "reasoning effort sent to reasoning models (minimal, low, medium, high; empty: provider default)",
		set: func(c *Config, v string) error {
			c.ReasoningEffort = v
			if v == "" {
				return nil
			}
			return oneOf(v, "minimal", "low", "medium", "high")
		}},
	{Name: "ERRATA_INVESTIGATION_MAX_ATTEMPTS", Default: "4", Doc: "attempts per investigation attempt series (transient failures retry)",
		set: func(c *Config, v string) (err error) { c.MaxAttempts, err = positiveInt(v); return }},
	{Name: "ERRATA_INVESTIGATION_RETRY_BASE", Default: "10s", Doc: "first retry delay; attempt n waits base x 2^(n-1)",
		set: func(c *Config, v string) (err error) { c.RetryBase, err = positiveDuration(v); return }},
	{Name: "ERRATA_INVESTIGATION_ROUND_CAP", Default: "24", Doc: "model turns per attempt; the last one must answer without tools",
		set: func(c *Config, v string) (err error) { c.RoundCap, err = positiveInt(v); return }},
	{Name: "ERRATA_INVESTIGATOR_CONCURRENCY", Default: "4", Doc: "investigation attempts one worker runs at once",
		set: func(c *Config, v string) (err error) { c.InvestigatorConcurrency, err = positiveInt(v); return }},
	{Name: "ERRATA_VALIDATOR_CONCURRENCY", Default: "16", Doc: "claim validations one worker runs at once (at most 4 per investigation)",
		set: func(c *Config, v string) (err error) { c.ValidatorConcurrency, err = positiveInt(v); return }},
	{Name: "ERRATA_ANALYST_MODEL", Default: "", Doc: "model of verdict analyses (claim extraction with triage, the verdict summary; empty: ERRATA_INVESTIGATOR_MODEL); stance: ERRATA_STANCE_MODEL",
		set: func(c *Config, v string) error { c.AnalystModel = v; return nil }},
	{Name: "ERRATA_ANALYST_CONCURRENCY", Default: "4", Doc: "verdict analyses one worker runs at once",
		set: func(c *Config, v string) (err error) { c.AnalystConcurrency, err = positiveInt(v); return }},
	{Name: "ERRATA_WORK_LEASE_TTL", Default: "30s", Doc: "lease of a worker on an attempt or a validation; a dead worker's work is taken over after it",
		set: func(c *Config, v string) (err error) { c.LeaseTTL, err = positiveDuration(v); return }},
	{Name: "ERRATA_KEYSTORE_KEYS", Default: "", Secret: true,
		Doc: "AES-256 key ring sealing users' OpenAI keys: id:base64(32 bytes),... (empty: user keys are refused)",
		set: func(c *Config, v string) error { c.KeystoreKeys = v; return nil }},
	{Name: "ERRATA_KEYSTORE_CURRENT_KEY_ID", Default: "", Doc: "id in ERRATA_KEYSTORE_KEYS that seals new user keys (empty: the only one)",
		set: func(c *Config, v string) error { c.KeystoreCurrentKeyID = v; return nil }},
	{Name: "ERRATA_KEYSTORE_TTL", Default: "15m", Doc: "how long a user's OpenAI key is kept for its investigation at most",
		set: func(c *Config, v string) (err error) { c.KeystoreTTL, err = positiveDuration(v); return }},
	{Name: "ERRATA_BLOBSTORE_URL", Default: ".local/blobs", Doc: "where investigation images are kept: a directory, file:///dir, or s3://bucket/prefix?endpoint=...&region=...",
		set: func(c *Config, v string) error { c.BlobstoreURL = v; return nil }},
	{Name: "ERRATA_BLOBSTORE_S3_ACCESS_KEY_ID", Default: "", Secret: true, Doc: "access key id of an s3:// blob store",
		set: func(c *Config, v string) error { c.BlobstoreS3Key = v; return nil }},
	{Name: "ERRATA_BLOBSTORE_S3_SECRET_ACCESS_KEY", Default: "", Secret: true, Doc: "secret access key of an s3:// blob store",
		set: func(c *Config, v string) error { c.BlobstoreS3Secret = v; return nil }},
	{Name: "ERRATA_INVESTIGATION_IMAGES", Default: "true", Doc: "send post images (<= 10, <= 20 MB, jpeg/png/gif/webp) to the model",
		set: func(c *Config, v string) (err error) { c.Images, err = strconv.ParseBool(v); return }},
	{Name: "ERRATA_SEARCH_PROVIDER", Default: "", Doc: "web search for chat-completions providers: brave, tavily, searxng (empty: none)",
		set: func(c *Config, v string) error {
			c.SearchProvider = v
			if v == "" {
				return nil
			}
			return oneOf(v, "brave", "tavily", "searxng")
		}},
	{Name: "ERRATA_SEARCH_API_KEY", Default: "", Secret: true, Doc: "API key of the search provider (brave, tavily)",
		set: func(c *Config, v string) error { c.SearchAPIKey = v; return nil }},
	{Name: "ERRATA_SEARCH_BASE_URL", Default: "", Doc: "base URL of the search provider (required for searxng)",
		set: func(c *Config, v string) error { c.SearchBaseURL = v; return nil }},
	{Name: "ERRATA_WORKER_ID", Default: "", Doc: "this worker's name in events and leases (empty: host name and process id)",
		set: func(c *Config, v string) error { c.WorkerID = v; return nil }},
	{Name: "ERRATA_SOURCE_REGISTRY", Default: "", Doc: "file of source-tier rules (TIER PATTERN a line) extending or overriding the starter source registry, read at start-up; empty: the starter alone (errata sources list)",
		set: func(c *Config, v string) error { c.SourceRegistry = v; return nil }},
	{Name: "ERRATA_LLM_PRICES", Default: DefaultLLMPrices,
		Doc: "US dollars per million tokens for cost metrics: model=input:output[:cached_input],... (a dated snapshot matches its alias; unknown models count tokens only)",
		set: func(c *Config, v string) (err error) { c.LLMPrices, err = ParseLLMPrices(v); return }},
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", v)
	}
	return d, nil
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

// nonNegativeInt parses a count that may be 0.
func nonNegativeInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a non-negative integer", v)
	}
	return n, nil
}

// intBetween parses an integer in [lo, hi].
func intBetween(v string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is not an integer between %d and %d", v, lo, hi)
	}
	return n, nil
}

// positiveInt32 is positiveInt for a count Kafka carries as an int32.
func positiveInt32(v string) (int32, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer of at most %d", v, math.MaxInt32)
	}
	return int32(n), nil
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
