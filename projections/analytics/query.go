// Package analytics is the analysts' read model in ClickHouse: one row per
// event kind that matters (post versions, views, investigations, claims),
// de-duplicated by event identity, with views for fact-check incidence,
// per-author counts and daily series. Public GraphQL publicMetrics answers
// from it.
package analytics

import "time"

// ProjectorName names the metrics projector (consumer group,
// `errata worker --projectors metrics`, `errata replay --projection metrics`).
const ProjectorName = "metrics"

// Filter selects the complete investigations publicMetrics counts. Empty
// fields do not filter.
type Filter struct {
	// Platform is an events.Platform* value.
	Platform string
	// AuthorID is an events.AuthorID value.
	AuthorID string
	// WindowStart and WindowEnd bound the completion time: [start, end).
	WindowStart, WindowEnd *time.Time
}

// Incidence is the spec's public metric:
// factCheckIncidence = investigated posts with >= 1 flagged claim / investigated posts.
type Incidence struct {
	TotalInvestigatedPosts     int64
	InvestigatedPostsWithFlags int64
	// FactCheckIncidence is 0 when nothing was investigated.
	FactCheckIncidence float64
}
