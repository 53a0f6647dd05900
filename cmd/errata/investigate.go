package main

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/sources"
	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/investigator/images"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/runstate"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/internal/blobstore"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/projections/serving"
)

// keyStore opens the store of users' OpenAI keys, or returns nil when no
// key ring is configured (user keys are then refused).
func (e *env) keyStore(ctx context.Context, pool *pgxpool.Pool) (*keystore.Store, error) {
	if e.cfg.KeystoreKeys == "" {
		return nil, nil
	}
	current := e.cfg.KeystoreCurrentKeyID
	if entries := strings.Split(e.cfg.KeystoreKeys, ","); current == "" && len(entries) == 1 {
		current, _, _ = strings.Cut(entries[0], ":") // the only key seals
	}
	ring, err := keystore.ParseKeyRing(current, logging.Secret(e.cfg.KeystoreKeys))
	if err != nil {
		return nil, fmt.Errorf("ERRATA_KEYSTORE_KEYS: %w", err)
	}
	if err := keystore.Migrate(ctx, pool, e.log); err != nil {
		return nil, err
	}
	return keystore.New(pool, ring, keystore.WithTTL(e.cfg.KeystoreTTL))
}

// workerID names this process in events and leases.
func (e *env) workerID() string {
	if e.cfg.WorkerID != "" {
		return e.cfg.WorkerID
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// provider is the configured LLM provider.
func (e *env) provider() llm.Provider {
	if e.cfg.LLMProvider == llm.ProviderChatCompletions {
		return llm.ChatCompletions{}
	}
	return llm.OpenAIResponses{}
}

// openRunState opens the run state of the worker group name.
func openRunState(ctx context.Context, e *env, name string) (*runstate.Group, error) {
	return runstate.OpenGroup(ctx, runstate.GroupConfig{Name: name, DatabaseURL: e.cfg.DatabaseURL,
		Brokers: e.cfg.KafkaBrokers, Topics: e.topics, Registry: e.registry,
		Kafka: kafka.RunnerConfig{InstanceID: e.cfg.KafkaInstanceID, SessionTimeout: e.cfg.KafkaSessionTimeout,
			Observer: e.batchObserver()}}, e.log)
}

// investigatorParts are what both stages share.
type investigatorParts struct {
	log      *investigator.EventLog
	keys     investigator.KeyStore
	images   investigator.ImageStore
	fetcher  investigator.URLFetcher
	search   websearch.Searcher
	serving  *pgxpool.Pool
	producer func()
}

func newInvestigatorParts(ctx context.Context, e *env) (*investigatorParts, error) {
	pool, err := e.servingPool(ctx)
	if err != nil {
		return nil, err
	}
	producer, err := e.producer(ctx)
	if err != nil {
		pool.Close()
		return nil, err
	}
	p := &investigatorParts{serving: pool, producer: producer.Close,
		log: investigator.NewEventLog(producers.NewAppender(producer, e.registry, e.topics, nil)).
			WithExchangeObserver(e.exchangeObserver())}
	ks, err := e.keyStore(ctx, pool)
	if err != nil {
		p.close()
		return nil, err
	}
	if ks != nil {
		p.keys = ks
	}
	// Long enough for the image downloads (30 s, 20 MiB) and fetch_url
	// (20 s); each sets its own tighter limits per request.
	client, err := httpsafe.New(httpsafe.WithTimeout(30*time.Second), httpsafe.WithMaxResponseBytes(images.DefaultMaxBytes))
	if err != nil {
		p.close()
		return nil, err
	}
	if e.cfg.Images {
		store, err := blobstore.Open(blobstore.Config{URL: e.cfg.BlobstoreURL, AccessKeyID: e.cfg.BlobstoreS3Key,
			SecretAccessKey: logging.Secret(e.cfg.BlobstoreS3Secret)})
		if err != nil {
			p.close()
			return nil, err
		}
		p.images = investigator.Images{D: images.NewDownloader(client, store, images.Options{})}
	}
	p.fetcher = investigator.FetchURL{F: fetchurl.New(client, fetchurl.Options{})}
	if e.cfg.SearchProvider != "" {
		searchClient, err := searchHTTPClient(e.cfg.SearchBaseURL, client)
		if err != nil {
			p.close()
			return nil, err
		}
		if p.search, err = websearch.New(websearch.Config{Provider: e.cfg.SearchProvider,
			APIKey: logging.Secret(e.cfg.SearchAPIKey), BaseURL: e.cfg.SearchBaseURL}, searchClient); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// searchHTTPClient is the client of our own web search. A search server the
// operator configured at an IP address or localhost (a self-hosted SearXNG
// beside the worker, on loopback or a private network) is reachable at
// exactly that address and port, which the SSRF-safe client otherwise
// refuses; everything else about it stays checked. Any other base URL uses
// the shared client.
func searchHTTPClient(baseURL string, shared *httpsafe.Client) (*httpsafe.Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Host == "" {
		return shared, nil // websearch.New reports the bad URL
	}
	host := u.Hostname()
	if host == "localhost" {
		host = "127.0.0.1"
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return shared, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return shared, nil
	}
	return httpsafe.New(httpsafe.WithTimeout(30*time.Second), httpsafe.AllowOperatorEndpoint(netip.AddrPortFrom(addr, uint16(n))))
}

func (p *investigatorParts) close() { p.producer(); p.serving.Close() }

// newInvestigator wires stage 1: its run-state group and its executor.
func newInvestigator(ctx context.Context, e *env, parts *investigatorParts) (*runstate.Group, *runstate.Executor, error) {
	g, err := openRunState(ctx, e, investigator.ProjectorName)
	if err != nil {
		return nil, nil, err
	}
	reader := serving.NewReader(parts.serving)
	w := investigator.New(investigator.Config{
		Worker: e.workerID(), Model: e.cfg.InvestigatorModel, BaseURL: e.cfg.OpenAIBaseURL,
		InstanceKey: logging.Secret(e.cfg.OpenAIAPIKey), AllowNoKey: e.cfg.LLMProvider == llm.ProviderChatCompletions,
		MaxAttempts: e.cfg.MaxAttempts, RetryBase: e.cfg.RetryBase, RoundCap: e.cfg.RoundCap,
		ReasoningEffort: e.cfg.ReasoningEffort,
	}, investigator.Deps{
		Store: g.Store, Appender: parts.log, Sources: reader, Keys: parts.keys,
		Provider: e.provider(), Tools: &investigator.Toolbox{Fetcher: parts.fetcher, Search: parts.search, Authors: reader},
		Images: parts.images, Log: e.log,
	})
	ex := runstate.NewExecutor(runstate.ExecutorConfig{Owner: e.workerID(), Concurrency: e.cfg.InvestigatorConcurrency,
		LeaseTTL: e.cfg.LeaseTTL}, g.Store, w.List, w.Do, e.log.With("stage", "investigator"), time.Now)
	return g, ex, nil
}

// newAssessor wires the evidence engine of stage 2: the source registry
// (ERRATA_SOURCE_REGISTRY), the policy (ERRATA_EVIDENCE_POLICY), the stance
// provider (ERRATA_STANCE_MODEL) and our own search when one is configured.
func newAssessor(e *env, parts *investigatorParts) (*investigator.Assessor, error) {
	registry, err := sources.Load(e.cfg.SourceRegistry)
	if err != nil {
		return nil, fmt.Errorf("ERRATA_SOURCE_REGISTRY: %w", err)
	}
	policy, err := evidence.PolicyByName(e.cfg.EvidencePolicy)
	if err != nil {
		return nil, fmt.Errorf("ERRATA_EVIDENCE_POLICY: %w", err)
	}
	model := e.cfg.StanceModel
	if model == "" {
		model = e.cfg.ValidatorModel
	}
	judge := stance.New(e.provider(), stance.Config{Model: model, ReasoningEffort: e.cfg.ReasoningEffort})
	e.log.Info("evidence engine", "policy", policy.Version(), "publish_mode", policy.PublishMode(),
		"registry", registry.Version(), "stance_model", model, "search", parts.search != nil)
	return investigator.NewAssessor(investigator.AssessorConfig{}, registry, policy, judge, parts.search, time.Now), nil
}

// newValidator wires stage 2.
func newValidator(ctx context.Context, e *env, parts *investigatorParts) (*runstate.Group, *runstate.Executor, error) {
	assessor, err := newAssessor(e, parts)
	if err != nil {
		return nil, nil, err
	}
	g, err := openRunState(ctx, e, investigator.ValidatorProjectorName)
	if err != nil {
		return nil, nil, err
	}
	v := investigator.NewValidator(investigator.ValidatorConfig{
		Worker: e.workerID(), Model: e.cfg.ValidatorModel, BaseURL: e.cfg.OpenAIBaseURL,
		InstanceKey: logging.Secret(e.cfg.OpenAIAPIKey), AllowNoKey: e.cfg.LLMProvider == llm.ProviderChatCompletions,
		MaxTries: e.cfg.MaxAttempts, RetryBase: e.cfg.RetryBase, ReasoningEffort: e.cfg.ReasoningEffort,
	}, g.Store, parts.log, parts.keys, e.provider(), parts.images, assessor, e.log, time.Now)
	ex := runstate.NewExecutor(runstate.ExecutorConfig{Owner: e.workerID(), Concurrency: e.cfg.ValidatorConcurrency,
		LeaseTTL: e.cfg.LeaseTTL}, g.Store, v.List, v.Do, e.log.With("stage", "validator"), time.Now)
	return g, ex, nil
}
