# Errata: two commands for a newcomer.
#   make up     local Kafka, Postgres, Elasticsearch + the Errata API and worker, in the background
#   make test   every test (unit and integration against the real local services)
# and: make down | status | build | bench | logs

GO       ?= go
BIN      := bin/errata
GOFLAGS  ?=
PKGS     := ./...

.PHONY: up down status build test test-unit test-extension test-faults bench lint logs

build:
	$(GO) build $(GOFLAGS) -o $(BIN) ./cmd/errata

up: build
	deploy/local/up
	deploy/local/errata start
	@echo
	@echo "Errata is up:"
	@echo "  API            http://127.0.0.1:8080  (GET /health, POST /trpc/post.*, POST /graphql)"
	@echo "  explorer       http://127.0.0.1:8080/graphiql"
	@echo "  API metrics    http://127.0.0.1:9090/metrics"
	@echo "  worker health  http://127.0.0.1:8081/health  (and /metrics)"
	@echo "  logs           .local/logs/   (make logs)"
	@echo "  stop           make down"

down:
	-deploy/local/errata stop
	deploy/local/down

status:
	-deploy/local/status
	-deploy/local/errata status

logs:
	tail -n 50 .local/logs/errata-*.log

# Integration tests need the real services; ERRATA_INTEGRATION=1 makes a
# missing service a failure instead of a skip.
test: build
	deploy/local/up
	@start=$$(date +%s); ERRATA_INTEGRATION=1 $(GO) test $(GOFLAGS) -count=1 -timeout 30m $(PKGS) && echo "go test ./...: $$(( $$(date +%s) - start )) s wall"
	@echo "the evidence engine on the development datasets (gold-evidence lane, no LLM; ../shared/datasets):"
	$(BIN) eval --dataset climate-fever --lane gold --file ../shared/datasets/climate-fever.dev.jsonl
	$(BIN) eval --dataset fcb-factuality --lane gold --file ../shared/datasets/factcheck-bench.subtask4_claim_factuality.dev.jsonl
	cd extension && npm ci --no-audit --no-fund && npm test && npm run build && npm run lint:firefox && npm run e2e
	@echo "fault tests (they restart the shared Kafka broker, so they run alone):"
	ERRATA_INTEGRATION=1 ERRATA_FAULT_TESTS=1 $(GO) test $(GOFLAGS) -count=1 -timeout 10m -run 'Restart' ./cmd/errata/
	$(MAKE) test-faults

# The cluster fault test (deploy/faults, 3-8 minutes): a three-broker Kafka
# cluster on its own ports (deploy/local/cluster), two APIs and two workers
# under load; brokers, workers and APIs are killed with SIGKILL and restarted;
# it prints the load held, the faults and what was lost or duplicated.
test-faults: build
	deploy/local/up
	ERRATA_INTEGRATION=1 ERRATA_CLUSTER_FAULT_TESTS=1 $(GO) test $(GOFLAGS) -count=1 -v -timeout 20m -run '^TestClusterFaults$$' ./deploy/faults/

# Unit tests only (integration tests skip without ERRATA_INTEGRATION=1).
test-unit:
	$(GO) test $(GOFLAGS) -count=1 $(PKGS)

# The browser extension's tests (type-check, vitest), both builds, web-ext
# lint, and the end-to-end runs in headless Chromium and Firefox ESR (the
# browsers are installed from Debian by extension/scripts/install-browsers.sh).
test-extension:
	cd extension && npm ci --no-audit --no-fund && npm test && npm run build && npm run lint:firefox && npm run e2e

# Benchmarks print figures next to raw baselines measured in the same run.
bench: build
	deploy/local/up
	ERRATA_INTEGRATION=1 $(GO) test -run '^$$' -bench . -benchtime 1x -count 1 ./projections/... ./events/content/
	ERRATA_INTEGRATION=1 $(GO) test -run '^$$' -bench Orchestration -benchtime 20x -count 1 ./consumers/investigator/
	$(BIN) bench

# golangci-lint (configuration: .golangci.yml) is built from the Go module
# proxy into .local/bin at this version on first use; then the extension's
# type check and web-ext lint of both builds.
GOLANGCI_VERSION := v2.15.0
GOLANGCI         := .local/bin/golangci-lint-$(GOLANGCI_VERSION)

$(GOLANGCI):
	mkdir -p .local/bin/golangci-tmp
	GOBIN=$(CURDIR)/.local/bin/golangci-tmp $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)
	mv .local/bin/golangci-tmp/golangci-lint $@
	rmdir .local/bin/golangci-tmp

lint: $(GOLANGCI)
	gofmt -l . | (! grep .)
	$(GO) vet $(PKGS)
	$(GO) vet -tags testcontainers ./projections/analytics/
	$(GOLANGCI) run $(PKGS)
	cd extension && npm ci --no-audit --no-fund && npm run typecheck && npm run lint:firefox
