// Package faults holds the fault test of a multi-process deployment: a
// three-broker Kafka cluster (deploy/local/cluster), two `errata serve` and
// two `errata worker` processes under a steady mixed load, with brokers,
// workers and API processes killed with SIGKILL one at a time. It runs only
// with ERRATA_CLUSTER_FAULT_TESTS=1 (`make test-faults`); see
// deploy/local/README.md.
package faults
