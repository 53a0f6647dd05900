package checks

import (
	"math"
	"time"
)

// DefaultHalfLife is the age at which a source's recency weight halves:
// three Gregorian years. Tsao asks for a mild decay: a source from last
// month weighs 0.98, one three years old 0.5, one ten years old 0.1. It
// only moves rec_max, 10% of the score; a topic-aware decay (faster for
// fast-changing subjects) would pass a shorter half-life.
const DefaultHalfLife = 3 * year * time.Second

// Recency is the recency weight of a source published at published, as
// seen at reference (the time of the assessment, recorded with it, never
// the clock): 2^(−age/halfLife), rounded to four decimals so the value is
// the same on every platform. A source dated at or after reference weighs
// 1. A non-positive halfLife means DefaultHalfLife. ok is false when the
// published date is unknown (zero): the caller then uses the policy's
// UnknownRecency.
func Recency(published, reference time.Time, halfLife time.Duration) (weight float64, ok bool) {
	if published.IsZero() {
		return 0, false
	}
	if halfLife <= 0 {
		halfLife = DefaultHalfLife
	}
	// Whole seconds from Unix times: Time.Sub saturates at 292 years.
	age := float64(reference.Unix() - published.Unix())
	if age <= 0 {
		return 1, true
	}
	w := math.Exp2(-age / halfLife.Seconds())
	return math.Round(w*1e4) / 1e4, true
}
