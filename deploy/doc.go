// Package deploy holds the container build (deploy/Dockerfile) and the tests
// that check it and the local Compose stack (docker-compose.yml at the
// repository root) without needing a Docker engine.
//
// The stack runs Kafka in KRaft mode (source of truth), Postgres (serving read
// model), Elasticsearch (search index) and ClickHouse (analytics store), plus
// the Errata services built from one image: the one-shot jobs migrate and
// topics, then api (errata serve) and worker (errata worker).
package deploy
