package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTP counts requests and their latencies by route template (never the raw
// URL, so the label set stays bounded), method and status code.
type HTTP struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewHTTP registers the HTTP metrics on reg.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route template, method and status code.",
			Buckets: durationBuckets,
		}, []string{"route", "method", "code"}),
	}
	reg.MustRegister(h.requests, h.duration)
	return h
}

// Observe records one answered request.
func (h *HTTP) Observe(route, method string, code int, took time.Duration) {
	c := strconv.Itoa(code)
	h.requests.WithLabelValues(route, method, c).Inc()
	h.duration.WithLabelValues(route, method, c).Observe(took.Seconds())
}
