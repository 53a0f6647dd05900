// Package ops is the operations surface shared by the API and the workers:
// the request middleware (Prometheus metrics by route template and one JSON
// log line per request, never a header), liveness, readiness over bounded
// dependency checks, and the /metrics handler.
package ops
